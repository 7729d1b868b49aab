#!/usr/bin/env bash
# The admin console's heaviest pages against the JSON admin routes that feed them, on `kizuna serve` (release build,
# SQLite), in the same run (issue 20):
#   config editor: GET /console/apps/{app}/config — a template of 200 parameters (every fourth with a conditional
#       value) and 5 conditions, rendered as tables and the editor — against GET /v1/admin/apps/{app}/config, the
#       document it is made from (the page also reads the history: two admin calls in process);
#   data browser: GET /console/apps/{app}/data/Task — 50 records of a 5-field model — against the operator's
#       GraphQL list query for the same page (POST /v1/admin/apps/{app}/graphql, listTasks(limit: 50)); the page
#       also reads the app and the live schema and parses the schema's SDL.
# The console side is signed in with a console session cookie, the JSON side with the admin token. Method
# (common.sh): kizuna on core 0, wrk -t1 on core 1, the four measurements alternating round by round; medians and
# per-round ratios. With the server's core saturated, 1000 / req/s is the server's CPU time per request in ms.
# Prints Markdown rows for RESULTS.md on stdout.
# Usage: bash Benchmarks/console-pages.sh [seconds-per-side-per-round] [connections] [rounds]
duration=${1:-5}
connections=${2:-16}
rounds=${3:-5}
source "$(dirname "$0")/common.sh"
port=18120
start_kizuna $port
base="http://127.0.0.1:$port"
auth=(-H "Authorization: Bearer $KIZUNA_TOKEN" -H "Content-Type: application/json")

# 200 parameters, 5 conditions.
python3 - >"$work/template.json" <<'PY'
import json
conditions = [{"name": f"c{i}", "when": {"appVersion": {">=": f"{i + 1}.0"}}} for i in range(5)]
parameters = {}
for i in range(200):
    parameter = {"type": "string", "default": f"value {i}", "description": f"Parameter number {i}", "group": f"group{i % 10}"}
    if i % 4 == 0:
        parameter["conditionalValues"] = {f"c{i % 5}": f"conditional {i}"}
    parameters[f"param{i:03d}"] = parameter
print(json.dumps({"document": {"conditions": conditions, "parameters": parameters}, "message": "bench"}))
PY
curl -sf "${auth[@]}" -H 'If-Match: *' --data-binary @"$work/template.json" "$base/v1/admin/apps/bench-app/config:publish" >/dev/null

# A model and 50 records.
sdl='type Task @model @auth(rules: [{ allow: private }]) { title: String! done: Boolean points: Int notes: String tags: [String] }'
python3 -c 'import json,sys; print(json.dumps({"document": {"sdl": sys.argv[1]}, "message": "bench"}))' "$sdl" >"$work/schema.json"
curl -sf "${auth[@]}" -H 'If-Match: *' --data-binary @"$work/schema.json" "$base/v1/admin/apps/bench-app/schema:publish" >/dev/null
for i in $(seq 1 50); do
    curl -sf "${auth[@]}" --data-binary "{\"query\":\"mutation { createTask(input: { title: \\\"task $i\\\", points: $i, notes: \\\"a note about task $i\\\", tags: [\\\"a\\\", \\\"b\\\"] }) { id } }\"}" \
        "$base/v1/admin/apps/bench-app/graphql" >/dev/null
done

# A console session, as a browser gets one.
cookie=$(curl -sf -o /dev/null -D - -H "Origin: $base" --data-urlencode "token=$KIZUNA_TOKEN" "$base/console/sign-in" |
    awk -F'[: ;]+' 'tolower($1) == "set-cookie" {print $2; exit}')
[ -n "$cookie" ] || { echo "no console session" >&2; exit 1; }

# Every measured request answers 200 with the bytes expected, once before measuring.
curl -sf -H "Cookie: $cookie" "$base/console/apps/bench-app/config" | grep -q 'param199' || { echo "config page" >&2; exit 1; }
curl -sf -H "Cookie: $cookie" "$base/console/apps/bench-app/data/Task" | grep -q '>task 50<' || { echo "data page" >&2; exit 1; }
list_query='{"query":"{ listTasks(limit: 50, sortDirection: DESC) { items { id title done points notes tags createdAt updatedAt _version _deleted } nextToken } }"}'
curl -sf "${auth[@]}" --data-binary "$list_query" "$base/v1/admin/apps/bench-app/graphql" | grep -q '"task 50"' || { echo "graphql" >&2; exit 1; }
cat >"$work/list.lua" <<LUA
wrk.method = "POST"
wrk.body = [[$list_query]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $KIZUNA_TOKEN"
LUA
cat >"$work/check.lua" <<'LUA'
local bad = 0
response = function(status, headers, body) if status ~= 200 then bad = bad + 1 end end
done = function() if bad > 0 then io.stderr:write("non-200 answers: " .. bad .. "\n"); os.exit(1) end end
LUA
cat "$work/check.lua" >>"$work/list.lua"

mkdir -p "$work/rounds"
measure() {  # LABEL wrk-arguments…
    local label=$1
    shift
    local out
    out=$(taskset -c "$load_cpu" wrk -t1 -c"$connections" -d"${duration}s" --latency "$@")
    echo "$out" >&2
    rps "$out" >>"$work/rounds/$label.rps"
    p99_ms "$out" >>"$work/rounds/$label.p99"
}
for round in $(seq 1 "$rounds"); do
    measure config-page -s "$work/check.lua" -H "Cookie: $cookie" "$base/console/apps/bench-app/config"
    measure config-json -s "$work/check.lua" -H "Authorization: Bearer $KIZUNA_TOKEN" "$base/v1/admin/apps/bench-app/config"
    measure data-page -s "$work/check.lua" -H "Cookie: $cookie" "$base/console/apps/bench-app/data/Task"
    measure data-json -s "$work/list.lua" "$base/v1/admin/apps/bench-app/graphql"
    echo "round $round done" >&2
done

ms() { awk '{ printf "%.2f", 1000 / $1 }' <<<"$(median_of "$work/rounds/$1.rps")"; }
echo "| page | page req/s | p99 | server ms/request | JSON route req/s | p99 | server ms/request | page / JSON (per round) |"
echo "|---|---|---|---|---|---|---|---|"
for pair in "config editor, 200 parameters (config page vs GET /v1/admin/apps/{app}/config):config-page:config-json" \
    "data browser, 50 records (data page vs POST …/graphql listTasks):data-page:data-json"; do
    IFS=: read -r name page json <<<"$pair"
    summary=$(round_summary "$page" "$json")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$(cut -d'|' -f1-2 <<<"$summary" | sed 's/ | / | /')" "$(ms "$page")" \
        "$(round_summary "$json")" "$(ms "$json")" "$(cut -d'|' -f3 <<<"$summary" | sed 's/^ //')"
done
