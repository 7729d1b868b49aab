#!/usr/bin/env bash
# The data API (issue 12) through POST /v1/apps/{app}/graphql on `kizuna serve` (release build), against a peer in the
# same run: data-peer (Benchmarks/DataPeer) runs the same statements through the same driver, pool and executor
# setup on the very table kizuna made, on SQLite and on PostgreSQL. The model:
#   type Note @model @auth(rules: [{ allow: owner }]) { text: String! rank: Int }
# Measured, for one signed-in user:
#   createNote: wrk POSTs `mutation { createNote(input: { text: "bench note" }) { id } }` (no id: each request creates
#       a row) against `data-peer insert` (each row one transaction: the existence check of the id, the `changes` row
#       — on PostgreSQL behind the log's ordering lock, then pg_notify — and the row INSERT … RETURNING *), and
#       `data-peer insert-plain` (the row INSERT alone, autocommitted) to show what the change log costs;
#   listNotes: wrk POSTs `{ listNotes(limit: 20) { items { id text rank owner createdAt } nextToken } }` against
#       `data-peer select` (the same keyset SELECT, LIMIT 21, rows decoded).
# kizuna (or the peer) is pinned to CPU 0 and wrk to CPU 1 (taskset); PostgreSQL's own processes are not pinned.
# Rounds alternate kizuna and the peer (who goes first alternates too); kizuna is stopped while the peer runs (SQLite
# allows one writer; on PostgreSQL kizuna's change listener would wake for every peer row) and restarted for its
# turn, and each side has 1 s of warm-up before it is measured. Every wrk answer is checked (a Lua response hook
# counts non-200 answers and bodies with "errors"; any is a failure), and one curl per round before the measurement.
# On PostgreSQL it then sweeps concurrent writers (1, 4, 16, 64) with the peer alone: insert with the ordering lock,
# without it, without it and without pg_notify, and insert-plain, with a pool large enough for every writer — does
# the lock cap concurrent writers? On 2 cores the CPU caps them too; compare the columns, not the absolute numbers.
# Prints Markdown rows for RESULTS.md on stdout; wrk's output and the peer's details on stderr.
# Usage: bash Benchmarks/data-api.sh [seconds-per-side-per-round] [connections] [rounds] [sqlite|postgres|both]
#   DATA_PEER_BIN: a data-peer already built, instead of building Benchmarks/DataPeer here.
# PostgreSQL: the local cluster (installed and started as .ci/run does; left as it was found), role kizuna/kizuna,
# database kizuna_bench (dropped and created fresh, dropped at the end).
duration=${1:-10}
connections=${2:-64}
rounds=${3:-5}
engines=${4:-both}
case "$engines" in
    sqlite | postgres) ;;
    both) engines="sqlite postgres" ;;
    *) echo "The engine is sqlite, postgres or both, not '$engines'." >&2; exit 2 ;;
esac
source "$(dirname "$0")/common.sh"
if [ -n "${DATA_PEER_BIN:-}" ]; then
    peer=$DATA_PEER_BIN
else
    swift build -c release --package-path Benchmarks/DataPeer --product data-peer >/dev/null
    peer=$(swift build -c release --package-path Benchmarks/DataPeer --show-bin-path)/data-peer
fi
port=18096
base=http://127.0.0.1:$port
graphql=$base/v1/apps/bench-app/graphql
table=data_$(printf %s bench-app | sha256sum | cut -c1-10)_Note  # DataTables.table(app:model:)
pg_url="postgres://kizuna:kizuna@127.0.0.1:5432/kizuna_bench?sslmode=disable"
credentials='{"identifier":"bench@example.com","password":"correct horse battery"}'
create_body='{"query":"mutation { createNote(input: { text: \"bench note\" }) { id } }"}'
list_body='{"query":"{ listNotes(limit: 20) { items { id text rank owner createdAt } nextToken } }"}'
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
cat >"$work/schema.graphql" <<'SDL'
type Note @model @auth(rules: [{ allow: owner }]) {
  text: String!
  rank: Int
}
SDL

