#!/usr/bin/env bash
# Writes after a cold start and after a leader change (issue 41, finding 8):
# on the local control plane (test/e2e/cluster.sh, light: kube-apiserver and
# etcd, audit log on), N ModelServices, half of them autoscaled while
# Prometheus is down (--prometheus-url is a loopback port nobody listens on:
# every query is refused, the poller's circuit breaker opens), converged by
# one controller; then
#   1. cold start: that controller is stopped (SIGTERM: it releases the
#      Lease) and started again;
#   2. leader change: a second controller starts as a standby (its caches
#      synced), and the leader is killed (SIGKILL: the standby takes the
#      Lease once it has expired, 15 s);
# each time the new leader is watched until its /metrics show every
# ModelService reconciled (controller_runtime_reconcile_total >= N, an empty
# queue, no busy worker), then --quiet seconds more (default 40: two
# autoscale intervals and more, so the breaker opens, probes and backs off),
# and its writes meanwhile are counted from the API server's audit log
# (create, update, patch and delete by the controller's user agent, Leases
# excluded, Events included). The goal is 0 each time.
#
# Usage: bench/controller/restart-writes.sh [options]
#   --n N           ModelServices (default 1000; half autoscaled)
#   --build-dir DIR CMake build directory (default build-bench; Release)
#   --no-build      use the binary already there
#   --quiet S       seconds watched after every object was reconciled (default 40)
#   --out FILE      the report (default bench/results/restart-writes.md)
#   --apiserver-args ARGS  kube-apiserver flags added to cluster.sh's
#   --keep          keep the work directory (logs, audit log)
# Exit status: 0 when both counts are 0, 1 otherwise, 2 on set-up failure.
set -euo pipefail
export E2E_CLUSTER_MODE="${E2E_CLUSTER_MODE:-light}"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=1000 build=1 quiet=40 keep=0 apiserver_args=""
build_dir="$repo/build-bench" out="$repo/bench/results/restart-writes.md"
command="bench/controller/restart-writes.sh"
for a in "$@"; do if [[ -z $a || $a =~ [[:space:]] ]]; then command+=" \"$a\""; else command+=" $a"; fi; done
while (($#)); do
  case "$1" in
    --n) n=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --quiet) quiet=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --apiserver-args) apiserver_args=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "restart-writes.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { say "ERROR: $*"; exit 2; }
start_s=$SECONDS

if ((build)); then
  say "building modelservice-controller (Release) in $build_dir"
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMS_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build_dir" --target modelservice-controller >&2
fi
bin="$build_dir/controller/modelservice-controller"
[[ -x $bin ]] || die "no $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/ms-restart-writes.XXXXXX")
cluster_dir="$work/cluster"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  "$repo/test/e2e/cluster.sh" --dir "$cluster_dir" down >/dev/null 2>&1 || true
  if ((keep)); then say "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
free_port() { python3 "$repo/test/e2e/free-port.py"; }

say "cluster up (light) in $cluster_dir"
E2E_AUDIT=1 E2E_APISERVER_ARGS="--service-cluster-ip-range=10.0.0.0/16 $apiserver_args ${E2E_APISERVER_ARGS:-}" \
  "$repo/test/e2e/cluster.sh" --dir "$cluster_dir" up >"$work/cluster-up.log" 2>&1 ||
  die "cluster.sh up failed (see $work/cluster-up.log)"
# shellcheck disable=SC1091
source "$cluster_dir/env"
"$KUBECTL" apply -f "$repo/manifests/crd/modelservices.modelops.dev.yaml" >/dev/null
"$KUBECTL" wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >/dev/null
"$KUBECTL" create namespace bench >/dev/null

# A port nobody listens on: Prometheus down, every query refused at once.
prom_port=$(free_port)
# controller NAME: start one (leader-electing, the Lease in namespace bench);
# sets its pid in ${NAME}_pid and its /metrics port in ${NAME}_mport.
controller() {
  local name=$1 mport pport pid
  mport=$(free_port) pport=$(free_port)
  "$bin" --kubeconfig "$KUBECONFIG" --concurrency 2 --log-format text --cert-mode provided \
    --leader-elect --leader-election-namespace bench --prometheus-url "http://127.0.0.1:$prom_port" \
    --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$pport" \
    >>"$work/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  printf -v "${name}_pid" '%s' "$pid"
  printf -v "${name}_mport" '%s' "$mport"
  printf -v "${name}_pport" '%s' "$pport"
}
metric() {  # metric PORT NAME: a sample of its /metrics (0 when absent)
  curl -fsS --max-time 10 "http://127.0.0.1:$1/metrics" 2>/dev/null | awk -v s="$2" '$1 == s { v = $2 } END { print v + 0 }'
}
leads() { [[ $(metric "$1" 'leader_election_master_status{name="modelservice-controller"}') == 1 ]]; }
wait_until() {  # wait_until SECONDS WHAT CMD...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || die "timed out after $((SECONDS - deadline + $1)) s waiting for $what"
    sleep 1
  done
}
reconciled() {  # reconciled PORT: every ModelService reconciled once, nothing queued or running
  python3 "$here/watch.py" reconciled --metrics "http://127.0.0.1:$1/metrics" --n "$n"
}
writes_since() {  # writes_since EPOCH: the controllers' writes since then, as JSON
  python3 "$here/watch.py" writes --audit "$E2E_AUDIT_LOG" --ua modelservice-controller --since "$1"
}

