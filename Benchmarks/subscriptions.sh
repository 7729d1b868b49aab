#!/usr/bin/env bash
# Realtime subscriptions of the data API (graphql-transport-ws on GET /v1/apps/{app}/graphql) on `kizuna serve`
# (release build, SQLite), against mosquitto (Debian's package, MQTT 3.1.1, QoS 0) in the same run.
#
# For N subscribers (1,000 and 10,000 by default), each receiving every message of a stream:
#   - delivery latency p50 / p99 over every delivery: receipt time minus the send time the record carries
#     (time.time_ns() taken just before the mutation request, or the PUBLISH, is written; for kizuna this is an upper
#     bound on commit-to-receipt: the request is still to be read, run and committed);
#   - messages delivered per second: deliveries ÷ (last receipt − first send);
#   - server memory per idle connection: (VmRSS once all N are open and subscribed, 2 s later − VmRSS with the first
#     subscriber alone open, 2 s after it) ÷ (N − 1), from /proc/PID/status (kB = KiB). The first subscriber is
#     outside the difference so that what the server sets up once (the app's schema loaded, caches, pools) is not
#     charged to the connections; the server is restarted for every turn, so memory freed by an earlier turn is not
#     reused either.
#   - the floor under that: the same measurement of a bare hummingbird-websocket server (Benchmarks/WebSocketPeer,
#     the stack Kizuna's WebSocket runs on) holding N idle connections (Benchmarks/websocket_idle.py).
# Goals (the issue): kizuna's p99 ≤ 2× mosquitto's, ≤ 30 KB of kizuna memory per idle connection.
#
# kizuna side: the model `type Tick @model @auth(rules: [{ allow: public }]) { sent: String! body: String! }` of
# bench-app; one API key (`kizuna app key create`) is used by every subscriber (connection_init payload
# {"x-api-key": KEY}) and by the publisher (header X-Api-Key): a public rule lets every subscriber read every record.
# Subscribers: `subscription { onCreateTick { id sent body } }`. Publisher: `createTick(input: {id, sent, body})`
# POSTed to /v1/apps/bench-app/graphql over 4 keep-alive HTTP/1.1 connections.
# mosquitto side: a hand-started broker on 127.0.0.1:$mosquitto_port (config written here: anonymous allowed, no
# connection limit, TCP_NODELAY as NIO sets it on kizuna's sockets, no persistence); subscribers and publisher are MQTT 3.1.1
# clients on topic bench/ticks, QoS 0; the publisher publishes the same record JSON
# {"id": uuid, "sent": "<ns>", "body": <128 characters>} (212 bytes) that kizuna delivers as data.onCreateTick.
#
# The load generator (Benchmarks/subscriptions_load.py: Python asyncio in one process, the `websockets` package for
# WebSockets and a small hand-written asyncio MQTT client, one reader task per subscriber on both sides) is pinned to
# CPU 1; the server (kizuna, all its threads, or mosquitto) to CPU 0. Each turn: start the server, open 1 subscriber,
# RSS, open the other N − 1 (200 at a time), RSS, 3 warm-up messages (each waited for by every subscriber, not
# counted), then RATE messages a second for SECONDS seconds, drain, stop the server. Rounds alternate kizuna and
# mosquitto (who goes first alternates too); figures are medians over the rounds, the p99 ratio is the median of the
# per-round ratios kizuna ÷ mosquitto.
#
# RATE: 20 messages a second at most, lowered so that N × RATE stays at the delivery budget (10,000 deliveries a
# second by default: 10 /s for 1,000 subscribers, 1 /s for 10,000). The generator has one core and spends some tens
# of µs per delivery (the JSON's client_cpu_us_per_delivery says how many): 20 /s to 10,000 subscribers would be
# 200,000 deliveries a second, which would measure the generator, not the server. Even under the budget a message
# reaches N subscribers as a burst the generator reads one by one, so every p99 includes about N × that cost; when
# mosquitto's p99 is near that floor, the ratio understates the difference between the servers.
#
# Usage: bash Benchmarks/subscriptions.sh [seconds] [rounds] [subscriber counts] [deliveries-per-second budget]
#   defaults: 10 3 "1000 10000" 10000 — about 15 minutes besides the build.
#   KIZUNA_BIN: a kizuna already built, instead of `swift build -c release --product kizuna` here.
#   SUB_RATE: messages a second for every N, instead of the budget's.
#   SUB_JSONL: a file to append each turn's JSON line to (they are also printed on standard error).
# Needs: root or a hard open-file limit above the largest N + 1024 (raised here with ulimit), python3 with the
# `websockets` package (pip-installed here if missing), mosquitto (apt-get installed here if missing; the broker is
# started by hand on its own port, never as a service), taskset.
# Prints a Markdown table for RESULTS.md on standard output; progress and each turn's JSON on standard error.
duration=${1:-10}
rounds=${2:-3}
counts=${3:-"1000 10000"}
budget=${4:-10000}
source "$(dirname "$0")/common.sh"
port=18097
mosquitto_port=18883
load=Benchmarks/subscriptions_load.py
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# Open files: every process here holds up to N sockets (the generator, kizuna, mosquitto), plus its own files.
largest=$(printf '%s\n' $counts | sort -n | tail -1)
need=$((largest + 1024))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && ((hard < need)); then
    ulimit -Hn "$need" || { echo "The hard open-file limit is $hard; $need are needed (run as root or raise it)." >&2; exit 1; }
