#!/usr/bin/env bash
# cluster.sh - a throw-away Kubernetes cluster on loopback for the ModelService
# e2e tests and the local demo: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and KWOK playing the kubelets of a small fleet of fake nodes
# (no containers run: KWOK moves pods through Pending -> Running -> Ready).
# A light mode runs only etcd + kube-apiserver (envtest-like: no controllers,
# no nodes; Deployments never get pods).
#
# Usage: test/e2e/cluster.sh [--dir DIR] COMMAND [ARGS]
#   up [--light|--real-node]
#                      build/cache the binaries (build-control-plane.sh, output in
#                      DIR/build.log), wipe DIR's previous cluster state, create
#                      fresh certificates, pick free ports, then start detached and
#                      health-check, in order (each waited for before the next):
#                        etcd                     /health
#                        kube-apiserver           /readyz and the "default" namespace
#                        kube-controller-manager  /healthz (all default controllers)
#                        kube-scheduler           /readyz
#                        kwok                     /healthz
#                      and finally waits until the fake nodes are Ready and
#                      untainted (but for the GPU taint below) and the "default" ServiceAccount exists (the
#                      controller manager's controllers run). Writes DIR/kubeconfig
#                      and DIR/env. If a cluster is already running in DIR it is
#                      stopped first (i.e. `up` = restart with a fresh cluster).
#                      --light (or E2E_CLUSTER_MODE=light): etcd + kube-apiserver only.
#                      --real-node (or E2E_REAL_NODE=1): the full cluster plus a
#                      real node, real-node-1: a kubelet with containerd and
#                      runc in network and mount namespaces of its own, where
#                      Pods run real containers (test/e2e/node/node.sh says
#                      what it needs and what it keeps off the host). It is
#                      labelled and tainted modelops.dev/real-node=true
#                      (NoSchedule): only Pods that tolerate it and select it
#                      land there (a namespace annotated as test/e2e/lib.sh's
#                      real_node_ns does sends all its Pods there). kube-apiserver then also gets
#                      --enable-aggregator-routing (webhooks and APIServices
#                      are called at their Service's endpoints: there is no
#                      kube-proxy), an egress selector for its cluster traffic
#                      and a client certificate for kubelets.
#                      Images: test/e2e/node/node.sh import DIR ARCHIVE.
#                      stdout: exactly one line, the absolute kubeconfig path,
#                      so `KUBECONFIG=$(test/e2e/cluster.sh up)` works. Progress
#                      goes to stderr. On failure: log tails on stderr, exit != 0.
#   down [--purge]     SIGTERM kwok, kube-scheduler, kube-controller-manager,
#                      kube-apiserver, then etcd (bounded wait, then SIGKILL).
#                      Keeps DIR (logs, audit log, certs, data) unless --purge,
#                      which deletes everything this script created there.
#   node-exec CMD...   (real node) run CMD in the node's network and mount
#                      namespaces, e.g. `ip addr` or `curl http://POD_IP:8080/`
#   status             one line per component (pid, address, health), after a first
#                      line "up (full|light): ..." - exit 0 - when every component of
#                      the mode runs and is healthy; otherwise the first line says
#                      "down" or "degraded" and the exit status is 1.
#   restart-apiserver  stops kube-apiserver and starts it again with exactly the
#                      same arguments (same port, certs, etcd, audit log - appended),
#                      waits for /readyz, updates DIR/env. stdout: kubeconfig path.
#                      The other components stay up and reconnect.
#   restart NAME...    the same for any component (etcd, kube-apiserver,
#                      kube-controller-manager, kube-scheduler, kwok).
#   heal               restarts, in order, every component of the mode that is not
#                      running (same arguments); a no-op when all run.
#   add-node NAME [--gpus N] [--cpu N] [--memory Q] [--pods N]
#                      (full mode) adds a fake node managed by KWOK (defaults:
#                      cpu 32, memory 128Gi, pods 250, no GPUs; --gpus N puts
#                      nvidia.com/gpu: N in capacity and allocatable, labels it
#                      nvidia.com/gpu.present=true and taints it
#                      nvidia.com/gpu=present:NoSchedule) and waits until it is Ready and
#                      has no other taint. Remove one with `kubectl delete node NAME`.
#
# The fleet created by `up` (full mode), all annotated kwok.x-k8s.io/node=fake
# and labelled modelops.dev/e2e-fleet=true:
#   kwok-cpu-1, kwok-cpu-2   cpu 32, memory 128Gi, pods 250
#   kwok-gpu-1               cpu 32, memory 256Gi, pods 250, nvidia.com/gpu 4,
#                            tainted nvidia.com/gpu=present:NoSchedule as GPU nodes of
#                            GKE, EKS and most clusters are (only pods that tolerate it land there)
# How pods move is in test/e2e/kwok/stages.yaml: a pod bound to a fake node is
# Running and Ready 1-1.5 s later; a pod whose container image contains
# "never-ready" (or that has the annotation modelops.dev/e2e-never-ready: "true")
# goes Running but never Ready (Ready=False, reason ContainersNotReady); a
# deleted pod disappears at once; a pod marked not ready by the node lifecycle
# controller (API server down longer than the node grace period) is Ready again.
#
# Environment:
#   MODELSERVICE_E2E_DIR      state dir (default /tmp/modelservice-e2e; --dir wins)
#   MODELSERVICE_TOOLS_CACHE  binary cache, see build-control-plane.sh
#   E2E_CLUSTER_MODE          full (default) | light
#   E2E_REAL_NODE             1: up --real-node
#   E2E_AUDIT                 1 (default): audit log at DIR/audit.log, level
#                             Metadata for every request, RequestReceived stage
#                             omitted (one JSON line per request, plus one
#                             ResponseStarted line for watches); 0: no audit log
#   E2E_READY_TIMEOUT         seconds to wait for each readiness step (default 60)
#   E2E_APISERVER_ARGS, E2E_CONTROLLER_MANAGER_ARGS, E2E_SCHEDULER_ARGS,
#   E2E_KWOK_ARGS             extra flags (word-split) for that component, e.g.
#                             E2E_APISERVER_ARGS="--feature-gates=Foo=true --v=2"
#
# Files in DIR:
#   kubeconfig             admin kubeconfig (certs embedded), context "modelservice-e2e"
#   env                    sourceable: exports KUBECONFIG KUBECTL E2E_DIR E2E_CLUSTER_MODE
#                          E2E_API_SERVER (https://127.0.0.1:PORT) E2E_API_PORT
#                          E2E_ETCD_URL E2E_ETCD_PORT E2E_ETCD_PEER_PORT
#                          E2E_KCM_PORT E2E_SCHEDULER_PORT E2E_KWOK_PORT (full mode)
#                          E2E_CA_CERT E2E_CA_KEY E2E_ADMIN_CERT E2E_ADMIN_KEY
#                          E2E_SA_KEY E2E_SA_PUB E2E_AUDIT_LOG (empty if off)
#                          E2E_APISERVER_LOG E2E_ETCD_LOG E2E_KCM_LOG E2E_SCHEDULER_LOG
#                          E2E_KWOK_LOG E2E_APISERVER_PID E2E_ETCD_PID E2E_KCM_PID
#                          E2E_SCHEDULER_PID E2E_KWOK_PID (empty when not running)
#                          E2E_KWOK_STAGES E2E_NODES (the fleet's node names)
#                          KUBE_APISERVER ETCD KUBE_CONTROLLER_MANAGER KUBE_SCHEDULER
#                          KWOK (binary paths)
#                          with a real node: E2E_REAL_NODE (its name), E2E_NODE_DIR,
#                          E2E_NODE_IP, E2E_POD_CIDR, CONTAINERD_ADDRESS, KUBELET
#   mode                   full | light
#   pki/                   ca.{crt,key}, apiserver.{crt,key} (SANs 127.0.0.1, ::1,
#                          localhost, kubernetes, kubernetes.default{,.svc,
#                          .svc.cluster.local}, 10.0.0.1), admin.{crt,key}
#                          (CN=admin, O=system:masters), sa.{key,pub} (RSA),
#                          kube-controller-manager.{crt,key} (CN=system:kube-controller-manager),
#                          kube-scheduler.{crt,key} (CN=system:kube-scheduler),
#                          kwok.{crt,key} (CN=kwok-controller, O=system:masters)
#   kube-controller-manager.kubeconfig kube-scheduler.kubeconfig kwok.kubeconfig
#   kube-scheduler.yaml    the scheduler's KubeSchedulerConfiguration
#   etcd-data/             etcd data dir
#   NAME.log NAME.pid NAME.args (one arg per line) for each component,
#   build.log audit.log audit-policy.yaml
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prog="cluster.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
log() { echo "$prog: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ALL_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
FLEET=(kwok-cpu-1 kwok-cpu-2 kwok-gpu-1)

dir="${MODELSERVICE_E2E_DIR:-/tmp/modelservice-e2e}"
cmd=""
purge=0
mode="${E2E_CLUSTER_MODE:-full}"
real_node="${E2E_REAL_NODE:-0}"
REAL_NODE_NAME="${E2E_NODE_NAME:-real-node-1}"
node_sh="$here/node/node.sh"
cmd_args=()
while (( $# )); do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || die "--dir needs an argument"; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --purge) purge=1; shift ;;
    --light) mode=light; shift ;;
    --real-node) real_node=1; shift ;;
    -h|--help|help) usage; exit 0 ;;
    up|down|status|restart-apiserver|restart|heal|add-node|node-exec)
      if [[ -z "$cmd" ]]; then cmd="$1"; shift
      else cmd_args+=("$1"); shift
      fi ;;
    *)
      if [[ "$cmd" == restart || "$cmd" == add-node || "$cmd" == node-exec ]]; then cmd_args+=("$1"); shift
      else usage >&2; die "unknown argument: $1"
      fi ;;
  esac
