#!/usr/bin/env bash
# Accounts on `kizuna serve` (release build, SQLite, the default scrypt cost N=2^15, r=8, p=1):
#   1. sign-ins per second: wrk POSTing one account's right password to /v1/auth/sign-in (each answer hashes once
#      and writes a session);
#   2. the time one sign-in takes with the right password, a wrong one and an unknown identifier (curl, sequential;
#      few enough failures to stay under the lock allowance) — they should match;
#   3. authenticated requests per second (GET /v1/me: bearer token hashed, session and account looked up) against
#      unauthenticated ones (GET /v1/apps/bench-app: one app read) in alternating rounds of the same run.
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
out=$(wrk -t2 -c4 -d"${duration}s" --latency -s "$work/sign-in.lua" "$base/v1/auth/sign-in")
grep -q "Non-2xx" <<<"$out" && { echo "sign-in answered errors:"; echo "$out"; exit 1; }
echo "| sign-in (4 connections) | $(rps "$out") /s | p99 $(p99 "$out") |"

timing() {  # median seconds of 4 sequential sign-ins with body $1
    for _ in 1 2 3 4; do curl -s -o /dev/null -w '%{time_total}\n' -H 'Content-Type: application/json' -d "$1" "$base/v1/auth/sign-in"; done | median
}
right=$(timing "$credentials")
wrong=$(timing '{"identifier":"bench@example.com","password":"not the password"}')
unknown=$(timing '{"identifier":"nobody@example.com","password":"not the password"}')
echo "| one sign-in, median of 4 | right password ${right}s | wrong password ${wrong}s | unknown identifier ${unknown}s |"

for round in $(seq 1 "$rounds"); do
    me=$(wrk -t2 -c"$connections" -d"${duration}s" --latency -H "Authorization: Bearer $token" "$base/v1/me")
    grep -q "Non-2xx" <<<"$me" && { echo "/v1/me answered errors:"; echo "$me"; exit 1; }
    app=$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$base/v1/apps/bench-app")
    echo "$(rps "$me") $(rps "$app") $(p99_ms "$me") $(p99_ms "$app")" >>"$work/rounds"
    echo "| round $round | GET /v1/me $(rps "$me") /s (p99 $(p99 "$me")) | GET /v1/apps/bench-app $(rps "$app") /s (p99 $(p99 "$app")) | ratio $(awk '{printf "%.2f", $1 / $2}' <<<"$(rps "$me") $(rps "$app")") |"
done
echo "| median | $(awk '{print $1}' "$work/rounds" | median) /s | $(awk '{print $2}' "$work/rounds" | median) /s | $(awk '{print $1 / $2}' "$work/rounds" | median) |"
