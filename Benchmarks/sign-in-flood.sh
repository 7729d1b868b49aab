#!/usr/bin/env bash
# Do device routes keep their throughput while sign-ins flood the server? `kizuna serve` (release build, SQLite,
# the default scrypt cost) pinned to CPU 0, the load generators to CPU 1. Rounds alternate:
#   quiet: wrk POSTs config:fetch alone;
#   flood: the same, while a second wrk POSTs sign-ins (right password, one account) as fast as it can.
# The ratio flood/quiet of config:fetch requests per second is the figure; the flood's own numbers show how many
# sign-ins were hashed and how many were refused 503 (past --max-pending-password-checks) instead of queueing.
# Prints Markdown rows for RESULTS.md.
# Usage: bash Benchmarks/sign-in-flood.sh [seconds-per-round] [device-connections] [flood-connections] [rounds]
duration=${1:-10}
connections=${2:-32}
flood_connections=${3:-64}
rounds=${4:-3}
source "$(dirname "$0")/common.sh"
port=18095
# Every wrk request comes from one install: lift the per-install device limit for the measurement.
start_kizuna $port --device-rate-limit 10000000 ${KIZUNA_SERVE_FLAGS:-}
taskset -a -cp 0 "$(pgrep -f "serve --port $port" | head -1)" >/dev/null
base=http://127.0.0.1:$port
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

credentials='{"identifier":"bench@example.com","password":"correct horse battery"}'
curl -sf -H 'Content-Type: application/json' -d "$credentials" "$base/v1/auth/sign-up" >/dev/null
echo '{"parameters":{"greeting":{"type":"string","default":"hello"},"limit":{"type":"number","default":20}}}' >"$work/template.json"
"$kizuna" config publish -f "$work/template.json" -m bench >/dev/null
cat >"$work/sign-in.lua" <<LUA
wrk.method = "POST"
wrk.body = '$credentials'
wrk.headers["Content-Type"] = "application/json"
LUA
cat >"$work/fetch.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"appVersion":"3.9.2","platform":"ios","osVersion":"17.5","locale":"ja-JP","installId":"bench-install"}'
wrk.headers["Content-Type"] = "application/json"
LUA
non2xx() { awk '/Non-2xx/ {print $5; found=1} END {if (!found) print 0}' <<<"$1"; }
timeouts() { awk '/Socket errors/ {gsub(",", ""); print $NF; found=1} END {if (!found) print 0}' <<<"$1"; }
requests() { awk '/requests in/ {print $1}' <<<"$1"; }

for round in $(seq 1 "$rounds"); do
    quiet=$(taskset -c 1 wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$work/fetch.lua" "$base/v1/apps/bench-app/config:fetch")
    # Clients wait up to 30 s for an answer, as the SDK does.
    taskset -c 1 wrk -t1 -c"$flood_connections" -d"$((duration + 2))s" --timeout 30s -s "$work/sign-in.lua" "$base/v1/auth/sign-in" >"$work/flood.out" &
    flood_pid=$!
    sleep 1  # let the flood fill the hashing queue before measuring
    busy=$(taskset -c 1 wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$work/fetch.lua" "$base/v1/apps/bench-app/config:fetch")
    wait $flood_pid
    flood=$(cat "$work/flood.out")
    total=$(requests "$flood")
    refused=$(non2xx "$flood")
    signed=$(awk -v t="$total" -v r="$refused" -v d="$((duration + 2))" 'BEGIN {printf "%.1f", (t - r) / d}')
    echo "$(rps "$quiet") $(rps "$busy") $signed $refused $total" >>"$work/rounds"
    echo "| round $round | quiet $(rps "$quiet") /s (p99 $(p99 "$quiet")) | during flood $(rps "$busy") /s (p99 $(p99 "$busy")) | ratio $(awk '{printf "%.2f", $2 / $1}' <<<"$(rps "$quiet") $(rps "$busy")") | sign-ins: ${signed}/s signed in, ${refused} answered 503, $(timeouts "$flood") timed out (30 s) |"
done
echo "| median | $(awk '{print $1}' "$work/rounds" | median) /s | $(awk '{print $2}' "$work/rounds" | median) /s | $(awk '{print $2 / $1}' "$work/rounds" | median) | $(awk '{print $3}' "$work/rounds" | median) sign-ins/s |"