done
[[ -n "$cmd" ]] || { usage >&2; exit 2; }
[[ "$mode" == full || "$mode" == light ]] || die "E2E_CLUSTER_MODE must be full or light (got $mode)"
[[ "$real_node" == 1 && "$mode" == light ]] && die "--real-node needs the full cluster, not --light"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
pki="$dir/pki"
timeout="${E2E_READY_TIMEOUT:-60}"

# components_of MODE: the components that mode runs, in start order.
components_of() {
  if [[ "$1" == light ]]; then echo etcd kube-apiserver; else echo "${ALL_COMPONENTS[*]}"; fi
}

# ---------------------------------------------------------------- processes

# pid_of NAME: print the pid from DIR/NAME.pid if that process is alive and is
# really our NAME binary (guards against pid reuse); return 1 otherwise.
pid_of() {
  local f="$dir/$1.pid" pid exe
  [[ -s "$f" ]] || return 1
  pid="$(<"$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
  case "${exe##*/}" in
    ""|"$1"|"$1 (deleted)") ;;
    *) return 1 ;;
  esac
  # A zombie (exited, not yet reaped) counts as dead.
  if [[ -r "/proc/$pid/stat" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" == Z ]]; then
    return 1
  fi
  echo "$pid"
}

# stop NAME GRACE_SECONDS
stop() {
  local name="$1" grace="$2" pid i
  if pid="$(pid_of "$name")"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for (( i = 0; i < grace * 10; i++ )); do
      pid_of "$name" >/dev/null || break
      sleep 0.1
    done
    if pid_of "$name" >/dev/null; then
      log "$name did not exit after ${grace}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for (( i = 0; i < 50; i++ )); do
        pid_of "$name" >/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$dir/$name.pid"
}

# binary_of NAME: the binary path of a component (after the build or load_env).
binary_of() {
  case "$1" in
    etcd) echo "$ETCD" ;;
    kube-apiserver) echo "$KUBE_APISERVER" ;;
    kube-controller-manager) echo "$KUBE_CONTROLLER_MANAGER" ;;
    kube-scheduler) echo "$KUBE_SCHEDULER" ;;
    kwok) echo "$KWOK" ;;
  esac
}

