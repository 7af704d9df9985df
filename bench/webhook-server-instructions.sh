#!/usr/bin/env bash
# Instructions per request of the whole running webhook (user space: TLS,
# HTTP, admission, metrics), for a review against the transport alone. The
# server runs under callgrind with one event loop; for each row wrk warms
# the connection up, the counters are zeroed (callgrind_control -z), wrk
# sends requests on one keep-alive connection for --seconds, the counters are
# dumped, and the instructions of every thread are divided by the requests
# wrk counted. Unlike bench/admission_profile this counts the transport and
# what the server does around a review (metrics, the log decision, the
# answer's write); unlike a timed run it is not moved by other load. The
# kernel's share (sockets, loopback) is not counted.
#
# Usage: bench/webhook-server-instructions.sh [--seconds 6] [--build-dir DIR]
# Needs: valgrind (callgrind_control), wrk, curl, $build_dir/webhook/modelservice-webhook.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
seconds=6 build_dir="$repo/build-bench"
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    *) echo "webhook-server-instructions.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build_dir/webhook/modelservice-webhook"
[[ -x $bin ]] || { echo "webhook-server-instructions.sh: no $bin" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ms-server-ir.XXXXXX")
pid=""
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$repo/certs-scripts/gen-certs.sh" --out "$tmp/certs" --ip 127.0.0.1 >/dev/null
free_port() { python3 "$repo/test/e2e/free-port.py"; }
port=$(free_port) probe=$(free_port) metrics=$(free_port)
(cd "$tmp" && exec valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" --threads 1 --port "$port" \
  --bind-address 127.0.0.1 --cert-dir "$tmp/certs" --log-level warn --metrics-bind-address "127.0.0.1:$metrics" \
  --health-probe-bind-address "127.0.0.1:$probe" >"$tmp/log" 2>&1) &
pid=$!
for _ in $(seq 300); do curl -fsS "http://127.0.0.1:$probe/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
load() {  # load method path fixture status seconds -> wrk's RESULT line
  BENCH_BODY="$here/fixtures/$3" BENCH_METHOD=$1 BENCH_STATUS=$4 \
    wrk -t 1 -c 1 -d "${5}s" -s "$here/review.lua" "https://127.0.0.1:$port$2" 2>&1 | grep '^RESULT '
}
echo "Run $(date -u +%Y-%m-%dT%H:%MZ), commit \`$(git -C "$repo" rev-parse --short HEAD)\`, \`${bin#"$repo"/}\` under callgrind, one event loop, one keep-alive connection, ${seconds} s per row."
echo
echo "| request | answer | requests | instructions per request |"
echo "|---|---|---:|---:|"
for row in "GET|/validate|validate-valid.json|405|GET /validate (the transport baseline)" \
           "POST|/no-handler|validate-valid.json|404|the valid review POSTed to a path with no handler" \
           "POST|/validate|validate-valid.json|200|valid review, allowed" \
           "POST|/validate|validate-invalid.json|200|invalid review, denied" \
           "POST|/mutate|mutate-defaults.json|200|defaults patch"; do
  IFS='|' read -r method path fixture status what <<<"$row"
  load "$method" "$path" "$fixture" "$status" 2 >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  line=$(load "$method" "$path" "$fixture" "$status" "$seconds")
  rm -f "$tmp"/cg.out*
  callgrind_control -d "$pid" >/dev/null 2>&1
  for _ in $(seq 50); do compgen -G "$tmp/cg.out*" >/dev/null && break; sleep 0.1; done
  sleep 0.5
  # Each dump file has its count once as "summary:" (or "totals:").
  ir=$(for f in "$tmp"/cg.out*; do awk '/^(summary|totals):/ {print $2; exit}' "$f"; done | awk '{s += $1} END {print s}')
  n=$(grep -o 'requests=[0-9]*' <<<"$line" | cut -d= -f2)
  errors=$(grep -o 'non200=[0-9]*' <<<"$line" | cut -d= -f2)
  ((errors == 0)) || { echo "webhook-server-instructions.sh: $what: $errors unexpected answers" >&2; exit 1; }
  echo "| $what | $status | $n | $((ir / n)) |"
done