# wrk script for BODY with TOKEN; done() prints "bad answers: N" (non-200, or a body with GraphQL errors).
write_lua() {  # FILE BODY TOKEN
    cat >"$1" <<LUA
wrk.method = "POST"
wrk.body = [[$2]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $3"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
    if status ~= 200 or string.find(body, '"errors"', 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do total = total + thread:get("bad") end
    io.write("bad answers: " .. total .. "\n")
end
LUA
}

# One GraphQL answer on standard output; fails on a non-2xx status or GraphQL errors.
ask() {  # BODY TOKEN
    local answer
    answer=$(curl -sf -H 'Content-Type: application/json' -H "Authorization: Bearer $2" -d "$1" "$graphql")
    python3 -c 'import json, sys; a = json.load(sys.stdin); sys.exit("GraphQL errors: %s" % a["errors"] if a.get("errors") else 0)' <<<"$answer"
    echo "$answer"
}

access_token() { python3 -c 'import json, sys; print(json.load(sys.stdin)["session"]["accessToken"])'; }
sign_in() { curl -sf -H 'Content-Type: application/json' -d "$credentials" "$base/v1/auth/sign-in" | access_token; }

# kizuna's turn with BODY: restart pinned to CPU 0, a fresh token, one checked answer, 1 s of warm-up, then wrk on
# CPU 1; kizuna is stopped again after. Sets kizuna_rate and kizuna_p99 (ms).
kizuna_round() {  # BODY
    restart_kizuna
    taskset -a -cp 0 "$kizuna_pid" >/dev/null
    local token out bad
    token=$(sign_in)
    write_lua "$work/bench.lua" "$1" "$token"
    ask "$1" "$token" >/dev/null
    taskset -c 1 wrk -t1 -c"$connections" -d1s -s "$work/bench.lua" "$graphql" >/dev/null
    out=$(taskset -c 1 wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$work/bench.lua" "$graphql")
    stop_kizuna
    echo "$out" >&2
    bad=$(awk '/bad answers:/ {print $3}' <<<"$out")
    [ "${bad:-unknown}" = 0 ] || { echo "kizuna gave ${bad:-unknown} answers with an error status or GraphQL errors" >&2; exit 1; }
    kizuna_rate=$(rps "$out")
    kizuna_p99=$(p99_ms "$out")
}

# The peer's turn, pinned to CPU 0 (kizuna stopped): data-peer MODE [flags…] with its own 1 s warm-up. Sets
# peer_rate and peer_p99 (ms).
peer_round() {  # MODE [flags…]
    peer_rate=$(taskset -c 0 "$peer" "$@" --database "$database" --table "$table" --owner "$owner" --seconds "$duration" 2>"$work/peer.err") ||
        { cat "$work/peer.err" >&2; exit 1; }
    cat "$work/peer.err" >&2
    peer_p99=$(sed -n 's/.* p99=\([0-9.]*\)ms.*/\1/p' "$work/peer.err")
}

# Rounds of kizuna with BODY against data-peer MODE (and insert-plain when PLAIN is "plain"); one row.
compare() {  # LABEL BODY MODE PLAIN
    local label=$1 body=$2 mode=$3 plain=$4 round side
    : >"$work/k"; : >"$work/kp"; : >"$work/p"; : >"$work/pp"; : >"$work/r"; : >"$work/q"
    for round in $(seq 1 "$rounds"); do
        order="kizuna peer"
        if ((round % 2 == 0)); then order="peer kizuna"; fi
        for side in $order; do
            if [ "$side" = kizuna ]; then
                kizuna_round "$body"
            else
                peer_round "$mode" --concurrency "$connections"
                if [ "$plain" = plain ]; then
                    local rate=$peer_rate p99=$peer_p99
                    peer_round insert-plain --concurrency "$connections"
                    echo "$peer_rate" >>"$work/q"
                    peer_rate=$rate peer_p99=$p99
                fi
            fi
        done
        echo "$kizuna_rate" >>"$work/k"; echo "$kizuna_p99" >>"$work/kp"
        echo "$peer_rate" >>"$work/p"; echo "$peer_p99" >>"$work/pp"
        echo "$kizuna_rate / $peer_rate" | bc -l >>"$work/r"
        echo "round $round: $engine $label kizuna $kizuna_rate /s, data-peer $mode $peer_rate /s" >&2
    done
    printf '| %s | %s | %s | %s | %sms | %s | %sms | %.2f (%s) | %s |\n' "$(date -u +%F)" "$engine" "$label" \
        "$(median <"$work/k")" "$(median <"$work/kp")" "$(median <"$work/p")" "$(median <"$work/pp")" "$(median <"$work/r")" \
        "$(xargs printf '%.2f ' <"$work/r" | sed 's/ $//')" "$(if [ -s "$work/q" ]; then median <"$work/q"; else echo "—"; fi)"
}

# The peer alone on PostgreSQL at 1, 4, 16 and 64 writers, each variant in turn, up to 3 rounds; one row per count.
writer_sweep() {
    local sweep_rounds=$((rounds < 3 ? rounds : 3)) loops writers per_loop round variant
    loops=$(nproc)  # NIO's singleton event loops, one a core: the pool opens connections on each
    for writers in 1 4 16 64; do
        per_loop=$(((writers + loops - 1) / loops))
        if ((per_loop < 4)); then per_loop=4; fi  # never fewer than Kizuna's pool
        rm -f "$work"/sweep.*
        for round in $(seq 1 "$sweep_rounds"); do
            for variant in lock nolock nonotify plain; do
                case $variant in
                    lock) peer_round insert --concurrency "$writers" --connections-per-event-loop "$per_loop" ;;
                    nolock) peer_round insert --no-order-lock --concurrency "$writers" --connections-per-event-loop "$per_loop" ;;
                    nonotify) peer_round insert --no-order-lock --no-notify --concurrency "$writers" --connections-per-event-loop "$per_loop" ;;
                    plain) peer_round insert-plain --concurrency "$writers" --connections-per-event-loop "$per_loop" ;;
                esac
                echo "$peer_rate" >>"$work/sweep.$variant"
                echo "$peer_p99" >>"$work/sweep.$variant.p99"
            done
            echo "sweep round $round: $writers writers done" >&2
        done
        local lock nolock
        lock=$(median <"$work/sweep.lock"); nolock=$(median <"$work/sweep.nolock")
        printf '| %s | %s | %s (p99 %sms) | %s (p99 %sms) | %s (p99 %sms) | %s (p99 %sms) | %.2f |\n' "$(date -u +%F)" "$writers" \
            "$lock" "$(median <"$work/sweep.lock.p99")" "$nolock" "$(median <"$work/sweep.nolock.p99")" \
            "$(median <"$work/sweep.nonotify")" "$(median <"$work/sweep.nonotify.p99")" \
            "$(median <"$work/sweep.plain")" "$(median <"$work/sweep.plain.p99")" "$(echo "$nolock / $lock" | bc -l)"
    done
}