# start NAME: run the component's binary with the args in DIR/NAME.args,
# detached (own session, stdin from /dev/null, output appended to DIR/NAME.log).
start() {
  local name="$1" bin args=()
  bin="$(binary_of "$name")"
  [[ -x "$bin" ]] || fail "no $name binary at '$bin'"
  mapfile -t args <"$dir/$name.args"
  echo "==== $(date -u +%Y-%m-%dT%H:%M:%SZ) $prog starting $name" >>"$dir/$name.log"
  # Without job control a background child is not a process-group leader, so
  # setsid execs in place and $! is the pid of the binary itself.
  setsid nohup "$bin" "${args[@]}" </dev/null >>"$dir/$name.log" 2>&1 &
  local pid=$! i
  echo "$pid" >"$dir/$name.pid"
  # Wait until the forked shell has exec'ed the binary, so that pid_of (which
  # checks /proc/PID/exe) does not mistake the short-lived shell for a dead server.
  for (( i = 0; i < 100; i++ )); do
    [[ "$(readlink "/proc/$pid/exe" 2>/dev/null || true)" == "$bin" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
}

show_logs() {
  local f n
  for f in build.log etcd.log kube-apiserver.log kube-controller-manager.log kube-scheduler.log kwok.log \
           node/holder.log node/containerd.log node/kubelet.log node/proxy.log; do
    [[ -s "$dir/$f" ]] || continue
    n=30; [[ "$f" == etcd.log ]] && n=15
    echo "----- last $n lines of $dir/$f -----" >&2
    tail -n "$n" "$dir/$f" >&2
  done
}

# fail MSG: report, show log tails and exit 1. During `up` the half-started
# cluster is stopped (logs stay in DIR); the restart commands leave the rest running.
fail() {
  log "ERROR: $*"
  show_logs
  if [[ "$cmd" == up ]]; then
    local c
    if [[ -d "$dir/node" ]]; then "$node_sh" stop "$dir" || true; fi
    for c in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c" 5; done
  fi
  exit 1
}

# ---------------------------------------------------------------- helpers

# free_port: print a currently unused loopback TCP port (random, not fixed).
free_port() {
  local p i
  if command -v python3 >/dev/null 2>&1; then
    python3 "$(dirname "${BASH_SOURCE[0]}")/free-port.py"  # below the ephemeral range
    return
  fi
  for (( i = 0; i < 100; i++ )); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))  # below the usual ephemeral range
    # Connection refused => nobody listens there.
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

api_curl() {  # api_curl PATH [curl args...]
  local path="$1"; shift
  curl -sS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "$@" "https://127.0.0.1:$api_port$path"
}

# health URL: the body of a component's health endpoint (self-signed serving
# certificates, so no verification; loopback only).
health() { curl -sS -k --max-time 2 "$1" 2>/dev/null || true; }

health_url() {  # health_url NAME
  case "$1" in
    etcd) echo "http://127.0.0.1:$etcd_port/health" ;;
    kube-apiserver) echo "https://127.0.0.1:$api_port/readyz" ;;
    kube-controller-manager) echo "https://127.0.0.1:$kcm_port/healthz" ;;
    kube-scheduler) echo "https://127.0.0.1:$sched_port/readyz" ;;
    kwok) echo "http://127.0.0.1:$kwok_port/healthz" ;;
  esac
}

healthy() {  # healthy NAME: the component answers its health check
  local out
  case "$1" in
    etcd) [[ "$(health "$(health_url etcd)")" == *'"health":"true"'* ]] ;;
    kube-apiserver) [[ "$(api_curl /readyz 2>/dev/null || true)" == ok ]] ;;
    *) out="$(health "$(health_url "$1")")"; [[ "$out" == ok ]] ;;
  esac
}

# wait_healthy NAME: until its health check passes (the process must stay up).
wait_healthy() {
  local name="$1" deadline=$(( SECONDS + timeout )) t0=$SECONDS
  until healthy "$name"; do
    pid_of "$name" >/dev/null || fail "$name exited (see $dir/$name.log)"
    (( SECONDS < deadline )) || fail "$name not healthy after ${timeout}s ($(health_url "$name"))"
    sleep 0.1
  done
  if [[ "$name" == kube-apiserver ]]; then
    until [[ "$(api_curl /api/v1/namespaces/default -o /dev/null -w '%{http_code}' 2>/dev/null || true)" == 200 ]]; do
      pid_of kube-apiserver >/dev/null || fail "kube-apiserver exited (see $dir/kube-apiserver.log)"
      (( SECONDS < deadline )) || fail "kube-apiserver: no default namespace after ${timeout}s"
      sleep 0.1
    done
  fi
  log "$name healthy ($(( SECONDS - t0 ))s)"
}

# client_cert NAME SUBJECT: pki/NAME.{crt,key}, a client certificate signed by
# the cluster CA (EC P-256: cheap to make). Run inside pki/.
client_cert() {
  local name="$1" subj="$2"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj"
  printf '%s\n' \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth" \
    >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
    -extfile "$name.ext" -out "$name.crt"
}

