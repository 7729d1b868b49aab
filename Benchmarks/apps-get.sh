#!/usr/bin/env bash
# GET /v1/apps/{id} on `kizuna serve` (release build, SQLite) under wrk, against nginx serving the same bytes
# as a static file, in the same run. Prints a Markdown row for RESULTS.md.
# Usage: bash Benchmarks/apps-get.sh [duration-seconds] [connections]
duration=${1:-15}
connections=${2:-64}
source "$(dirname "$0")/common.sh"
kizuna_port=18090
nginx_port=18091
start_kizuna $kizuna_port

# nginx serves the very bytes kizuna answers, with the same content type.
mkdir -p "$work/www/v1/apps"
curl -sf "http://127.0.0.1:$kizuna_port/v1/apps/bench-app" >"$work/www/v1/apps/bench-app"
start_nginx $nginx_port
cmp <(curl -sf "http://127.0.0.1:$nginx_port/v1/apps/bench-app") "$work/www/v1/apps/bench-app"

run() { wrk -t2 -c"$connections" -d"${duration}s" --latency "$1"; }
kizuna_out=$(run "http://127.0.0.1:$kizuna_port/v1/apps/bench-app")
nginx_out=$(run "http://127.0.0.1:$nginx_port/v1/apps/bench-app")
k=$(rps "$kizuna_out"); n=$(rps "$nginx_out")
echo "$kizuna_out" >&2; echo "$nginx_out" >&2
printf '| %s | GET /v1/apps/{id} | %s | %s | %s | %s | %.2f |\n' "$(date -u +%F)" "$k" "$(p99 "$kizuna_out")" "$n" "$(p99 "$nginx_out")" "$(echo "$k / $n" | bc -l)"