prepare_postgres() {
    if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
        apt-get update -qq
        apt-get install -y -qq postgresql >/dev/null
    fi
    pg_version=$(ls /usr/lib/postgresql | sort -V | tail -1)
    pg_was_up=no
    if pg_isready -q -h 127.0.0.1 -p 5432; then pg_was_up=yes; fi
    [ -d "/etc/postgresql/$pg_version/main" ] || pg_createcluster "$pg_version" main >/dev/null
    pg_ctlcluster "$pg_version" main start 2>/dev/null || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    pg_isready -h 127.0.0.1 -p 5432 >/dev/null
    su postgres -c "psql -q -v ON_ERROR_STOP=1" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'kizuna') THEN CREATE ROLE kizuna LOGIN PASSWORD 'kizuna'; END IF;
END $$;
DROP DATABASE IF EXISTS kizuna_bench WITH (FORCE);
CREATE DATABASE kizuna_bench OWNER kizuna;
SQL
    local setting
    for setting in server_version synchronous_commit max_connections shared_buffers; do
        echo "postgres $setting: $(su postgres -c "psql -tA -c 'SHOW $setting'")" >&2
    done
}

finish_postgres() {
    su postgres -c "psql -q -c 'DROP DATABASE IF EXISTS kizuna_bench WITH (FORCE)'"
    if [ "$pg_was_up" = no ]; then pg_ctlcluster "$pg_version" main stop || true; fi
}

for engine in $engines; do
    rm -rf "$work/data"
    if [ "$engine" = postgres ]; then
        prepare_postgres
        database=$pg_url
        start_kizuna $port --database-url "$pg_url"
    else
        database=$work/data/kizuna.sqlite  # DatabaseLocation.sqlite(dataDirectory:)
        start_kizuna $port
    fi
    "$kizuna" schema publish --app bench-app -f "$work/schema.graphql" -m bench >/dev/null
    grant=$(curl -sf -H 'Content-Type: application/json' -d "$credentials" "$base/v1/auth/sign-up")
    owner=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["account"]["id"])' <<<"$grant")
    token=$(access_token <<<"$grant")
    # The mutation creates a row the caller owns, and the list returns it: the peer's --owner and --table are right.
    ask "$create_body" "$token" | python3 -c 'import json, sys; assert json.load(sys.stdin)["data"]["createNote"]["id"]'
    ask "$list_body" "$token" | python3 -c '
import json, sys
items = json.load(sys.stdin)["data"]["listNotes"]["items"]
assert items and all(item["owner"] == sys.argv[1] for item in items), items' "$owner"
    stop_kizuna
    echo "$engine: table $table, owner $owner, $connections connections, $duration s a side, $rounds rounds" >&2

    compare "createNote vs data-peer insert" "$create_body" insert plain
    compare "listNotes(limit: 20) vs data-peer select" "$list_body" select -
    if [ "$engine" = postgres ]; then
        if [ "${DATA_API_SWEEP:-1}" = 1 ]; then writer_sweep; fi  # DATA_API_SWEEP=0 skips the writer sweep
        finish_postgres
    fi
done
