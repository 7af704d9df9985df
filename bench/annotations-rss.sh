#!/usr/bin/env bash
# The controller's peak RSS with N ModelServices carrying 200 KiB of
# annotations each (issue 23 item 7): e2e case 30-annotations-rss at N
# objects (default 500, 100 MiB of annotations) on a light cluster (etcd and
# kube-apiserver: no pods are made anyway), once for each controller binary
# given (default: BUILD_DIR's), each on a fresh cluster. A fresh controller
# lists them all, converges them (Deployment, Service, status), and its VmHWM
# is printed; the case fails above E2E_RSS_MAX_MIB (128).
#
# Usage: bench/annotations-rss.sh [--n 500] [--build-dir build] [CONTROLLER_BIN...]
# Results: bench/results/rss.md (written by hand from the lines this prints).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=500 build_dir="$root/build"
while (( $# )); do
  case "$1" in
    --n) n="$2"; shift 2 ;;
    --build-dir) build_dir="$(cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
bins=("$@")
(( ${#bins[@]} )) || bins=("$build_dir/controller/modelservice-controller")
for bin in "${bins[@]}"; do
  # run.sh takes both programs from one build directory: this one's webhook, `bin`.
  dir="$(mktemp -d)"
  mkdir -p "$dir/webhook" "$dir/controller"
  ln -s "$build_dir/webhook/modelservice-webhook" "$dir/webhook/modelservice-webhook"
  ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$dir/controller/modelservice-controller"
  log="$dir/run.log"
  start=$SECONDS
  # A /16 for Services: the suite's /24 holds about 250.
  E2E_APISERVER_ARGS="--service-cluster-ip-range=10.0.0.0/16 ${E2E_APISERVER_ARGS:-}" \
  E2E_RSS_N="$n" E2E_CASE_TIMEOUT=1200 E2E_CLUSTER_MODE=light BUILD_DIR="$dir" \
    bash "$root/test/e2e/run.sh" --no-build --verbose --only '30-annotations-rss' >"$log" 2>&1 && status=passed || status=failed
  echo "$bin: $status in $(( SECONDS - start )) s"
  grep -E "created|converged in|VmHWM|deleted in|expected|FAIL" "$log" | sed 's/^/  /'
  rm -rf "$dir"
done
