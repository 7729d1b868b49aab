#!/usr/bin/env bash
# Accounts on `kizuna serve` (release build, SQLite, the default scrypt cost N=2^15, r=8, p=1):
#   1. sign-ins per second: wrk POSTing one account's right password to /v1/auth/sign-in (each answer hashes once
#      and writes a session);
#   2. the time one sign-in takes with the right password, a wrong one and an unknown identifier (curl, sequential;
#      few enough failures to stay under the lock allowance) — they should match;
#   3. authenticated requests per second (GET /v1/me: bearer token hashed, session and account looked up) against
#      unauthenticated ones (GET /v1/apps/bench-app: one app read) in alternating rounds of the same run.
# Method (common.sh): kizuna on core 0, wrk -t1 on core 1; medians and per-round ratios.
# Usage: bash Benchmarks/accounts.sh [seconds-per-round] [connections] [rounds]
duration=${1:-10}
connections=${2:-32}
rounds=${3:-3}
source "$(dirname "$0")/common.sh"
port=18094
start_kizuna $port
base=http://127.0.0.1:$port
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

credentials='{"identifier":"bench@example.com","password":"correct horse battery"}'
grant=$(curl -sf -H 'Content-Type: application/json' -d "$credentials" "$base/v1/auth/sign-up")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["session"]["accessToken"])' <<<"$grant")

cat >"$work/sign-in.lua" <<LUA
wrk.method = "POST"
wrk.body = '$credentials'
wrk.headers["Content-Type"] = "application/json"
LUA
out=$(taskset -c "$load_cpu" wrk -t1 -c4 -d"${duration}s" --latency -s "$work/sign-in.lua" "$base/v1/auth/sign-in")
grep -q "Non-2xx" <<<"$out" && { echo "sign-in answered errors:"; echo "$out"; exit 1; }
echo "| sign-in (4 connections) | $(rps "$out") /s | p99 $(p99 "$out") |"

timing() {  # median seconds of 4 sequential sign-ins with body $1
    for _ in 1 2 3 4; do taskset -c "$load_cpu" curl -s -o /dev/null -w '%{time_total}\n' -H 'Content-Type: application/json' -d "$1" "$base/v1/auth/sign-in"; done | median
}
right=$(timing "$credentials")
wrong=$(timing '{"identifier":"bench@example.com","password":"not the password"}')
unknown=$(timing '{"identifier":"nobody@example.com","password":"not the password"}')
echo "| one sign-in, median of 4 | right password ${right}s | wrong password ${wrong}s | unknown identifier ${unknown}s |"

# The bearer token goes only to /v1/me (wrk.path is the URL's path).
cat >"$work/token.lua" <<LUA
if string.find(wrk.path, "/v1/me", 1, true) then wrk.headers["Authorization"] = "Bearer $token" end
LUA
for url in "$base/v1/me" "$base/v1/apps/bench-app"; do
    check=$(taskset -c "$load_cpu" wrk -t1 -c1 -d1s -s "$work/token.lua" "$url")
    grep -q "Non-2xx" <<<"$check" && { echo "$url answered errors:"; echo "$check"; exit 1; }
done
compare_rounds "$rounds" "$duration" "$connections" "$work/token.lua" me="$base/v1/me" app="$base/v1/apps/bench-app"
echo "| GET /v1/me req/s | p99 | GET /v1/apps/bench-app req/s | p99 | me / app (per round) |"
echo "|---|---|---|---|---|"
me=$(round_summary me app)
echo "| $(cut -d'|' -f1-2 <<<"$me") | $(round_summary app) | $(cut -d'|' -f3 <<<"$me" | sed 's/^ //') |"
