#!/usr/bin/env bash
# GET /v1/apps/{id} (the public app record, read from SQLite through the pool) on `kizuna serve` (release build) against
# two peers answering the same request with the same bytes in the same run: a bare Hummingbird 2 app (HTTPPeer/) and
# nginx serving a static file. Method (common.sh): each server on core 0, wrk -t1 on core 1, the peers alternating
# round by round; medians and per-round ratios. kizuna at its default log level (info).
# Prints a Markdown row for RESULTS.md.
# Usage: bash Benchmarks/apps-get.sh [seconds-per-side-per-round] [connections] [rounds]
duration=${1:-5}
connections=${2:-64}
rounds=${3:-5}
source "$(dirname "$0")/common.sh"
kizuna_port=18090
nginx_port=18091
peer_port=18096
KIZUNA_BENCH_LOG_LEVEL=${KIZUNA_BENCH_LOG_LEVEL:-info}
start_kizuna $kizuna_port

# The peers serve the very bytes kizuna answers, with the same content type.
mkdir -p "$work/www/v1/apps"
curl -sf "http://127.0.0.1:$kizuna_port/v1/apps/bench-app" >"$work/www/v1/apps/bench-app"
start_nginx $nginx_port
start_http_peer $peer_port "$work/www"
for port in $nginx_port $peer_port; do cmp <(curl -sf "http://127.0.0.1:$port/v1/apps/bench-app") "$work/www/v1/apps/bench-app"; done

compare_rounds "$rounds" "$duration" "$connections" "" kizuna="http://127.0.0.1:$kizuna_port/v1/apps/bench-app" \
    bare="http://127.0.0.1:$peer_port/v1/apps/bench-app" nginx="http://127.0.0.1:$nginx_port/v1/apps/bench-app"
echo "| route | kizuna req/s | p99 | bare Hummingbird req/s | p99 | nginx req/s | p99 | kizuna / bare (per round) | kizuna / nginx (per round) |"
echo "|---|---|---|---|---|---|---|---|---|"
k=$(round_summary kizuna bare)
printf '| GET /v1/apps/{id} (%s B) | %s | %s | %s | %s | %s |\n' "$(wc -c <"$work/www/v1/apps/bench-app")" "$(cut -d'|' -f1-2 <<<"$k")" \
    "$(round_summary bare)" "$(round_summary nginx)" "$(cut -d'|' -f3 <<<"$k" | sed 's/^ //')" \
    "$(round_summary kizuna nginx | cut -d'|' -f3 | sed 's/^ //')"
