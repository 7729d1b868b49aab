# Shared by the benchmark scripts: sourced, not run. Sets up a work directory (removed on exit with every
# process started here), installs wrk and nginx if missing, builds kizuna in release mode (or takes $KIZUNA_BIN),
# and provides:
#   start_kizuna PORT [serve flags…]  kizuna on PORT with a fresh SQLite store (or the empty PostgreSQL database a
#                                     --database-url flag names); exports KIZUNA_TOKEN, KIZUNA_SERVER and KIZUNA_APP,
#                                     and registers the app bench-app
#   stop_kizuna / restart_kizuna      stop it (SIGTERM, waits for the exit), start it again with the same port, flags
#                                     and store; $kizuna_pid is the running server's pid
#   start_nginx PORT [directives…]    nginx (1 worker, no access log) serving $work/www as application/json
#   rps OUTPUT / p99 OUTPUT           requests per second / 99th-percentile latency from wrk --latency output
#   p99_ms OUTPUT                     the same latency as a number of milliseconds (wrk prints us, ms or s)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user and must read the served files
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/nginx"

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
    : >"$work/serve.out"
    restart_kizuna
    KIZUNA_TOKEN=$(grep -o 'kza_[A-Za-z0-9_-]*' "$work/serve.out" | head -1)
    export KIZUNA_TOKEN KIZUNA_SERVER=http://127.0.0.1:$kizuna_port KIZUNA_APP=bench-app
    "$kizuna" app add --id bench-app --name "Bench App" --platform ios --bundle-id com.example.bench --team-id ABCDE12345 \
        --store-url https://apps.apple.com/app/id1 >/dev/null
}

restart_kizuna() {
    "$kizuna" serve --port "$kizuna_port" --data-dir "$work/data" --log-level ${KIZUNA_BENCH_LOG_LEVEL:-error} "${kizuna_flags[@]}" >>"$work/serve.out" 2>>"$work/serve.err" &
    kizuna_pid=$!
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$kizuna_port/health/ready" >/dev/null && break; sleep 0.1; done
    if ! curl -sf "http://127.0.0.1:$kizuna_port/health/ready" >/dev/null; then
        echo "kizuna is not ready; its log:" >&2
        cat "$work/serve.err" >&2
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
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
    for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
}

rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }
p99() { awk '$1 == "99%" {print $2}' <<<"$1"; }
p99_ms() {
    awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else { sub(/s$/, "", v); v *= 1000 }; print v }' <<<"$1"
}
