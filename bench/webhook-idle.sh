#!/usr/bin/env bash
# The webhook's CPU while idle: start it with the bench certificates and no
# traffic, then read its user + system CPU time (/proc/PID/stat) over
# --seconds after a 3 s start-up. What remains when nothing is served is the
# certificate poll (--cert-poll-interval, 1 s) and the event loops' timers.
#
# Usage: bench/webhook-idle.sh [--seconds 60] [BINARY...]
#   BINARY  webhook binaries to measure side by side (default
#           build-bench/webhook/modelservice-webhook); each runs alone.
# Prints one markdown row per binary: ms of CPU per minute idle.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
seconds=60
if [[ ${1:-} == --seconds ]]; then seconds=$2; shift 2; fi
(($#)) || set -- "$repo/build-bench/webhook/modelservice-webhook"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ms-idle.XXXXXX")
pid=""
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$repo/certs-scripts/gen-certs.sh" --out "$tmp/certs" --ip 127.0.0.1 >/dev/null
free_port() { python3 "$repo/test/e2e/free-port.py"; }
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, in ticks
echo "| binary | CPU ms per minute idle |"
echo "|---|---:|"
for bin in "$@"; do
  port=$(free_port) probe=$(free_port) metrics=$(free_port)
  "$bin" --port "$port" --bind-address 127.0.0.1 --cert-dir "$tmp/certs" --log-level warn \
    --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$probe" >"$tmp/log" 2>&1 &
  pid=$!
  sleep 3
  a=$(cpu "$pid"); sleep "$seconds"; b=$(cpu "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  echo "| \`$bin\` | $(((b - a) * 1000 * 60 / tick / seconds)) |"
done
