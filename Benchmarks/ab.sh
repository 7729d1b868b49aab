#!/usr/bin/env bash
# Whether a change pays: two kizuna builds answering the same GET route, side by side on core 0 (each with its own
# fresh SQLite store holding bench-app, the same flags and log level), and bare Hummingbird (HTTPPeer/) serving the same bytes, in
# alternating rounds (Benchmarks/common.sh's method). Prints medians and per-round ratios: A and B against bare
# Hummingbird, and B against A — the line that says whether B is faster.
# Usage: bash Benchmarks/ab.sh BIN_A BIN_B [rounds] [seconds-per-side-per-round] [path]
#   e.g. bash Benchmarks/ab.sh /tmp/kizuna-before .build/release/kizuna 9 5 /health/live
set -euo pipefail
bin_a=$(realpath "$1")
bin_b=$(realpath "$2")
rounds=${3:-9}
seconds=${4:-5}
path=${5:-/health/live}
export KIZUNA_BIN=$bin_a
source "$(dirname "$0")/common.sh"
# At the default log level (info), as device-endpoints.sh measures: the request log is part of what a route costs.
KIZUNA_BENCH_LOG_LEVEL=${KIZUNA_BENCH_LOG_LEVEL:-info}
a_port=18120
b_port=18121
peer_port=18122
start_kizuna $a_port --device-rate-limit 10000000
# B the same way, with its own store and log (and bench-app registered, so app routes compare too).
kizuna=$bin_b
kizuna_dir=$work/b
start_kizuna $b_port --device-rate-limit 10000000
mkdir -p "$(dirname "$work/www$path")"
curl -sf "http://127.0.0.1:$a_port$path" >"$work/www$path"
start_http_peer $peer_port "$work/www"
compare_rounds "$rounds" "$seconds" 64 "" A="http://127.0.0.1:$a_port$path" B="http://127.0.0.1:$b_port$path" \
    bare="http://127.0.0.1:$peer_port$path" 2>/dev/null
echo "| build | req/s | p99 | / bare Hummingbird (per round) |"
echo "|---|---|---|---|"
echo "| A | $(round_summary A bare) |"
echo "| B | $(round_summary B bare) |"
echo "| bare Hummingbird | $(round_summary bare) | |"
echo
echo "B / A: $(round_summary B A | cut -d'|' -f3-)"
