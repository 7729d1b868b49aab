#!/usr/bin/env bash
# Push notifications per second from kizuna serve (release) to a local APNs over HTTP/2 + TLS, against aioapns (PyPI)
# sending the same payload to the same tokens at the same endpoint, in alternating rounds; medians.
#
#   bash Benchmarks/push.sh [devices per round] [rounds]      (defaults: 20000, 5)
#
# The local APNs (kizuna-apns-local, the tests' APNsTestServer: provider tokens, headers and payload size checked,
# every notification accepted) runs on CPU 1; the sender on CPU 0 — kizuna for its turn (a push job to every
# registered device, timed from the job's creation to its end as the server records them), then aioapns
# (push_aioapns.py, 1,000 requests in flight over its default pool, timed from its first request to its last answer).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
devices=${1:-20000}
rounds=${2:-5}

python3 -c 'import aioapns' 2>/dev/null || pip install -q 'aioapns>=4,<5' >/dev/null
command -v openssl >/dev/null || { apt-get update -qq; apt-get install -y -qq openssl >/dev/null; }
swift build -c release --product kizuna-apns-local >/dev/null
apns_local=$(swift build -c release --show-bin-path)/kizuna-apns-local

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/AuthKey.p8" 2>/dev/null
key_id=BENCH12345
team_id=TEAM12345A
topic=com.example.bench

taskset -c 1 "$apns_local" --port 0 --p8 "$work/AuthKey.p8" --key-id $key_id --team-id $team_id --topic $topic \
    --ca-out "$work/apns-ca.pem" >"$work/apns.out" 2>&1 &
for _ in $(seq 1 100); do grep -q '^listening' "$work/apns.out" && break; sleep 0.1; done
apns_port=$(awk '/^listening/ {print $2; exit}' "$work/apns.out")

start_kizuna 18090 --apns-url "https://127.0.0.1:$apns_port" --apns-ca-file "$work/apns-ca.pem"
taskset -pc 0 "$kizuna_pid" >/dev/null
"$kizuna" push credentials set --p8 "$work/AuthKey.p8" --key-id $key_id --team-id $team_id >/dev/null

# The registry, written beside the running server (WAL lets both in).
python3 - "$work/data/kizuna.sqlite" "$devices" <<'PY'
import sqlite3, sys, time
store, count = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(store, timeout=30)
now = int(time.time() * 1000)
db.executemany(
    "INSERT INTO push_devices (app_id, install_id, token, environment, locale, registered_at) VALUES ('bench-app', ?, ?, 'production', 'en-US', ?)",
    [(f"i{n}", format(n + 0x3000, "064x"), now) for n in range(1, count + 1)])
db.commit()
PY

kizuna_rates=()
aioapns_rates=()
for round in $(seq 1 "$rounds"); do
    job=$("$kizuna" push send --all --body Benchmark --collapse-id bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    while :; do
        status=$("$kizuna" push status "$job" --json)
        state=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["state"])' "$status")
        [ "$state" = done ] && break
        sleep 0.2
    done
    rate=$(python3 -c '
import json, sys
job = json.loads(sys.argv[1])
assert job["totals"]["sent"] == int(sys.argv[2]), job["totals"]
print(round(job["totals"]["sent"] / ((job["finishedAt"] - job["createdAt"]) / 1000)))' "$status" "$devices")
    kizuna_rates+=("$rate")
    peer=$(taskset -c 0 python3 Benchmarks/push_aioapns.py "$apns_port" "$work/apns-ca.pem" "$work/AuthKey.p8" $key_id $team_id $topic "$devices")
    aioapns_rates+=("$peer")
    echo "round $round: kizuna $rate/s, aioapns $peer/s" >&2
done
tail -1 "$work/apns.out" >&2

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
k=$(median "${kizuna_rates[@]}")
a=$(median "${aioapns_rates[@]}")
ratio=$(python3 -c "print(f'{$k / $a:.1f}')")
echo "| $devices | $rounds | $k | $a | ${ratio}× |"