fi
if [ "$(ulimit -Sn)" != unlimited ] && (($(ulimit -Sn) < need)); then ulimit -Sn "$need"; fi

python3 -c 'import websockets' 2>/dev/null || python3 -m pip install -q websockets >&2
mosquitto_bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if [ ! -x "$mosquitto_bin" ]; then
    apt-get update -qq
    apt-get install -y -qq mosquitto >/dev/null
    mosquitto_bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)
fi
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
# The framework's own cost per idle connection: a bare hummingbird-websocket server (Benchmarks/WebSocketPeer),
# measured per N and round as kizuna is (websocket_idle.py). WEBSOCKET_PEER_BIN: one already built.
websocket_peer=${WEBSOCKET_PEER_BIN:-}
if [ -z "$websocket_peer" ]; then
    swift build -c release --package-path Benchmarks/WebSocketPeer >/dev/null
    websocket_peer=$(swift build -c release --package-path Benchmarks/WebSocketPeer --show-bin-path)/websocket-peer
fi
websocket_peer_port=18099

cat >"$work/schema.graphql" <<'SDL'
type Tick @model @auth(rules: [{ allow: public }]) {
  sent: String!
  body: String!
}
SDL
cat >"$work/mosquitto.conf" <<CONF
listener $mosquitto_port 127.0.0.1
allow_anonymous true
max_connections -1
set_tcp_nodelay true
persistence false
log_dest stderr
log_type error
log_type warning
CONF
chmod 644 "$work/mosquitto.conf"

start_kizuna $port --max-connections $((largest + 1000))
"$kizuna" schema publish --app bench-app -f "$work/schema.graphql" -m bench >/dev/null
api_key=$("$kizuna" app key create --app bench-app --expires-in-days 1 --name subscriptions-bench | head -1)
case "$api_key" in kzk_*) ;; *) echo "No API key: $api_key" >&2; exit 1 ;; esac
# The publisher's mutation works with the key (and the rule lets it create).
check=$(curl -sf -H 'Content-Type: application/json' -H "X-Api-Key: $api_key" \
    -d '{"query":"mutation { createTick(input: { sent: \"0\", body: \"check\" }) { id sent body } }"}' \
    "http://127.0.0.1:$port/v1/apps/bench-app/graphql") || { echo "createTick with the API key was refused" >&2; exit 1; }
python3 -c 'import json, sys; a = json.load(sys.stdin); sys.exit("createTick failed: %s" % a if a.get("errors") or not a["data"]["createTick"]["id"] else 0)' <<<"$check"
stop_kizuna

{
    echo "kizuna $("$kizuna" version 2>/dev/null || echo '?') (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')), $("$mosquitto_bin" -h 2>/dev/null | head -1)"
    echo "python $(python3 -c 'import sys, websockets; print(sys.version.split()[0], "websockets", websockets.__version__)'), $(nproc) cores, open files $(ulimit -Sn)"
    echo "subscribers: $counts; $duration s a stream, $rounds rounds, budget $budget deliveries/s${SUB_RATE:+, rate forced to $SUB_RATE /s}"
} >&2

rate_for() {  # N
    if [ -n "${SUB_RATE:-}" ]; then echo "$SUB_RATE"; else awk -v b="$budget" -v n="$1" 'BEGIN {r = b / n; if (r > 20) r = 20; printf "%.3g\n", r}'; fi
}

# One turn of SIDE with N subscribers: the server started fresh and pinned to CPU 0, the generator on CPU 1; appends
# its JSON line to $work/runs.jsonl.
turn() {  # SIDE N ROUND
    local side=$1 n=$2 round=$3 rate pid out
    rate=$(rate_for "$n")
    if [ "$side" = kizuna ]; then
        restart_kizuna
        pid=$kizuna_pid
        taskset -a -cp 0 "$pid" >/dev/null
        set -- --peer kizuna --port "$port" --api-key "$api_key"
    else
        : >"$work/mosquitto.err"
        taskset -c 0 "$mosquitto_bin" -c "$work/mosquitto.conf" 2>>"$work/mosquitto.err" &
        pid=$!
        for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$mosquitto_port") 2>/dev/null && break; sleep 0.1; done
        set -- --peer mosquitto --port "$mosquitto_port"
    fi
    echo "round $round: $side, $n subscribers, $rate messages/s for $duration s" >&2
    if ! out=$(taskset -c 1 python3 "$load" "$@" --subscribers "$n" --rate "$rate" --seconds "$duration" --server-pid "$pid" --round "$round"); then
        echo "The load generator failed against $side; the server's log:" >&2
        if [ "$side" = kizuna ]; then tail -20 "$work/serve.err" >&2; else tail -20 "$work/mosquitto.err" >&2; fi
        exit 1
    fi
    if [ "$side" = kizuna ]; then
        stop_kizuna
    else
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    echo "$out" >&2
    echo "$out" >>"$work/runs.jsonl"
    if [ -n "${SUB_JSONL:-}" ]; then echo "$out" >>"$SUB_JSONL"; fi
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(0 if r["complete"] else 1)' "$out" ||
        echo "  $side did not deliver everything: see delivered, closed and publish_failures above" >&2
}

