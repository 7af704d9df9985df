#!/usr/bin/env bash
# cluster.sh - a throw-away Kubernetes control plane (etcd + kube-apiserver,
# no nodes, no controllers) on loopback for the ModelService e2e tests, in the
# spirit of controller-runtime's envtest.
#
# Usage: test/e2e/cluster.sh [--dir DIR] COMMAND [--purge]
#   up                 build/cache the binaries (build-control-plane.sh, output in
#                      DIR/build.log), wipe DIR's previous cluster state, create
#                      fresh certificates, pick free ports, start etcd and
#                      kube-apiserver detached, wait (E2E_READY_TIMEOUT s) for
#                      /readyz and the "default" namespace, write DIR/kubeconfig
#                      and DIR/env. If a cluster is already running in DIR it is
#                      stopped first (i.e. `up` = restart with a fresh cluster).
#                      stdout: exactly one line, the absolute kubeconfig path,
#                      so `KUBECONFIG=$(test/e2e/cluster.sh up)` works. Progress
#                      goes to stderr. On failure: log tails on stderr, exit != 0.
#   down [--purge]     SIGTERM kube-apiserver, then etcd (bounded wait, then
#                      SIGKILL). Keeps DIR (logs, audit log, certs, data) unless
#                      --purge, which deletes everything this script created there.
#   status             prints "up ..." and exits 0 if both processes run and
#                      /readyz is ok; otherwise prints "down"/"degraded ..." and exits 1.
#   restart-apiserver  stops kube-apiserver and starts it again with exactly the
#                      same arguments (same port, certs, etcd, audit log - appended),
#                      waits for /readyz, updates DIR/env. stdout: kubeconfig path.
#
# Environment:
#   MODELSERVICE_E2E_DIR      state dir (default /tmp/modelservice-e2e; --dir wins)
#   MODELSERVICE_TOOLS_CACHE  binary cache, see build-control-plane.sh
#   E2E_AUDIT                 1 (default): audit log at DIR/audit.log, level
#                             Metadata for every request, RequestReceived stage
#                             omitted (one JSON line per request, plus one
#                             ResponseStarted line for watches); 0: no audit log
#   E2E_READY_TIMEOUT         seconds to wait for readiness (default 60)
#   E2E_APISERVER_ARGS        extra kube-apiserver flags (word-split), e.g.
#                             "--feature-gates=Foo=true --v=2"
#
# Files in DIR:
#   kubeconfig             admin kubeconfig (certs embedded), context "modelservice-e2e"
#   env                    sourceable: exports KUBECONFIG KUBECTL E2E_DIR
#                          E2E_API_SERVER (https://127.0.0.1:PORT) E2E_API_PORT
#                          E2E_ETCD_URL E2E_ETCD_PORT E2E_ETCD_PEER_PORT
#                          E2E_CA_CERT E2E_CA_KEY E2E_ADMIN_CERT E2E_ADMIN_KEY
#                          E2E_SA_KEY E2E_SA_PUB E2E_AUDIT_LOG (empty if off)
#                          E2E_APISERVER_LOG E2E_ETCD_LOG E2E_APISERVER_PID
#                          E2E_ETCD_PID KUBE_APISERVER ETCD (binary paths)
#   pki/                   ca.{crt,key}, apiserver.{crt,key} (SANs 127.0.0.1, ::1,
#                          localhost, kubernetes, kubernetes.default{,.svc,
#                          .svc.cluster.local}, 10.0.0.1), admin.{crt,key}
#                          (CN=admin, O=system:masters), sa.{key,pub} (RSA)
#   etcd-data/             etcd data dir
#   etcd.log kube-apiserver.log build.log audit.log audit-policy.yaml
#   etcd.pid kube-apiserver.pid etcd.args kube-apiserver.args (one arg per line)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prog="cluster.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
log() { echo "$prog: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

dir="${MODELSERVICE_E2E_DIR:-/tmp/modelservice-e2e}"
cmd=""
purge=0
while (( $# )); do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || die "--dir needs an argument"; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --purge) purge=1; shift ;;
    -h|--help|help) usage; exit 0 ;;
    up|down|status|restart-apiserver)
      [[ -z "$cmd" ]] || die "only one command allowed (got $cmd and $1)"; cmd="$1"; shift ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ -n "$cmd" ]] || { usage >&2; exit 2; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
pki="$dir/pki"
timeout="${E2E_READY_TIMEOUT:-60}"

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

# start NAME BINARY: run BINARY with the args in DIR/NAME.args, detached
# (own session, stdin from /dev/null, output appended to DIR/NAME.log).
start() {
  local name="$1" bin="$2" args=()
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
  for f in build.log etcd.log kube-apiserver.log; do
    [[ -s "$dir/$f" ]] || continue
    n=40; [[ "$f" == etcd.log ]] && n=15
    echo "----- last $n lines of $dir/$f -----" >&2
    tail -n "$n" "$dir/$f" >&2
  done
}

# fail MSG: report, show log tails and exit 1. During `up` the half-started
# cluster is stopped (logs stay in DIR); restart-apiserver leaves etcd running.
fail() {
  log "ERROR: $*"
  show_logs
  if [[ "$cmd" == up ]]; then
    stop kube-apiserver 5
    stop etcd 5
  fi
  exit 1
}

# ---------------------------------------------------------------- helpers

# free_port: print a currently unused loopback TCP port (random, not fixed).
free_port() {
  local p i
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  for (( i = 0; i < 100; i++ )); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
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

# wait_apiserver: until /readyz says ok and the default namespace exists.
wait_apiserver() {
  local deadline=$(( SECONDS + timeout )) out=""
  while (( SECONDS < deadline )); do
    pid_of kube-apiserver >/dev/null || fail "kube-apiserver exited (see $dir/kube-apiserver.log)"
    out="$(api_curl /readyz 2>/dev/null || true)"
    if [[ "$out" == ok ]] && [[ "$(api_curl /api/v1/namespaces/default -o /dev/null -w '%{http_code}' 2>/dev/null || true)" == 200 ]]; then
      return 0
    fi
    sleep 0.25
  done
  fail "kube-apiserver not ready after ${timeout}s (last /readyz answer: ${out:-none})"
}

# gen_certs: fresh CA, serving cert, admin client cert and SA key pair.
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
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
    rm -f ./*.csr ./*.ext ca.srl
  ) || { cat "$pki/openssl.log" >&2; die "certificate generation failed"; }
  rm -f "$pki/openssl.log"
}

write_kubeconfig() {
  local b64="base64 -w0"
  base64 -w0 </dev/null >/dev/null 2>&1 || b64="base64"
  cat >"$dir/kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: modelservice-e2e
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $($b64 <"$pki/ca.crt" | tr -d '\n')
users:
- name: admin
  user:
    client-certificate-data: $($b64 <"$pki/admin.crt" | tr -d '\n')
    client-key-data: $($b64 <"$pki/admin.key" | tr -d '\n')
contexts:
- name: modelservice-e2e
  context:
    cluster: modelservice-e2e
    user: admin
current-context: modelservice-e2e
EOF
  chmod 600 "$dir/kubeconfig.tmp"
  mv -f "$dir/kubeconfig.tmp" "$dir/kubeconfig"
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
    printf 'export E2E_DIR=%q\n' "$dir"
    printf 'export E2E_API_SERVER=%q\n' "https://127.0.0.1:$api_port"
    printf 'export E2E_API_PORT=%q\n' "$api_port"
    printf 'export E2E_ETCD_URL=%q\n' "http://127.0.0.1:$etcd_port"
    printf 'export E2E_ETCD_PORT=%q\n' "$etcd_port"
    printf 'export E2E_ETCD_PEER_PORT=%q\n' "$etcd_peer_port"
    printf 'export E2E_CA_CERT=%q\n' "$pki/ca.crt"
    printf 'export E2E_CA_KEY=%q\n' "$pki/ca.key"
    printf 'export E2E_ADMIN_CERT=%q\n' "$pki/admin.crt"
    printf 'export E2E_ADMIN_KEY=%q\n' "$pki/admin.key"
    printf 'export E2E_SA_KEY=%q\n' "$pki/sa.key"
    printf 'export E2E_SA_PUB=%q\n' "$pki/sa.pub"
    printf 'export E2E_AUDIT_LOG=%q\n' "$audit_log"
    printf 'export E2E_APISERVER_LOG=%q\n' "$dir/kube-apiserver.log"
    printf 'export E2E_ETCD_LOG=%q\n' "$dir/etcd.log"
    printf 'export E2E_APISERVER_PID=%q\n' "$(pid_of kube-apiserver || true)"
    printf 'export E2E_ETCD_PID=%q\n' "$(pid_of etcd || true)"
  } >"$dir/env.tmp"
  mv -f "$dir/env.tmp" "$dir/env"
}

load_env() {
  [[ -s "$dir/env" && -s "$dir/kube-apiserver.args" ]] || die "no cluster state in $dir (run: $0 --dir $dir up)"
  # shellcheck disable=SC1091
  source "$dir/env"
  api_port="$E2E_API_PORT"
  etcd_port="$E2E_ETCD_PORT"
  etcd_peer_port="$E2E_ETCD_PEER_PORT"
}

# ---------------------------------------------------------------- commands

do_down() {
  stop kube-apiserver 20
  stop etcd 10
  if (( purge )); then
    rm -rf "$pki" "$dir/etcd-data"
    rm -f "$dir"/{kubeconfig,kubeconfig.tmp,env,env.tmp,build.log,etcd.log,kube-apiserver.log,audit.log,audit-policy.yaml,etcd.args,kube-apiserver.args,etcd.pid,kube-apiserver.pid}
    rm -f "$dir"/audit-*.log
    rmdir "$dir" 2>/dev/null || true
    log "purged $dir"
  fi
}

do_up() {
  local start_time=$SECONDS exports purge=0  # (purge=0: never --purge here)
  if pid_of kube-apiserver >/dev/null || pid_of etcd >/dev/null; then
    log "a cluster is already running in $dir: restarting it from scratch"
  fi
  do_down

  # 1. Binaries (cached; a no-op when already built).
  if ! exports="$("$here/build-control-plane.sh" 2>"$dir/build.log")"; then
    fail "building the control-plane binaries failed"
  fi
  exports="$(tail -n 1 <<<"$exports")"
  [[ "$exports" == "export KUBE_APISERVER="* ]] || fail "unexpected output from build-control-plane.sh: $exports"
  eval "$exports"

  # 2. Fresh state.
  rm -rf "$dir/etcd-data"
  rm -f "$dir"/{kubeconfig,env,etcd.log,kube-apiserver.log,audit.log,audit-policy.yaml,etcd.args,kube-apiserver.args}
  gen_certs

  # 3. Free ports (distinct).
  api_port="$(free_port)"
  etcd_port="$(free_port)"
  while [[ "$etcd_port" == "$api_port" ]]; do etcd_port="$(free_port)"; done
  etcd_peer_port="$(free_port)"
  while [[ "$etcd_peer_port" == "$api_port" || "$etcd_peer_port" == "$etcd_port" ]]; do etcd_peer_port="$(free_port)"; done
  [[ -n "$api_port" && -n "$etcd_port" && -n "$etcd_peer_port" ]] || die "could not find free ports"

  # 4. etcd.
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
  start etcd "$ETCD"
  local deadline=$(( SECONDS + timeout ))
  until [[ "$(curl -sS --max-time 2 "$etcd_url/health" 2>/dev/null || true)" == *'"health":"true"'* ]]; do
    pid_of etcd >/dev/null || fail "etcd exited (see $dir/etcd.log)"
    (( SECONDS < deadline )) || fail "etcd not healthy after ${timeout}s"
    sleep 0.1
  done

  # 5. kube-apiserver (envtest's flags, plus our own serving cert and audit log).
  local args=(
    "--etcd-servers=$etcd_url"
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
    "--disable-admission-plugins=ServiceAccount"
    "--service-account-issuer=https://127.0.0.1:$api_port/"
    "--service-account-key-file=$pki/sa.pub"
    "--service-account-signing-key-file=$pki/sa.key"
  )
  if [[ "${E2E_AUDIT:-1}" != 0 ]]; then
    cat >"$dir/audit-policy.yaml" <<'EOF'
# Log every request at Metadata level (user, user agent, verb, resource,
# response code; no bodies). RequestReceived is omitted so that each request
# yields one ResponseComplete event (watches also yield ResponseStarted).
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: Metadata
EOF
    args+=("--audit-policy-file=$dir/audit-policy.yaml" "--audit-log-path=$dir/audit.log"
           "--audit-log-format=json" "--audit-log-mode=blocking")
  fi
  if [[ -n "${E2E_APISERVER_ARGS:-}" ]]; then
    local extra
    read -r -a extra <<<"$E2E_APISERVER_ARGS"
    args+=("${extra[@]}")
  fi
  printf '%s\n' "${args[@]}" >"$dir/kube-apiserver.args"
  start kube-apiserver "$KUBE_APISERVER"
  wait_apiserver

  write_kubeconfig
  write_env
  log "up in $(( SECONDS - start_time ))s: https://127.0.0.1:$api_port (etcd $etcd_url); source $dir/env"
  echo "$dir/kubeconfig"
}

do_restart_apiserver() {
  local start_time=$SECONDS
  load_env
  pid_of etcd >/dev/null || die "etcd is not running in $dir (run: $0 --dir $dir up)"
  stop kube-apiserver 20
  start kube-apiserver "$KUBE_APISERVER"
  wait_apiserver
  write_env
  log "kube-apiserver restarted in $(( SECONDS - start_time ))s (pid $(pid_of kube-apiserver || true))"
  echo "$dir/kubeconfig"
}

do_status() {
  local apid epid
  apid="$(pid_of kube-apiserver || true)"
  epid="$(pid_of etcd || true)"
  if [[ -z "$apid" && -z "$epid" ]]; then
    echo "down ($dir)"
    return 1
  fi
  if [[ -n "$apid" && -n "$epid" && -s "$dir/env" ]]; then
    load_env
    if [[ "$(api_curl /readyz 2>/dev/null || true)" == ok ]]; then
      echo "up: $E2E_API_SERVER (kube-apiserver pid $apid, etcd pid $epid, $E2E_ETCD_URL); KUBECONFIG=$dir/kubeconfig"
      return 0
    fi
  fi
  echo "degraded ($dir): kube-apiserver pid ${apid:-none}, etcd pid ${epid:-none}, /readyz not ok"
  return 1
}

case "$cmd" in
  up) do_up ;;
  down) do_down ;;
  status) do_status ;;
  restart-apiserver) do_restart_apiserver ;;
esac
