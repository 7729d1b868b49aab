#!/usr/bin/env bash
# End to end through the SDK: from `app.data.outbox.send` on one client to the same message on another client's
# `app.data.subscribe`, on `kizuna serve` (release build, SQLite), against the raw fan-out figure in the same run.
#
#   - SDK: Benchmarks/outbox_latency.py drives two release `kizuna-chat` processes (Examples/Chat, the example client
#     on the SDK): the writer's `chat` sends each line through the outbox (stored in its SQLite, then a createMessage in
#     the room's lane, one at a time, in order), the reader's `listen` prints what its subscription delivers. Latency:
#     the reader's line read minus the time the line was written to the writer. Also checked: every message arrived
#     once, in order.
#   - raw: Benchmarks/subscriptions_load.py (the fan-out benchmark of Benchmarks/subscriptions.sh) with one subscriber
#     at the same rate and count: createTick POSTed straight, delivered over a bare graphql-transport-ws client. What
#     the SDK adds is the difference: the outbox's store and lane, Foundation's HTTP client, the SDK's WebSocket client
#     and decoding, two processes' pipes.
# Both on the same server (pinned to CPU 0, every thread); the clients and the generators on CPU 1. Rounds alternate
# which goes first; the table gives medians over rounds and the ratio of the medians.
#
# Usage: bash Benchmarks/outbox-latency.sh [messages] [rounds] [rate]
#   defaults: 1000 3 50 (messages per turn, turns of each, messages a second) — about 3 minutes besides the builds.
#   KIZUNA_BIN / CHAT_BIN: a kizuna / kizuna-chat already built, instead of `swift build -c release` here.
# Prints a Markdown table for RESULTS.md on standard output; each turn's JSON on standard error.
messages=${1:-1000}
rounds=${2:-3}
rate=${3:-50}
source "$(dirname "$0")/common.sh"
port=18096
if [ -n "${CHAT_BIN:-}" ]; then
    chat=$CHAT_BIN
else
    swift build -c release --product kizuna-chat >/dev/null
    chat=$(swift build -c release --show-bin-path)/kizuna-chat
fi
python3 -c 'import websockets' 2>/dev/null || python3 -m pip install -q websockets >&2
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# The chat's schema, and the fan-out benchmark's public Tick beside it.
cat Examples/Chat/schema.graphql - >"$work/schema.graphql" <<'SDL'

type Tick @model @auth(rules: [{ allow: public }]) {
  sent: String!
  body: String!
}
SDL
start_kizuna $port
taskset -a -p -c 0 "$kizuna_pid" >/dev/null
"$kizuna" schema publish --app bench-app -f "$work/schema.graphql" -m bench >/dev/null
api_key=$("$kizuna" app key create --app bench-app --expires-in-days 1 --name outbox-bench | head -1)
export KIZUNA_CHAT_PASSWORD='correct horse battery'
person() { echo "--server http://127.0.0.1:$port --app bench-app --as $1 --directory $work/chat/$1"; }
# shellcheck disable=SC2046
"$chat" signup $(person writer@example.com) >/dev/null
# shellcheck disable=SC2046
"$chat" signup $(person reader@example.com) >/dev/null
# shellcheck disable=SC2046
reader_id=$("$chat" whoami $(person reader@example.com))
echo "kizuna $("$kizuna" version 2>/dev/null || echo '?') (commit $(git rev-parse --short HEAD)), $messages messages at $rate /s, $rounds rounds" >&2

: >"$work/runs.jsonl"
sdk_turn() {
    # shellcheck disable=SC2046
    room=$("$chat" create-room $(person writer@example.com) "round $1")
    # shellcheck disable=SC2046
    "$chat" invite $(person writer@example.com) "$room" "$reader_id" >/dev/null
    out=$(taskset -c 1 python3 Benchmarks/outbox_latency.py --chat "$chat" --server "http://127.0.0.1:$port" --app bench-app \
        --room "$room" --writer writer@example.com --reader reader@example.com --directory "$work/chat" \
        --messages "$messages" --rate "$rate" --round "$1")
    echo "sdk $out" >&2
    echo "sdk $out" >>"$work/runs.jsonl"
}
raw_turn() {
    out=$(taskset -c 1 python3 Benchmarks/subscriptions_load.py --peer kizuna --port $port --app bench-app --api-key "$api_key" \
        --subscribers 1 --rate "$rate" --seconds "$(awk -v m="$messages" -v r="$rate" 'BEGIN {print m / r}')" --settle 0.5 --round "$1")
    echo "raw $out" >&2
    echo "raw $out" >>"$work/runs.jsonl"
}
for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then sdk_turn "$round"; raw_turn "$round"; else raw_turn "$round"; sdk_turn "$round"; fi
done
stop_kizuna

figure() {  # SIDE KEY
    grep "^$1 " "$work/runs.jsonl" | cut -d' ' -f2- | python3 -c "import json, sys; [print(json.loads(l)['$2']) for l in sys.stdin]" | median
}
complete=$(grep '^sdk ' "$work/runs.jsonl" | cut -d' ' -f2- | python3 -c \
    "import json, sys; r = [json.loads(l) for l in sys.stdin]; print('yes' if all(x['in_order_once'] and x['received'] == x['messages'] for x in r) else 'NO')")
sdk50=$(figure sdk p50_ms); sdk99=$(figure sdk p99_ms); raw50=$(figure raw p50_ms); raw99=$(figure raw p99_ms)
echo "| path | p50 | p99 |"
echo "|---|---|---|"
echo "| outbox.send → subscription, through the SDK (every message once, in order: $complete) | $sdk50 ms | $sdk99 ms |"
echo "| createTick POSTed → bare graphql-transport-ws client (raw fan-out, 1 subscriber) | $raw50 ms | $raw99 ms |"
awk -v a="$sdk50" -v b="$raw50" -v c="$sdk99" -v d="$raw99" 'BEGIN {printf "| SDK ÷ raw | %.2f× | %.2f× |\n", a / b, c / d}'