# The bare hummingbird-websocket server's memory per idle connection, N connections (no messages besides one ping).
floor_turn() {  # N ROUND
    local n=$1 round=$2 pid out
    taskset -c 0 "$websocket_peer" "$websocket_peer_port" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$websocket_peer_port") 2>/dev/null && break; sleep 0.1; done
    echo "round $round: hummingbird-websocket, $n idle connections" >&2
    out=$(taskset -c 1 python3 Benchmarks/websocket_idle.py --url "ws://127.0.0.1:$websocket_peer_port/ws" --subscribers "$n" --server-pid "$pid")
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    out=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["round"] = int(sys.argv[2]); print(json.dumps(r))' "$out" "$round")
    echo "$out" >&2
    echo "$out" >>"$work/runs.jsonl"
}

: >"$work/runs.jsonl"
for round in $(seq 1 "$rounds"); do
    for n in $counts; do
        order="kizuna mosquitto"
        if ((round % 2 == 0)); then order="mosquitto kizuna"; fi
        for side in $order; do turn "$side" "$n" "$round"; done
        floor_turn "$n" "$round"
    done
done

# Medians over the rounds, per N; the p99 ratio is the median of the per-round ratios.
python3 - "$work/runs.jsonl" "$(date -u +%F)" <<'PY'
import json, statistics, sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
date = sys.argv[2]

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

def fmt(value, unit=""):
    if value is None:
        return "—"
    return f"{value:.2f}{unit}" if isinstance(value, float) and value < 100 else f"{value:.0f}{unit}"

print("| date | subscribers | messages | kizuna p50 | kizuna p99 | mosquitto p50 | mosquitto p99 "
      "| p99 ratio kizuna ÷ mosquitto: median (per round) | kizuna delivered/s | mosquitto delivered/s "
      "| kizuna KB per idle connection | hummingbird-websocket alone | mosquitto KB per idle connection "
      "| delivered kizuna / mosquitto | generator µs per delivery kizuna / mosquitto |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for n in sorted({r["subscribers"] for r in runs}):
    side = {peer: sorted((r for r in runs if r["subscribers"] == n and r["peer"] == peer), key=lambda r: r["round"])
            for peer in ("kizuna", "mosquitto")}
    k, m = side["kizuna"], side["mosquitto"]
    by_round = {r["round"]: r for r in m}
    ratios = [r["p99_ms"] / by_round[r["round"]]["p99_ms"] for r in k
              if r["round"] in by_round and r["p99_ms"] and by_round[r["round"]]["p99_ms"]]
    def share(rs):  # the worst round's fraction delivered
        return "—" if not rs else f"{min(r['delivered'] / r['expected'] for r in rs) * 100:.1f}%"
    sample = (k or m)[0]
    print(f"| {date} | {n} | {sample['messages']} ({sample['rate']:g}/s × {sample['seconds']:g} s) "
          f"| {fmt(med(r['p50_ms'] for r in k), 'ms')} | {fmt(med(r['p99_ms'] for r in k), 'ms')} "
          f"| {fmt(med(r['p50_ms'] for r in m), 'ms')} | {fmt(med(r['p99_ms'] for r in m), 'ms')} "
          f"| {fmt(med(ratios))} ({' '.join(f'{x:.2f}' for x in ratios)}) "
          f"| {fmt(med(r['delivered_per_s'] for r in k))} | {fmt(med(r['delivered_per_s'] for r in m))} "
          f"| {fmt(med(r.get('rss_per_conn_kb') for r in k))} "
          f"| {fmt(med(r['rss_per_conn_kb'] for r in runs if r['subscribers'] == n and r['peer'] == 'hummingbird-websocket'))} "
          f"| {fmt(med(r.get('rss_per_conn_kb') for r in m))} "
          f"| {share(k)} / {share(m)} "
          f"| {fmt(med(r['client_cpu_us_per_delivery'] for r in k))} / {fmt(med(r['client_cpu_us_per_delivery'] for r in m))} |")
PY
