#!/usr/bin/env bash
# GET /v1/apps/{id} on `kizuna serve` (release build, SQLite) under wrk, against nginx serving the same bytes
# as a static file, in the same run. Prints a Markdown row for RESULTS.md.
# Usage: bash Benchmarks/apps-get.sh [duration-seconds] [connections]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
connections=${2:-64}
kizuna_port=18090
nginx_port=18091
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user and must read the served file
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

command -v wrk >/dev/null && command -v nginx >/dev/null || { apt-get update -qq; apt-get install -y -qq wrk nginx >/dev/null; }
swift build -c release --product kizuna >/dev/null
kizuna=$(swift build -c release --show-bin-path)/kizuna

"$kizuna" serve --port $kizuna_port --data-dir "$work/data" --log-level error >"$work/serve.out" 2>"$work/serve.err" &
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$kizuna_port/health/ready" >/dev/null && break; sleep 0.1; done
token=$(grep -o 'kza_[A-Za-z0-9_-]*' "$work/serve.out" | head -1)
KIZUNA_TOKEN=$token KIZUNA_SERVER=http://127.0.0.1:$kizuna_port "$kizuna" app add --id bench-app --name "Bench App" \
    --platform ios --bundle-id com.example.bench --team-id ABCDE12345 --store-url https://apps.apple.com/app/id1 >/dev/null

# nginx serves the very bytes kizuna answers, with the same content type.
mkdir -p "$work/www/v1/apps" "$work/nginx"
curl -sf "http://127.0.0.1:$kizuna_port/v1/apps/bench-app" >"$work/www/v1/apps/bench-app"
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
    server { listen 127.0.0.1:$nginx_port; root $work/www; }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$nginx_port/v1/apps/bench-app" >/dev/null && break; sleep 0.1; done
cmp <(curl -sf "http://127.0.0.1:$nginx_port/v1/apps/bench-app") "$work/www/v1/apps/bench-app"

run() { wrk -t2 -c"$connections" -d"${duration}s" --latency "$1"; }
kizuna_out=$(run "http://127.0.0.1:$kizuna_port/v1/apps/bench-app")
nginx_out=$(run "http://127.0.0.1:$nginx_port/v1/apps/bench-app")
rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }
p99() { awk '$1 == "99%" {print $2}' <<<"$1"; }
k=$(rps "$kizuna_out"); n=$(rps "$nginx_out")
echo "$kizuna_out" >&2; echo "$nginx_out" >&2
printf '| %s | GET /v1/apps/{id} | %s | %s | %s | %s | %.2f |\n' "$(date -u +%F)" "$k" "$(p99 "$kizuna_out")" "$n" "$(p99 "$nginx_out")" "$(echo "$k / $n" | bc -l)"
