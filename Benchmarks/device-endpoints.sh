#!/usr/bin/env bash
# POST /v1/apps/{app}/config:fetch and gate:check on `kizuna serve` (release build, SQLite) under wrk, against
# nginx serving the same response bytes as static files to the same POSTs, in the same run. The template has 20
# parameters and 6 conditions (versions, locale, percentage, attribute, weekly window, all/any/not).
# The machine is shared (CPU steal comes and goes), so each route is measured in several rounds that alternate
# kizuna and nginx; the row reports the medians and the median of the per-round ratios.
# Prints one Markdown row per route for RESULTS.md.
# Usage: bash Benchmarks/device-endpoints.sh [seconds-per-side-per-round] [connections] [rounds]
duration=${1:-15}
connections=${2:-64}
rounds=${3:-5}
source "$(dirname "$0")/common.sh"
kizuna_port=18092
nginx_port=18093
# Throttling is per install and every wrk request comes from one install: lift the limit for the measurement.
start_kizuna $kizuna_port --device-rate-limit 10000000

python3 - >"$work/template.json" <<'PY'
import json
conditions = [
    {"name": "new", "when": {"appVersion": {">=": "3.10"}}},
    {"name": "ja", "when": {"locale": ["ja"]}},
    {"name": "rollout", "when": {"percent": {"seed": "checkout", "from": 0, "to": 25}}},
    {"name": "pro", "when": {"attribute": {"name": "plan", "string": {"==": "pro"}}}},
    {"name": "weekend", "when": {"weekly": {"days": ["sat", "sun"], "from": "00:00", "until": "23:59", "timeZone": "Asia/Tokyo"}}},
    {"name": "mixed", "when": {"all": [{"osVersion": {">=": "17"}}, {"any": [{"country": ["JP"]}, {"not": {"platform": ["android"]}}]}]}},
]
names = [c["name"] for c in conditions]
parameters = {}
for i in range(20):
    kind = ["string", "number", "bool", "json"][i % 4]
    default = {"string": f"value {i}", "number": i * 1.5, "bool": False, "json": {"limit": i, "tags": ["a", "b"]}}[kind]
    alt = {"string": f"other {i}", "number": i * 3, "bool": True, "json": {"limit": i * 2, "tags": ["c"]}}[kind]
    parameters[f"param{i:02d}"] = {"type": kind, "default": default, "conditionalValues": {names[i % 6]: alt, names[(i + 1) % 6]: default}}
print(json.dumps({"conditions": conditions, "parameters": parameters}))
PY
echo '{"minimumVersion":"3.0","recommendedVersion":"3.10","blockedVersions":["3.5.1",{">=":"3.6","<":"3.6.2"}],"minimumOSVersion":{"version":"16.0","deadline":"2030-01-01T00:00:00Z"}}' >"$work/policy.json"
"$kizuna" config publish -f "$work/template.json" -m bench >/dev/null
"$kizuna" gate publish -f "$work/policy.json" -m bench >/dev/null

body='{"appVersion":"3.9.2","buildNumber":"451","platform":"ios","osVersion":"17.5","locale":"ja-JP","country":"JP","installId":"5f0c8d2e-bench","attributes":{"plan":"pro"}}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

# nginx serves the very bytes kizuna answers, with the same content type, to the same POST requests (static
# files answer POST with 405; error_page turns that into the file with 200).
mkdir -p "$work/www/v1/apps/bench-app"
for route in config:fetch gate:check; do
    curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$kizuna_port/v1/apps/bench-app/$route" \
        >"$work/www/v1/apps/bench-app/$route"
done
start_nginx $nginx_port 'error_page 405 =200 $uri;'

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for route in config:fetch gate:check; do
    path=/v1/apps/bench-app/$route
    cmp <(curl -sf -X POST -d "$body" "http://127.0.0.1:$nginx_port$path") \
        <(curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$kizuna_port$path")
    : >"$work/k"; : >"$work/n"; : >"$work/r"; : >"$work/kp"; : >"$work/np"
    for _ in $(seq 1 "$rounds"); do
        kizuna_out=$(wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/post.lua" "http://127.0.0.1:$kizuna_port$path")
        nginx_out=$(wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/post.lua" "http://127.0.0.1:$nginx_port$path")
        echo "$kizuna_out" >&2; echo "$nginx_out" >&2
        k=$(rps "$kizuna_out"); n=$(rps "$nginx_out")
        echo "$k" >>"$work/k"; echo "$n" >>"$work/n"; echo "$k / $n" | bc -l >>"$work/r"
        p99_ms "$kizuna_out" >>"$work/kp"; p99_ms "$nginx_out" >>"$work/np"
        echo "round: $route kizuna $k req/s, nginx $n req/s" >&2
    done
    printf '| %s | POST %s (%s B) | %s | %sms | %s | %sms | %.2f (%s) |\n' "$(date -u +%F)" "$route" "$(wc -c <"$work/www$path")" \
        "$(median <"$work/k")" "$(median <"$work/kp")" "$(median <"$work/n")" "$(median <"$work/np")" "$(median <"$work/r")" \
        "$(xargs printf '%.2f ' <"$work/r" | sed 's/ $//')"
done
