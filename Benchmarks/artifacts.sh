#!/usr/bin/env bash
# Release artifacts: upload and download throughput of one large file through `kizuna serve` (PUT/GET
# /v1/admin/apps/{app}/releases/{release}/artifacts/{name}, streamed to the directory blob store with SHA-256 and MD5
# computed on the way) against curl to nginx writing (WebDAV PUT) and serving the same file on the same disk, in the
# same run, rounds alternating, server on core 0 and curl on core 1. Also the CLI's own path, `kizuna release upload`
# (declares size and SHA-256 — a read of the file first — then sends resumable 16 MiB PATCHes, each fsynced) and
# `kizuna release download` (ranged 16 MiB GETs into a .part file, checked), on core 1 too. Reports median MB/s and
# the servers' peak RSS.
#   bash Benchmarks/artifacts.sh [SIZE_MB] [ROUNDS]     (default 1024 MB, 3 rounds)
source "$(dirname "$0")/common.sh"
size_mb=${1:-1024}
rounds=${2:-3}
kizuna_port=18101
nginx_port=18102

head -c "${size_mb}M" /dev/urandom >"$work/artifact.bin"
mkdir -p "$work/www/up" "$work/nginx/body"
chmod 777 "$work/www/up" "$work/nginx/body"  # nginx workers (an unprivileged user) write the uploads
taskset -c 0 true  # fails early when taskset is missing
start_kizuna $kizuna_port
release=$("$kizuna" release create 1.0.0 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
start_nginx $nginx_port "location /up/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0; client_body_temp_path $work/nginx/body; }"
# Both servers on core 0, curl on core 1.
taskset -cp 0 "$kizuna_pid" >/dev/null
for pid in $(pgrep -f "nginx.*$work/nginx"); do taskset -cp 0 "$pid" >/dev/null; done

mbps() { awk -v bytes="$1" -v secs="$2" 'BEGIN { printf "%.0f", bytes / secs / 1048576 }'; }
bytes=$((size_mb * 1048576))
artifact="http://127.0.0.1:$kizuna_port/v1/admin/apps/bench-app/releases/$release/artifacts/artifact.bin"
declare -a ku kd nu nd cu cd
now() { date +%s.%N; }
for round in $(seq 1 "$rounds"); do
    t=$(taskset -c 1 curl -sf -o /dev/null -w '%{time_total}' -H 'Expect:' -T "$work/artifact.bin" -H "Authorization: Bearer $KIZUNA_TOKEN" \
        -H 'Content-Type: application/octet-stream' "$artifact")
    ku+=("$(mbps $bytes "$t")")
    t=$(taskset -c 1 curl -sf -o /dev/null -w '%{time_total}' -H 'Expect:' -T "$work/artifact.bin" "http://127.0.0.1:$nginx_port/up/artifact.bin")
    nu+=("$(mbps $bytes "$t")")
    t=$(taskset -c 1 curl -sf -o /dev/null -w '%{time_total}' -H "Authorization: Bearer $KIZUNA_TOKEN" "$artifact")
    kd+=("$(mbps $bytes "$t")")
    t=$(taskset -c 1 curl -sf -o /dev/null -w '%{time_total}' "http://127.0.0.1:$nginx_port/up/artifact.bin")
    nd+=("$(mbps $bytes "$t")")
    start=$(now)
    taskset -c 1 "$kizuna" release upload "$release" "$work/artifact.bin" >/dev/null 2>&1
    cu+=("$(mbps $bytes "$(echo "$(now) - $start" | bc -l)")")
    rm -f "$work/copy.bin"
    start=$(now)
    taskset -c 1 "$kizuna" release download "$release" artifact.bin -o "$work/copy.bin" >/dev/null 2>&1
    cd+=("$(mbps $bytes "$(echo "$(now) - $start" | bc -l)")")
    echo "round $round: kizuna up ${ku[-1]} MB/s, nginx up ${nu[-1]} MB/s, kizuna down ${kd[-1]} MB/s, nginx down ${nd[-1]} MB/s," \
        "CLI up ${cu[-1]} MB/s, CLI down ${cd[-1]} MB/s" >&2
done
# The stored copy is the file, byte for byte.
cmp "$work/artifact.bin" <(curl -sf -H "Authorization: Bearer $KIZUNA_TOKEN" "$artifact")
cmp "$work/artifact.bin" "$work/copy.bin"  # and the CLI's download
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
hwm() { awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
nginx_rss=0
for pid in $(pgrep -f "nginx.*$work/nginx"); do r=$(hwm "$pid"); [ "$r" -gt "$nginx_rss" ] && nginx_rss=$r; done
k_up=$(median "${ku[@]}"); n_up=$(median "${nu[@]}"); k_down=$(median "${kd[@]}"); n_down=$(median "${nd[@]}")
c_up=$(median "${cu[@]}"); c_down=$(median "${cd[@]}")
printf '| %s | %s MB artifact | upload %s MB/s vs nginx %s (%.2f) | download %s MB/s vs nginx %s (%.2f) | CLI upload %s MB/s (%.2f), download %s MB/s (%.2f) | peak RSS kizuna %s MB, nginx %s MB |\n' \
    "$(date -u +%F)" "$size_mb" "$k_up" "$n_up" "$(echo "$k_up / $n_up" | bc -l)" "$k_down" "$n_down" "$(echo "$k_down / $n_down" | bc -l)" \
    "$c_up" "$(echo "$c_up / $n_up" | bc -l)" "$c_down" "$(echo "$c_down / $n_down" | bc -l)" "$(hwm "$kizuna_pid")" "$nginx_rss"
