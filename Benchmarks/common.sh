# Shared by the benchmark scripts: sourced, not run. Sets up a work directory (removed on exit with every
# process started here), installs wrk and nginx if missing, builds kizuna in release mode (or takes $KIZUNA_BIN),
# and provides:
#   start_kizuna PORT [serve flags…]  kizuna on PORT with a fresh SQLite store (or the empty PostgreSQL database a
#                                     --database-url flag names); exports KIZUNA_TOKEN, KIZUNA_SERVER and KIZUNA_APP,
#                                     and registers the app bench-app. Its store and log are under $kizuna_dir ($work
#                                     unless set: a second server, as ab.sh starts, gets a directory of its own)
#   stop_kizuna / restart_kizuna      stop it (SIGTERM, waits for the exit), start it again with the same port, flags
#                                     and store; $kizuna_pid is the running server's pid
#   start_nginx PORT [directives…]    nginx (1 worker, no access log) serving $work/www as application/json
#   start_http_peer PORT DIR [--raw]  the bare Hummingbird app (HTTPPeer/) answering each file under DIR at its path;
#                                     with --raw, SwiftNIO alone answering the same (no HTTP library)
#   compare_rounds ROUNDS SECONDS CONNECTIONS LUA LABEL=URL…
#                                     wrk (one thread, on core 1) against each URL in turn, ROUNDS times over, the
#                                     peers alternating; each label's per-round req/s and p99 go to $work/rounds/
#   round_summary LABEL [REFERENCE]   "median req/s | median p99 ms" and, against REFERENCE, "| median ratio (per round)"
#   rps OUTPUT / p99 OUTPUT           requests per second / 99th-percentile latency from wrk --latency output
#   p99_ms OUTPUT                     the same latency as a number of milliseconds (wrk prints us, ms or s)
# Every server started here runs on core 0 (BENCH_SERVER_CPU) and every load generator on core 1 (BENCH_LOAD_CPU):
# this machine's CPU steal makes anything else noise. A server is started under taskset, so all its threads inherit
# the core (taskset -p on a running process moves only its main thread).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user and must read the served files
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/nginx"

server_cpu=${BENCH_SERVER_CPU:-0}
kizuna_dir=$work
load_cpu=${BENCH_LOAD_CPU:-1}
command -v wrk >/dev/null && command -v nginx >/dev/null || { apt-get update -qq; apt-get install -y -qq wrk nginx >/dev/null; }
# KIZUNA_BIN measures another build instead (an earlier commit's, for a before/after in the same conditions).
if [ -n "${KIZUNA_BIN:-}" ]; then
    kizuna=$KIZUNA_BIN
else
    swift build -c release --product kizuna >/dev/null
    kizuna=$(swift build -c release --show-bin-path)/kizuna
fi

start_kizuna() {
    kizuna_port=$1
    shift
    kizuna_flags=("$@")
    mkdir -p "$kizuna_dir"
    : >"$kizuna_dir/serve.out"
    restart_kizuna
    KIZUNA_TOKEN=$(grep -o 'kza_[A-Za-z0-9_-]*' "$kizuna_dir/serve.out" | head -1)
    export KIZUNA_TOKEN KIZUNA_SERVER=http://127.0.0.1:$kizuna_port KIZUNA_APP=bench-app
    "$kizuna" app add --id bench-app --name "Bench App" --platform ios --bundle-id com.example.bench --team-id ABCDE12345 \
        --store-url https://apps.apple.com/app/id1 >/dev/null
}

restart_kizuna() {
    taskset -c "$server_cpu" "$kizuna" serve --port "$kizuna_port" --data-dir "$kizuna_dir/data" --log-level ${KIZUNA_BENCH_LOG_LEVEL:-error} "${kizuna_flags[@]}" >>"$kizuna_dir/serve.out" 2>>"$kizuna_dir/serve.err" &
    kizuna_pid=$!
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$kizuna_port/health/ready" >/dev/null && break; sleep 0.1; done
    if ! curl -sf "http://127.0.0.1:$kizuna_port/health/ready" >/dev/null; then
        echo "kizuna is not ready; its log:" >&2
        cat "$kizuna_dir/serve.err" >&2
        return 1
    fi
}

stop_kizuna() {
    kill "$kizuna_pid" 2>/dev/null || true
    wait "$kizuna_pid" 2>/dev/null || true
}

start_nginx() {
    local port=$1
    shift
    chmod -R a+rX "$work/www"
    cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    types { }
    default_type "application/json; charset=utf-8";
    server { listen 127.0.0.1:$port; root $work/www; $* }
}
CONF
    taskset -c "$server_cpu" nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
    for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
}

rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }
p99() { awk '$1 == "99%" {print $2}' <<<"$1"; }
p99_ms() {
    awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else { sub(/s$/, "", v); v *= 1000 }; print v }' <<<"$1"
}

# The bare Hummingbird peer, built in release mode here (or $HTTP_PEER_BIN).
start_http_peer() {
    local port=$1 dir=$2
    shift 2
    if [ -z "${http_peer:-}" ]; then
        if [ -n "${HTTP_PEER_BIN:-}" ]; then
            http_peer=$HTTP_PEER_BIN
        else
            swift build -c release --package-path Benchmarks/HTTPPeer --product http-peer >/dev/null
            http_peer=$(swift build -c release --package-path Benchmarks/HTTPPeer --show-bin-path)/http-peer
        fi
    fi
    taskset -c "$server_cpu" "$http_peer" "$port" "$dir" "$@" >"$work/http-peer-$port.out" 2>&1 &
    http_peer_pid=$!
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
}

compare_rounds() {
    local rounds=$1 seconds=$2 connections=$3 lua=$4
    shift 4
    mkdir -p "$work/rounds"
    local pair label url out
    for pair in "$@"; do : >"$work/rounds/${pair%%=*}.rps"; : >"$work/rounds/${pair%%=*}.p99"; done
    for round in $(seq 1 "$rounds"); do
        for pair in "$@"; do
            label=${pair%%=*}
            url=${pair#*=}
            out=$(taskset -c "$load_cpu" wrk -t1 -c"$connections" -d"${seconds}s" --latency ${lua:+-s "$lua"} "$url")
            echo "$out" >&2
            rps "$out" >>"$work/rounds/$label.rps"
            p99_ms "$out" >>"$work/rounds/$label.p99"
            echo "round $round: $label $(rps "$out") req/s, p99 $(p99 "$out")" >&2
        done
    done
}

median_of() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

round_summary() {
    local label=$1 reference=${2:-}
    printf '%.0f | %.2fms' "$(median_of "$work/rounds/$label.rps")" "$(median_of "$work/rounds/$label.p99")"
    if [ -n "$reference" ]; then
        paste "$work/rounds/$label.rps" "$work/rounds/$reference.rps" | awk '{ printf "%.3f\n", $1 / $2 }' >"$work/rounds/$label-$reference.ratio"
        printf ' | %.2f (%s)' "$(median_of "$work/rounds/$label-$reference.ratio")" "$(xargs printf '%.2f ' <"$work/rounds/$label-$reference.ratio" | sed 's/ $//')"
    fi
}
