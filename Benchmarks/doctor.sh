#!/usr/bin/env bash
# `kizuna doctor https://host`: how long a full run takes (eight TLS handshakes, the certificate inspection, a GET for
# redirects, nscurl's 16 configurations) against local nginx servers set up the ways the doctor's tests set them up,
# next to testssl.sh scanning the same server for protocols and ciphers (-p -E), and whether their findings agree:
# each ATS client profile's negotiated version predicted from testssl's protocols and suites against the doctor's.
# nginx on core 0, the doctor and testssl on core 1, rounds alternating; medians.
#   bash Benchmarks/doctor.sh [ROUNDS]     (default 5)
source "$(dirname "$0")/common.sh"
rounds=${1:-5}
command -v testssl >/dev/null && command -v openssl >/dev/null || { apt-get update -qq; apt-get install -y -qq testssl.sh openssl >/dev/null; }
host=api.kizuna.test
cd "$work"

# A private CA and leaves for $host: EC P-256, RSA 2048, RSA 1024, and one valid only in 2020.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/CN=Bench CA" 2>/dev/null
printf "subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n" "$host" >leaf.ext
leaf() {  # NAME KEYSPEC
    openssl req -newkey "$2" ${3:+-pkeyopt "$3"} -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$host" 2>/dev/null
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 300 -sha256 -extfile leaf.ext 2>/dev/null
}
leaf ec ec ec_paramgen_curve:P-256
leaf rsa rsa:2048
leaf weak rsa:1024
: >index.txt; echo 01 >serial
printf "[ca]\ndefault_ca=t\n[t]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n" >ca.cnf
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout expired.key -out expired.csr -subj "/CN=$host" 2>/dev/null
openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem -notext -startdate 20200101000000Z \
    -enddate 20201201000000Z -extfile leaf.ext 2>/dev/null

# name port certificate directives
servers=(
    "modern 18201 ec ssl_protocols TLSv1.2 TLSv1.3;"
    "tls10-no-fs 18202 rsa ssl_protocols TLSv1; ssl_ciphers AES128-SHA:AES256-SHA:@SECLEVEL=0;"
    "tls12-rsa-only 18203 rsa ssl_protocols TLSv1.2; ssl_ciphers AES128-GCM-SHA256:AES256-GCM-SHA384;"
    "rsa-1024 18204 weak ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers DEFAULT:@SECLEVEL=0;"
    "expired 18205 expired ssl_protocols TLSv1.2 TLSv1.3;"
)
blocks=""
for server in "${servers[@]}"; do
    read -r name port cert directives <<<"$server"
    blocks+="server { listen 127.0.0.1:$port ssl; ssl_certificate $work/$cert.pem; ssl_certificate_key $work/$cert.key; $directives root $work/www; }
"
done
mkdir -p tls/logs
cat >tls/nginx.conf <<CONF
daemon off;
worker_processes 1;
error_log stderr error;
pid $work/tls/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/tls/body; proxy_temp_path $work/tls/p; fastcgi_temp_path $work/tls/f; uwsgi_temp_path $work/tls/u; scgi_temp_path $work/tls/s;
    $blocks
}
CONF
taskset -c 0 nginx -p "$work/tls" -c "$work/tls/nginx.conf" 2>"$work/tls/err" &
for _ in $(seq 1 50); do curl -sk "https://127.0.0.1:18201/" -o /dev/null && break; sleep 0.1; done

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf "%-16s %10s %10s %8s  %s\n" server "doctor s" "testssl s" ratio "agreement (ATS profiles whose version testssl predicts)"
for server in "${servers[@]}"; do
    read -r name port _ <<<"$server"
    declare -a kd=() ts=()
    for round in $(seq 1 "$rounds"); do
        t0=$(now)
        taskset -c 1 "$kizuna" doctor "https://$host:$port/" --resolve "$host:$port:127.0.0.1" --ca-file ca.pem --json >"doctor-$name.json" || true
        t1=$(now)
        rm -f "testssl-$name.json"
        taskset -c 1 testssl --quiet --color 0 --warnings off --ip 127.0.0.1 -p -E --jsonfile "testssl-$name.json" "https://$host:$port" >/dev/null 2>&1
        t2=$(now)
        kd+=("$(echo "$t1 - $t0" | bc -l)")
        ts+=("$(echo "$t2 - $t1" | bc -l)")
    done
    agreement=$(python3 - "doctor-$name.json" "testssl-$name.json" <<'PY'
import json, sys
doctor = json.load(open(sys.argv[1]))
order = ["TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"]
ids = {"TLS1": "TLSv1.0", "TLS1_1": "TLSv1.1", "TLS1_2": "TLSv1.2", "TLS1_3": "TLSv1.3"}
prefixes = {"tls1": "TLSv1.0", "tls1_1": "TLSv1.1", "tls1_2": "TLSv1.2", "tls1_3": "TLSv1.3"}
fs = {0xC02C, 0xC02B, 0xC024, 0xC00A, 0xC023, 0xC009, 0xC030, 0xC02F, 0xC028, 0xC027, 0xC013}
rsa = {0x009D, 0x009C, 0x003D, 0x003C, 0x0035, 0x002F}
suites = {}
for f in json.load(open(sys.argv[2])):
    i = f.get("id", "")
    if i.startswith("cipher-") and "_x" in i:
        version = prefixes.get(i[len("cipher-"):].split("_x")[0])
        if version: suites.setdefault(version, set()).add(int(i.split("_x")[-1], 16))
agree = 0
for h in doctor["handshakes"]:
    allowed = fs | (set() if h["forwardSecrecy"] else rsa)
    ok = [v for v, codes in suites.items() if order.index(v) >= order.index(h["minimum"]) and (codes if v == "TLSv1.3" else codes & allowed)]
    predicted = max(ok, key=order.index) if ok else None
    agree += predicted == h.get("negotiated")
default = next(r for r in doctor["results"] if r["name"] == "ATS Default Connection")["result"]["passed"]
print(f"{agree}/{len(doctor['handshakes'])} (default {'PASS' if default else 'FAIL'})")
PY
)
    d=$(median "${kd[@]}")
    t=$(median "${ts[@]}")
    printf "%-16s %10.3f %10.2f %8.0f  %s\n" "$name" "$d" "$t" "$(echo "$t / $d" | bc -l)" "$agreement"
done
