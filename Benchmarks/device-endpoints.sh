#!/usr/bin/env bash
# POST /v1/apps/{app}/config:fetch and gate:check, and GET /health/live (the middleware stack alone), on `kizuna serve`
# (release build, SQLite) against three peers answering the same requests with the same bytes in the same run: a bare
# Hummingbird 2 app (HTTPPeer/: the framework with no middleware), nginx serving static files, and SwiftNIO alone
# (HTTPPeer/ --raw: no HTTP library, the whole answer's bytes written for each request's end) — the floor under any
# server on SwiftNIO, so the last column says how far from nginx this machine lets one get. The template has 20
# parameters and 6 conditions (versions, locale, percentage, attribute, weekly window, all/any/not).
# Method (Benchmarks/common.sh): each server on core 0, wrk -t1 on core 1, the three peers alternating round by round;
# medians, and per-round ratios against the bare app and nginx. Then the audience run: the same config:fetch with a
# new install id on every request (ids from a wrk Lua counter) against one install id, alternating, with kizuna's RSS
# before and after.
# Prints Markdown rows for RESULTS.md.
# Usage: bash Benchmarks/device-endpoints.sh [seconds-per-side-per-round] [connections] [rounds] [audience-seconds]
duration=${1:-6}
connections=${2:-64}
rounds=${3:-5}
audience_seconds=${4:-60}
source "$(dirname "$0")/common.sh"
kizuna_port=18092
nginx_port=18093
peer_port=18094
nio_port=18095
# Throttling is per install and every wrk request comes from one install: lift the limit for the measurement.
# At the default log level (info): the request log is part of what a route costs.
KIZUNA_BENCH_LOG_LEVEL=${KIZUNA_BENCH_LOG_LEVEL:-info}
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
# A new install id on every request: the device's body with a counter in it.
cat >"$work/audience.lua" <<'LUA'
counter = 0
request = function()
    counter = counter + 1
    local body = string.format('{"appVersion":"3.9.2","buildNumber":"451","platform":"ios","osVersion":"17.5","locale":"ja-JP","country":"JP","installId":"install-%d","attributes":{"plan":"pro"}}', counter)
    return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
LUA

# nginx and the bare app serve the very bytes kizuna answers, with the same content type, to the same requests
# (nginx's static files answer POST with 405; error_page turns that into the file with 200).
mkdir -p "$work/www/v1/apps/bench-app" "$work/www/health"
for route in config:fetch gate:check; do
    curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$kizuna_port/v1/apps/bench-app/$route" \
        >"$work/www/v1/apps/bench-app/$route"
done
curl -sf "http://127.0.0.1:$kizuna_port/health/live" >"$work/www/health/live"
start_nginx $nginx_port 'error_page 405 =200 $uri;'
start_http_peer $peer_port "$work/www"
start_http_peer $nio_port "$work/www" --raw

echo "| route | kizuna req/s | p99 | bare Hummingbird req/s | p99 | nginx req/s | p99 | kizuna / bare (per round) | kizuna / nginx (per round) | p99 kizuna / bare | SwiftNIO alone req/s | p99 | SwiftNIO alone / nginx (per round) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for route in v1/apps/bench-app/config:fetch v1/apps/bench-app/gate:check health/live; do
    lua=$work/post.lua
    [ "$route" = health/live ] && lua=""
    for url in "http://127.0.0.1:$nginx_port/$route" "http://127.0.0.1:$peer_port/$route" "http://127.0.0.1:$nio_port/$route"; do
        if [ -n "$lua" ]; then
            cmp "$work/www/$route" <(curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "$url")
        else
            cmp "$work/www/$route" <(curl -sf "$url")
        fi
    done
    compare_rounds "$rounds" "$duration" "$connections" "$lua" \
        kizuna="http://127.0.0.1:$kizuna_port/$route" bare="http://127.0.0.1:$peer_port/$route" nginx="http://127.0.0.1:$nginx_port/$route" \
        nio="http://127.0.0.1:$nio_port/$route"
    k=$(round_summary kizuna bare)
    kn=$(round_summary kizuna nginx)
    p99_ratio=$(paste "$work/rounds/kizuna.p99" "$work/rounds/bare.p99" | awk '{ printf "%.3f\n", $1 / $2 }' >"$work/rounds/p99.ratio"; median_of "$work/rounds/p99.ratio")
    nn=$(round_summary nio nginx)
    printf '| %s %s (%s B) | %s | %s | %s | %s | %s | %.2f | %s | %s |\n' "$([ -n "$lua" ] && echo POST || echo GET)" "/$route" "$(wc -c <"$work/www/$route")" \
        "$(cut -d'|' -f1-2 <<<"$k")" "$(round_summary bare)" "$(round_summary nginx)" "$(cut -d'|' -f3 <<<"$k" | sed 's/^ //')" \
        "$(cut -d'|' -f3 <<<"$kn" | sed 's/^ //')" "$p99_ratio" "$(cut -d'|' -f1-2 <<<"$nn")" "$(cut -d'|' -f3 <<<"$nn" | sed 's/^ //')"
done

# The audience: one install against a new one per request, alternating, two rounds each.
rss() { awk '/VmRSS/ {print $2 / 1024}' "/proc/$kizuna_pid/status"; }
rss_before=$(rss)
compare_rounds 2 "$audience_seconds" "$connections" "$work/audience.lua" many="http://127.0.0.1:$kizuna_port/v1/apps/bench-app/config:fetch"
many_requests=$(awk '{ s += $1 } END { printf "%.0f", s * '"$audience_seconds"' }' "$work/rounds/many.rps")
cp "$work/rounds/many.rps" "$work/many.rps"; cp "$work/rounds/many.p99" "$work/many.p99"
compare_rounds 2 "$audience_seconds" "$connections" "$work/post.lua" one="http://127.0.0.1:$kizuna_port/v1/apps/bench-app/config:fetch"
cp "$work/many.rps" "$work/rounds/many.rps"; cp "$work/many.p99" "$work/rounds/many.p99"
echo
echo "| config:fetch audience | req/s | p99 | vs one install | distinct installs | RSS before → after |"
echo "|---|---|---|---|---|---|"
printf '| one install id | %s | 1.00 | 1 | |\n' "$(round_summary one)"
printf '| a new install id per request | %s | %s | %.1f MB → %.1f MB |\n' "$(round_summary many one)" "$many_requests" "$rss_before" "$(rss)"