manifest() {
  local i
  for ((i = 0; i < n; i++)); do
    printf -- '---\napiVersion: modelops.dev/v1\nkind: ModelService\nmetadata:\n  name: m-%05d\n  namespace: bench\n' "$i"
    printf 'spec:\n  model: model-%d\n  image: registry.local/serve:1.4\n  replicas: 2\n' "$i"
    if ((i % 2)); then printf '  autoscaling: {minReplicas: 1, maxReplicas: 4, targetQueueLength: 5}\n'; fi
  done >"$work/ms.yaml"
}

# ---- the burst: one controller converges N ModelServices, half autoscaled
controller a
wait_until 120 "a leads" leads "$a_mport"
manifest
say "applying $n ModelServices ($((n / 2)) autoscaled, Prometheus down)"
t_apply=$SECONDS
"$KUBECTL" apply -f "$work/ms.yaml" >/dev/null
every=5
((n > 2000)) && every=15
until python3 "$here/watch.py" converged --n "$n" --phases Progressing,Ready,Degraded 2>/dev/null; do
  ((SECONDS - t_apply < 1800 + n / 5)) || die "not converged after $((SECONDS - t_apply)) s"
  kill -0 "$a_pid" 2>/dev/null || die "controller a exited (see $work/a.log)"
  sleep "$every"
done
say "converged in $((SECONDS - t_apply)) s; waiting until the controller has written nothing for 30 s"
# Settled: the autoscaled ones' first failed reads (MetricsUnavailable, its
# Warning) come at their resync after the burst.
settled() {
  local since
  since=$(python3 -c 'import time; print(time.time() - 30)')
  [[ $(writes_since "$since" | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])') == 0 ]]
}
sleep 30
until settled; do
  ((SECONDS - t_apply < 2700 + n / 5)) || die "still writing $((SECONDS - t_apply)) s after the apply"
  sleep 10
done
t_burst=$((SECONDS - t_apply))
degraded=$("$KUBECTL" -n bench get ms -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(sum(1 for m in items for c in (m.get("status") or {}).get("conditions", [])
          if c["type"] == "Degraded" and c["status"] == "True" and c["reason"] == "MetricsUnavailable"))')
say "settled after $t_burst s; Degraded/MetricsUnavailable: $degraded"

# watch_new_leader NAME: wait until NAME leads and has reconciled everything,
# then --quiet seconds; prints its writes since $mark as JSON.
watch_new_leader() {
  local mport_var="$1_mport"
  local mport=${!mport_var}
  wait_until 120 "$1 leads" leads "$mport"
  local led=$SECONDS
  wait_until 600 "$1 has reconciled every ModelService" reconciled "$mport"
  say "$1 leads; every ModelService reconciled $((SECONDS - led)) s later; watching $quiet s more"
  sleep "$quiet"
  writes_since "$mark"
}
now() { python3 -c 'import time; print(time.time())'; }

# ---- 1. cold start
mark=$(now)
t0=$SECONDS
kill -TERM "$a_pid"
wait "$a_pid" 2>/dev/null || true
controller a
cold=$(watch_new_leader a)
t_cold=$((SECONDS - t0))
say "cold start: $cold"

# ---- 2. leader change: b standby with synced caches, the leader killed
controller b
ready() { curl -fsS -o /dev/null "http://127.0.0.1:$1/readyz" 2>/dev/null; }
wait_until 300 "b's caches synced" ready "$b_pport"
mark=$(now)
t0=$SECONDS
kill -KILL "$a_pid"
change=$(watch_new_leader b)
t_change=$((SECONDS - t0))
say "leader change: $change"

total() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])["total"])' "$1"; }
verbs() { python3 -c 'import json, sys; d = json.loads(sys.argv[1])["by_verb"]; print(", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "none")' "$1"; }
commit=$(git -C "$repo" rev-parse --short HEAD)
[[ -z $(git -C "$repo" status --porcelain -- controller shared bench/controller) ]] || commit+=" (with uncommitted changes)"
mkdir -p "$(dirname "$out")"
cat >"$out" <<EOF
# Writes after a cold start and after a leader change

Run of $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -r)), commit $commit.
Command: \`$command\` (wall time $((SECONDS - start_s)) s).
The light cluster (kube-apiserver and etcd of test/e2e/cluster.sh, audit log on)${apiserver_args:+, kube-apiserver flags added: \`$apiserver_args\`}.

$n ModelServices, $((n / 2)) of them autoscaled (\`minReplicas: 1, maxReplicas: 4, targetQueueLength: 5\`) with
Prometheus down (\`--prometheus-url\` a loopback port nobody listens on: every
query refused, the circuit breaker open). One controller converged them
(leader election on, the Lease in namespace bench): the apply, the burst and
the first failed reads took $t_burst s until it wrote nothing for 30 s; $degraded
ModelServices were then \`Degraded\`/\`MetricsUnavailable\`. Then:

1. **cold start**: the controller stopped (SIGTERM, the Lease released) and
   started again;
2. **leader change**: a second controller started as a standby (caches
   synced), then the leader killed (SIGKILL; the standby takes the Lease
   once it has expired).

Each time the new leader was watched until its \`/metrics\` showed every
ModelService reconciled (\`controller_runtime_reconcile_total\` >= $n, an empty
queue, no busy worker) and $quiet s more (the poller's breaker opens, probes
and backs off meanwhile); its writes are the create, update, patch and delete
requests by user agent modelservice-controller in the audit log from the
moment the old leader was stopped, Leases excluded, Events included.

| | writes | by verb | seconds (stop to end of watch) |
|---|---:|---|---:|
| cold start | $(total "$cold") | $(verbs "$cold") | $t_cold |
| leader change | $(total "$change") | $(verbs "$change") | $t_change |
EOF
say "wrote $out"
cat "$out"
[[ $(total "$cold") == 0 && $(total "$change") == 0 ]]