# gen_certs: fresh CA, serving cert, client certs and SA key pair.
gen_certs() {
  rm -rf "$pki"
  mkdir -p "$pki"
  chmod 700 "$pki"
  (
    cd "$pki"
    exec 2>"$pki/openssl.log"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=modelservice-e2e-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin"
    printf '%s\n' \
      "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" \
      >admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile admin.ext -out admin.crt
    # The aggregation layer (APIServices, e.g. external.metrics.k8s.io): a CA
    # of its own (pki/front-proxy-ca.{crt,key}, as kubeadm does) and the client
    # certificate kube-apiserver shows extension API servers when it proxies a
    # request to them (pki/front-proxy-client.{crt,key}).
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout front-proxy-ca.key -out front-proxy-ca.crt -days 3650 -subj "/CN=modelservice-e2e-front-proxy-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout front-proxy-client.key -out front-proxy-client.csr -subj "/CN=front-proxy-client"
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" >front-proxy-client.ext
    openssl x509 -req -in front-proxy-client.csr -CA front-proxy-ca.crt -CAkey front-proxy-ca.key -CAcreateserial \
      -days 3650 -extfile front-proxy-client.ext -out front-proxy-client.crt
    rm -f front-proxy-ca.srl
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
    if [[ "$mode" == full ]]; then
      # The bootstrap RBAC policy binds these user names to the components' roles.
      client_cert kube-controller-manager "/CN=system:kube-controller-manager"
      client_cert kube-scheduler "/CN=system:kube-scheduler"
      # KWOK patches node and pod status, renews node Leases, deletes pods.
      client_cert kwok "/O=system:masters/CN=kwok-controller"
    fi
    rm -f ./*.csr ./*.ext ca.srl
  ) || { cat "$pki/openssl.log" >&2; die "certificate generation failed"; }
  rm -f "$pki/openssl.log"
  if [[ "$real_node" == 1 ]]; then
    E2E_NODE_NAME="$REAL_NODE_NAME" "$node_sh" certs "$dir" || die "the real node's certificates"
  fi
}

# write_kubeconfig FILE USER: a kubeconfig for USER's client certificate
# (pki/USER.{crt,key}), certificates embedded, context "modelservice-e2e".
write_kubeconfig() {
  local file="$1" user="$2" b64="base64 -w0"
  base64 -w0 </dev/null >/dev/null 2>&1 || b64="base64"
  cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: modelservice-e2e
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $($b64 <"$pki/ca.crt" | tr -d '\n')
users:
- name: $user
  user:
    client-certificate-data: $($b64 <"$pki/$user.crt" | tr -d '\n')
    client-key-data: $($b64 <"$pki/$user.key" | tr -d '\n')
contexts:
- name: modelservice-e2e
  context:
    cluster: modelservice-e2e
    user: $user
current-context: modelservice-e2e
EOF
  chmod 600 "$file.tmp"
  mv -f "$file.tmp" "$file"
}

write_env() {
  local audit_log=""
  [[ -f "$dir/audit-policy.yaml" ]] && grep -qx -- "--audit-log-path=$dir/audit.log" "$dir/kube-apiserver.args" \
    && audit_log="$dir/audit.log"
  {
    echo "# generated by test/e2e/cluster.sh; source this file"
    printf 'export KUBECONFIG=%q\n' "$dir/kubeconfig"
    printf 'export KUBECTL=%q\n' "$KUBECTL"
    printf 'export KUBE_APISERVER=%q\n' "$KUBE_APISERVER"
    printf 'export ETCD=%q\n' "$ETCD"
    printf 'export KUBE_CONTROLLER_MANAGER=%q\n' "$KUBE_CONTROLLER_MANAGER"
    printf 'export KUBE_SCHEDULER=%q\n' "$KUBE_SCHEDULER"
    printf 'export KWOK=%q\n' "$KWOK"
    printf 'export E2E_DIR=%q\n' "$dir"
    printf 'export E2E_CLUSTER_MODE=%q\n' "$mode"
    printf 'export E2E_API_SERVER=%q\n' "https://127.0.0.1:$api_port"
    printf 'export E2E_API_PORT=%q\n' "$api_port"
    printf 'export E2E_ETCD_URL=%q\n' "http://127.0.0.1:$etcd_port"
    printf 'export E2E_ETCD_PORT=%q\n' "$etcd_port"
    printf 'export E2E_ETCD_PEER_PORT=%q\n' "$etcd_peer_port"
    printf 'export E2E_KCM_PORT=%q\n' "$kcm_port"
    printf 'export E2E_SCHEDULER_PORT=%q\n' "$sched_port"
    printf 'export E2E_KWOK_PORT=%q\n' "$kwok_port"
    printf 'export E2E_CA_CERT=%q\n' "$pki/ca.crt"
    printf 'export E2E_CA_KEY=%q\n' "$pki/ca.key"
    printf 'export E2E_ADMIN_CERT=%q\n' "$pki/admin.crt"
    printf 'export E2E_ADMIN_KEY=%q\n' "$pki/admin.key"
    printf 'export E2E_SA_KEY=%q\n' "$pki/sa.key"
    printf 'export E2E_SA_PUB=%q\n' "$pki/sa.pub"
    printf 'export E2E_AUDIT_LOG=%q\n' "$audit_log"
    printf 'export E2E_APISERVER_LOG=%q\n' "$dir/kube-apiserver.log"
    printf 'export E2E_ETCD_LOG=%q\n' "$dir/etcd.log"
    printf 'export E2E_KCM_LOG=%q\n' "$dir/kube-controller-manager.log"
    printf 'export E2E_SCHEDULER_LOG=%q\n' "$dir/kube-scheduler.log"
    printf 'export E2E_KWOK_LOG=%q\n' "$dir/kwok.log"
    printf 'export E2E_APISERVER_PID=%q\n' "$(pid_of kube-apiserver || true)"
    printf 'export E2E_ETCD_PID=%q\n' "$(pid_of etcd || true)"
    printf 'export E2E_KCM_PID=%q\n' "$(pid_of kube-controller-manager || true)"
    printf 'export E2E_SCHEDULER_PID=%q\n' "$(pid_of kube-scheduler || true)"
    printf 'export E2E_KWOK_PID=%q\n' "$(pid_of kwok || true)"
    printf 'export E2E_KWOK_STAGES=%q\n' "$( [[ "$mode" == full ]] && echo "$here/kwok/stages.yaml" || true)"
    printf 'export E2E_NODES=%q\n' "$( [[ "$mode" == full ]] && echo "${FLEET[*]}" || true)"
    if [[ "$real_node" == 1 ]]; then
      printf 'export E2E_REAL_NODE=%q\n' "$REAL_NODE_NAME"
      printf 'export E2E_NODE_DIR=%q\n' "$dir/node"
      printf 'export E2E_NODE_IP=%q\n' 10.86.0.1
      printf 'export E2E_POD_CIDR=%q\n' 10.88.0.0/24
      printf 'export CONTAINERD_ADDRESS=%q\n' "$dir/node/containerd.sock"
      printf 'export KUBELET=%q\n' "$KUBELET"
    else
      printf 'export E2E_REAL_NODE=\n'
    fi
  } >"$dir/env.tmp"
  mv -f "$dir/env.tmp" "$dir/env"
}

load_env() {
  [[ -s "$dir/env" && -s "$dir/kube-apiserver.args" ]] || die "no cluster state in $dir (run: $0 --dir $dir up)"
  # shellcheck disable=SC1091
  source "$dir/env"
  mode="${E2E_CLUSTER_MODE:-light}"
  api_port="$E2E_API_PORT"
  etcd_port="$E2E_ETCD_PORT"
  etcd_peer_port="$E2E_ETCD_PEER_PORT"
  kcm_port="${E2E_KCM_PORT:-}"
  sched_port="${E2E_SCHEDULER_PORT:-}"
  kwok_port="${E2E_KWOK_PORT:-}"
  KUBE_CONTROLLER_MANAGER="${KUBE_CONTROLLER_MANAGER:-}"
  KUBE_SCHEDULER="${KUBE_SCHEDULER:-}"
  KWOK="${KWOK:-}"
  KUBELET="${KUBELET:-}"
  if [[ -n "${E2E_REAL_NODE:-}" ]]; then real_node=1 REAL_NODE_NAME="$E2E_REAL_NODE"; else real_node=0; fi
}

kc() { "$KUBECTL" --kubeconfig "$dir/kubeconfig" --request-timeout=20s "$@"; }

# node_yaml NAME GPUS CPU MEMORY PODS IP: a fake node for KWOK to manage (IP
# is only data: its InternalIP, the pods' hostIP).
node_yaml() {
  local name="$1" gpus="$2" cpu="$3" mem="$4" pods="$5" ip="$6" res gpu_label="" spec="spec: {}"
  res="cpu: \"$cpu\"
      memory: $mem
      pods: \"$pods\""
  if (( gpus > 0 )); then
    res+="
      nvidia.com/gpu: \"$gpus\""
    gpu_label='
    nvidia.com/gpu.present: "true"'
    spec='spec:
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}'
  fi
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    modelops.dev/e2e-fleet: "true"$gpu_label
$spec
status:
  addresses:
  - type: InternalIP
    address: $ip
  - type: Hostname
    address: $name
  allocatable:
      $res
  capacity:
      $res
EOF
}

# nodes_ready NAME...: each node exists, is Ready and has no taints but the
# GPU nodes' own nvidia.com/gpu (the node lifecycle controller's not-ready
# taints are gone).
nodes_ready() {
  local out n
  out="$(kc get nodes -o 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{range .spec.taints[*]} {.key}{end}{"\n"}{end}' 2>/dev/null)" || return 1
  out="${out// nvidia.com\/gpu/}"
  # A node with other taints prints "NAME True KEY...", which does not match.
  for n in "$@"; do grep -qx "$n True" <<<"$out" || return 1; done
}

wait_nodes_ready() {
  local deadline=$(( SECONDS + timeout )) t0=$SECONDS
  until nodes_ready "$@"; do
    pid_of kwok >/dev/null || fail "kwok exited (see $dir/kwok.log)"
    (( SECONDS < deadline )) || fail "nodes $* not Ready and untainted after ${timeout}s: $(kc get nodes -o wide 2>&1 | tr '\n' ' ')"
    sleep 0.2
  done
  log "nodes Ready: $* ($(( SECONDS - t0 ))s)"
}

# ---------------------------------------------------------------- arguments

write_args_etcd() {
  local etcd_url="http://127.0.0.1:$etcd_port" peer_url="http://127.0.0.1:$etcd_peer_port"
  printf '%s\n' \
    "--name=e2e" \
    "--data-dir=$dir/etcd-data" \
    "--listen-client-urls=$etcd_url" \
    "--advertise-client-urls=$etcd_url" \
    "--listen-peer-urls=$peer_url" \
    "--initial-advertise-peer-urls=$peer_url" \
    "--initial-cluster=e2e=$peer_url" \
    "--unsafe-no-fsync" \
    >"$dir/etcd.args"
}

write_args_apiserver() {
  # envtest's flags, plus our own serving cert and audit log.
  local args=(
    "--etcd-servers=http://127.0.0.1:$etcd_port"
    "--bind-address=127.0.0.1"
    # Loopback only, deterministic: without these the server advertises the
    # host's default-route IP and fails to start on hosts without a default
    # route; 127.0.0.1 is not a valid Endpoints address, so the endpoint
    # reconciler of the "kubernetes" Service is switched off.
    "--advertise-address=127.0.0.1"
    "--endpoint-reconciler-type=none"
    "--secure-port=$api_port"
    "--cert-dir=$pki"
    "--tls-cert-file=$pki/apiserver.crt"
    "--tls-private-key-file=$pki/apiserver.key"
    "--client-ca-file=$pki/ca.crt"
    "--authorization-mode=RBAC"
    "--service-cluster-ip-range=10.0.0.0/24"
    "--allow-privileged=true"
    "--service-account-issuer=https://127.0.0.1:$api_port/"
    "--service-account-key-file=$pki/sa.pub"
    "--service-account-signing-key-file=$pki/sa.key"
    # The aggregation layer: who kube-apiserver is towards extension API
    # servers, and the headers (user, groups) they may trust from it.
    "--proxy-client-cert-file=$pki/front-proxy-client.crt"
    "--proxy-client-key-file=$pki/front-proxy-client.key"
    "--requestheader-client-ca-file=$pki/front-proxy-ca.crt"
    "--requestheader-allowed-names=front-proxy-client"
    "--requestheader-username-headers=X-Remote-User"
    "--requestheader-group-headers=X-Remote-Group"
    "--requestheader-extra-headers-prefix=X-Remote-Extra-"
  )
  if [[ "$real_node" == 1 ]]; then
    # The real node (test/e2e/node/node.sh): kube-apiserver reaches the
    # cluster (webhooks through their Service, kubelets, APIServices) through
    # the node's netns proxy, at the endpoints of Services (no kube-proxy
    # makes ClusterIPs reachable), and shows kubelets a client certificate.
    args+=(
      "--egress-selector-config-file=$dir/egress-selector.yaml"
      "--enable-aggregator-routing=true"
      "--kubelet-client-certificate=$pki/apiserver-kubelet-client.crt"
      "--kubelet-client-key=$pki/apiserver-kubelet-client.key"
      "--kubelet-certificate-authority=$pki/ca.crt"
      "--kubelet-preferred-address-types=InternalIP,Hostname"
      # A namespace can send all its Pods to the real node (annotations
      # scheduler.alpha.kubernetes.io/node-selector and .../defaultTolerations),
      # e.g. a ModelService's, whose spec has no placement fields.
      "--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction"
    )
  fi
  # Without the controller manager nothing creates the "default"
  # ServiceAccounts that the ServiceAccount admission plugin requires.
  [[ "$mode" == light ]] && args+=("--disable-admission-plugins=ServiceAccount")
  if [[ "${E2E_AUDIT:-1}" != 0 ]]; then
    cat >"$dir/audit-policy.yaml" <<'EOF'
# Log every request at Metadata level (user, user agent, verb, resource,
# response code; no bodies), writes of the controller's leader Lease with
# their request body (its renewTime says when a renewal was sent, which the
# received time cannot after the API server was paused), and deletes of the
# kinds a ModelService owns with theirs (the DeleteOptions: propagation
# policy, preconditions). RequestReceived is
# omitted so that each request yields one ResponseComplete event (watches also
# yield ResponseStarted).
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: Request
  verbs: ["create", "update", "patch"]
  namespaces: ["modelservice-system"]
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: Request
  verbs: ["delete"]
  resources:
  - group: apps
    resources: ["deployments"]
  - group: ""
    resources: ["services"]
  - group: autoscaling
    resources: ["horizontalpodautoscalers"]
- level: Metadata
EOF
    args+=("--audit-policy-file=$dir/audit-policy.yaml" "--audit-log-path=$dir/audit.log"
           "--audit-log-format=json" "--audit-log-mode=blocking")
  fi
  extra_args E2E_APISERVER_ARGS
  printf '%s\n' "${args[@]}" >"$dir/kube-apiserver.args"
}

# extra_args VAR: append the word-split flags in $VAR to the caller's args.
extra_args() {
  local extra=()
  if [[ -n "${!1:-}" ]]; then
    read -r -a extra <<<"${!1}"
    args+=("${extra[@]}")
  fi
}

write_args_kcm() {
  local args=(
    "--kubeconfig=$dir/kube-controller-manager.kubeconfig"
    "--bind-address=127.0.0.1"
    "--secure-port=$kcm_port"
    "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
    "--leader-elect=false"
    # All default controllers (Deployment, ReplicaSet, garbage collector,
    # namespace, EndpointSlice, node lifecycle, service account + tokens,
    # CSR signing, ...), each with its own service-account credentials.
    "--controllers=*"
    "--use-service-account-credentials=true"
    "--service-account-private-key-file=$pki/sa.key"
    "--root-ca-file=$pki/ca.crt"
    "--cluster-signing-cert-file=$pki/ca.crt"
    "--cluster-signing-key-file=$pki/ca.key"
    # client-go's default of 20/30 makes 200 Deployments take minutes.
    "--kube-api-qps=200"
    "--kube-api-burst=400"
    # The HPA controller looks every 2 s instead of 15 s, so that the
    # autoscaling mode HPA (case 63-hpa-mode) scales within seconds.
    "--horizontal-pod-autoscaler-sync-period=2s"
  )
  extra_args E2E_CONTROLLER_MANAGER_ARGS
  printf '%s\n' "${args[@]}" >"$dir/kube-controller-manager.args"
}

write_args_scheduler() {
  cat >"$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $dir/kube-scheduler.kubeconfig
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
EOF
  local args=(
    "--config=$dir/kube-scheduler.yaml"
    "--bind-address=127.0.0.1"
    "--secure-port=$sched_port"
  )
  extra_args E2E_SCHEDULER_ARGS
  printf '%s\n' "${args[@]}" >"$dir/kube-scheduler.args"
}

write_args_kwok() {
  local args=(
    "--kubeconfig=$dir/kwok.kubeconfig"
    "--config=$here/kwok/stages.yaml"
    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake"
    "--node-lease-duration-seconds=40"
    # Pod IPs are only data here (EndpointSlices); nothing connects to them.
    "--cidr=10.244.0.0/16"
    "--server-address=127.0.0.1:$kwok_port"
  )
  extra_args E2E_KWOK_ARGS
  printf '%s\n' "${args[@]}" >"$dir/kwok.args"
}

# ---------------------------------------------------------------- commands

do_down() {
  local c
  # The real node first: its containers, containerd, the kubelet, its
  # namespaces and cgroups (a no-op without one).
  if [[ -d "$dir/node" ]]; then "$node_sh" stop "$dir" || log "WARNING: stopping the real node failed"; fi
  for c in kwok kube-scheduler kube-controller-manager; do stop "$c" 10; done
  stop kube-apiserver 20
  stop etcd 10
  if (( purge )); then
    rm -rf "$pki" "$dir/etcd-data"
    rm -f "$dir"/{kubeconfig,kubeconfig.tmp,env,env.tmp,mode,build.log,audit.log,audit-policy.yaml,kube-scheduler.yaml}
    rm -f "$dir"/*.kubeconfig "$dir"/*.kubeconfig.tmp
    for c in "${ALL_COMPONENTS[@]}"; do rm -f "$dir/$c".{log,args,pid}; done
    rm -f "$dir"/audit-*.log "$dir"/{real-node,egress-selector.yaml}
    rm -rf "$dir/node"
    rmdir "$dir" 2>/dev/null || true
    log "purged $dir"
  fi
}

do_up() {
  local start_time=$SECONDS exports purge=0 c  # (purge=0: never --purge here)
  for c in "${ALL_COMPONENTS[@]}"; do
    if pid_of "$c" >/dev/null; then log "a cluster is already running in $dir: restarting it from scratch"; break; fi
  done
  do_down

  # 1. Binaries (cached; a no-op when already built).
  local build_args=()
  [[ "$mode" == light ]] && build_args+=(--light)
  [[ "$real_node" == 1 ]] && build_args+=(--real-node)
  if ! exports="$("$here/build-control-plane.sh" "${build_args[@]}" 2>"$dir/build.log")"; then
    fail "building the control-plane binaries failed"
  fi
  exports="$(tail -n 1 <<<"$exports")"
  [[ "$exports" == "export KUBE_APISERVER="* ]] || fail "unexpected output from build-control-plane.sh: $exports"
  eval "$exports"
  local t_build=$(( SECONDS - start_time ))

  # 2. Fresh state.
  rm -rf "$dir/etcd-data"
  rm -f "$dir"/{kubeconfig,env,audit.log,audit-policy.yaml,kube-scheduler.yaml,real-node,egress-selector.yaml} "$dir"/*.kubeconfig
  for c in "${ALL_COMPONENTS[@]}"; do rm -f "$dir/$c".{log,args}; done
  echo "$mode" >"$dir/mode"
  [[ "$real_node" == 1 ]] && echo "$REAL_NODE_NAME" >"$dir/real-node"
  gen_certs

  # 3. Free ports (distinct).
  local ports=() p
  declare -A seen=()
  while (( ${#ports[@]} < 6 )); do
    p="$(free_port)" || die "could not find free ports"
    [[ -n "$p" && -z "${seen[$p]:-}" ]] || continue
    seen[$p]=1; ports+=("$p")
  done
  api_port="${ports[0]}" etcd_port="${ports[1]}" etcd_peer_port="${ports[2]}"
  kcm_port="" sched_port="" kwok_port=""
  if [[ "$mode" == full ]]; then kcm_port="${ports[3]}" sched_port="${ports[4]}" kwok_port="${ports[5]}"; fi

  # 4. etcd, kube-apiserver.
  write_args_etcd
  start etcd
  wait_healthy etcd
  write_args_apiserver
  start kube-apiserver
  wait_healthy kube-apiserver
  write_kubeconfig "$dir/kubeconfig" admin

  if [[ "$mode" == full ]]; then
    # 5. The fleet (KWOK finds the nodes when it starts), then the
    # controller manager, the scheduler and KWOK.
    local n i=0 fleet_yaml=""
    for n in "${FLEET[@]}"; do
      i=$(( i + 1 ))
      if [[ "$n" == *gpu* ]]; then fleet_yaml+="$(node_yaml "$n" 4 32 256Gi 250 "10.243.0.$i")"$'\n---\n'
      else fleet_yaml+="$(node_yaml "$n" 0 32 128Gi 250 "10.243.0.$i")"$'\n---\n'
      fi
    done
    kc apply -f - <<<"$fleet_yaml" >/dev/null || fail "could not create the fake nodes"
    write_kubeconfig "$dir/kube-controller-manager.kubeconfig" kube-controller-manager
    write_kubeconfig "$dir/kube-scheduler.kubeconfig" kube-scheduler
    write_kubeconfig "$dir/kwok.kubeconfig" kwok
    write_args_kcm
    start kube-controller-manager
    wait_healthy kube-controller-manager
    write_args_scheduler
    start kube-scheduler
    wait_healthy kube-scheduler
    write_args_kwok
    start kwok
    wait_healthy kwok
    # 6. Working, not just serving: the nodes are Ready and untainted (KWOK
    # and the node lifecycle controller), the service-account controller runs.
    wait_nodes_ready "${FLEET[@]}"
    local deadline=$(( SECONDS + timeout ))
    until kc -n default get serviceaccount default >/dev/null 2>&1; do
      pid_of kube-controller-manager >/dev/null || fail "kube-controller-manager exited (see $dir/kube-controller-manager.log)"
      (( SECONDS < deadline )) || fail "no default ServiceAccount after ${timeout}s: the controller manager's controllers do not run"
      sleep 0.2
    done
    if [[ "$real_node" == 1 ]]; then start_real_node; fi
  fi

  write_env
  log "up ($mode) in $(( SECONDS - start_time ))s (binaries ${t_build}s): https://127.0.0.1:$api_port (etcd http://127.0.0.1:$etcd_port); source $dir/env"
  echo "$dir/kubeconfig"
}

# start_real_node: the kubelet's user (system:node:NAME in system:nodes) gets
# the bootstrap ClusterRole system:node (the API server authorizes with RBAC
# only, no Node authorizer), then test/e2e/node/node.sh starts the node and
# waits until it is Ready.
start_real_node() {
  kc apply -f - >/dev/null <<EOF || fail "binding system:node to system:nodes"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: modelservice-e2e-nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:nodes}
EOF
  local t0=$SECONDS
  KUBELET="$KUBELET" KUBECTL="$KUBECTL" E2E_NODE_NAME="$REAL_NODE_NAME" E2E_READY_TIMEOUT="$timeout" \
    "$node_sh" start "$dir" "$api_port" || fail "the real node did not start (see $dir/node/*.log)"
  log "real node $REAL_NODE_NAME Ready ($(( SECONDS - t0 ))s)"
}

# restart_one NAME: stop and start one component with its recorded arguments.
restart_one() {
  local name="$1" t0=$SECONDS
  [[ -s "$dir/$name.args" ]] || die "$name is not part of the cluster in $dir (mode $mode)"
  if [[ "$name" != etcd ]] && ! pid_of etcd >/dev/null; then
    die "etcd is not running in $dir (run: $0 --dir $dir up)"
  fi
  case "$name" in
    kube-apiserver) stop "$name" 20 ;;
    *) stop "$name" 10 ;;
  esac
  start "$name"
  wait_healthy "$name"
  log "$name restarted in $(( SECONDS - t0 ))s (pid $(pid_of "$name" || true))"
}

do_restart() {
  load_env
  (( $# )) || die "restart: which component? ($(components_of "$mode"))"
  local name
  for name in "$@"; do
    [[ " $(components_of "$mode") " == *" $name "* ]] || die "unknown component $name for a $mode cluster ($(components_of "$mode"))"
  done
  for name in "$@"; do restart_one "$name"; done
  write_env
  echo "$dir/kubeconfig"
}

do_heal() {
  load_env
  local c restarted=0
  for c in $(components_of "$mode"); do
    if ! pid_of "$c" >/dev/null; then
      log "$c is not running: restarting it"
      start "$c"
      wait_healthy "$c"
      restarted=1
    fi
  done
  if [[ "$real_node" == 1 ]] && ! "$node_sh" status "$dir" >/dev/null 2>&1; then
    log "the real node is not running: restarting it"
    "$node_sh" stop "$dir" || true
    start_real_node
    restarted=1
  fi
  (( restarted )) && write_env
  return 0
}

do_status() {
  local c pid any=0 bad=0 lines=() h
  for c in "${ALL_COMPONENTS[@]}"; do pid_of "$c" >/dev/null && any=1; done
  if (( ! any )); then
    echo "down ($dir)"
    return 1
  fi
  if [[ ! -s "$dir/env" ]]; then
    echo "degraded ($dir): processes run but there is no env file (still starting?)"
    return 1
  fi
  load_env
  for c in $(components_of "$mode"); do
    if pid="$(pid_of "$c")"; then
      if healthy "$c"; then h=healthy; else h="NOT HEALTHY"; bad=1; fi
      lines+=("$(printf '  %-24s pid %-8s %-30s %s' "$c" "$pid" "$(health_url "$c")" "$h")")
    else
      lines+=("$(printf '  %-24s %-12s %-30s %s' "$c" "-" "$(health_url "$c")" "NOT RUNNING")")
      bad=1
    fi
  done
  if [[ "$mode" == full ]] && (( ! bad )); then
    local nodes
    nodes="$(kc get nodes -o 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}' 2>/dev/null || true)"
    lines+=("  nodes: ${nodes:-?}")
  fi
  if [[ "$real_node" == 1 ]]; then
    local node_lines
    node_lines="$("$node_sh" status "$dir" 2>&1)" || bad=1
    lines+=("$node_lines")
  fi
  if (( bad )); then
    echo "degraded ($mode, $dir):"
    printf '%s\n' "${lines[@]}"
    return 1
  fi
  echo "up ($mode): $E2E_API_SERVER; KUBECONFIG=$dir/kubeconfig"
  printf '%s\n' "${lines[@]}"
}

do_add_node() {
  load_env
  [[ "$mode" == full ]] || die "add-node needs a full cluster (this one is $mode)"
  local name="" gpus=0 cpu=32 mem=128Gi pods=250
  while (( $# )); do
    case "$1" in
      --gpus) gpus="$2"; shift 2 ;;
      --cpu) cpu="$2"; shift 2 ;;
      --memory) mem="$2"; shift 2 ;;
      --pods) pods="$2"; shift 2 ;;
      -*) die "add-node: unknown flag $1" ;;
      *) [[ -z "$name" ]] || die "add-node: one node name only"; name="$1"; shift ;;
    esac
  done
  [[ -n "$name" ]] || die "add-node: NAME is required"
  [[ "$gpus" =~ ^[0-9]+$ ]] || die "add-node: --gpus must be a number"
  # An InternalIP not yet taken in 10.243.0.0/16 (the fleet has .0.1-.0.3).
  local taken ip i
  taken="$(kc get nodes -o 'jsonpath={.items[*].status.addresses[?(@.type=="InternalIP")].address}' 2>/dev/null || true)"
  for (( i = 10; i < 65000; i++ )); do
    ip="10.243.$(( i / 256 )).$(( i % 256 ))"
    [[ " $taken " == *" $ip "* ]] || break
  done
  node_yaml "$name" "$gpus" "$cpu" "$mem" "$pods" "$ip" | kc apply -f - >&2 || die "could not create node $name"
  wait_nodes_ready "$name"
}

case "$cmd" in
  up) (( ${#cmd_args[@]} == 0 )) || die "up takes no arguments (but --light or --real-node)"; do_up ;;
  down) do_down ;;
  status) do_status ;;
  restart-apiserver) do_restart kube-apiserver ;;
  restart) do_restart "${cmd_args[@]}" ;;
  heal) do_heal ;;
  add-node) do_add_node "${cmd_args[@]}" ;;
  node-exec)
    load_env
    [[ "$real_node" == 1 ]] || die "node-exec: this cluster has no real node (up --real-node)"
    exec "$node_sh" exec "$dir" "${cmd_args[@]}" ;;
esac
