#!/usr/bin/env bash
# run-local.sh - set up, build and run the whole ModelService system on a local
# cluster on loopback (test/e2e/cluster.sh: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and KWOK with three fake nodes, one
# of them with 4 GPUs), with the webhook and the controller as local processes.
#
# Usage: scripts/run-local.sh [up|down|status] [--real-node]   (default: up)
#   up      scripts/setup.sh (Debian packages), a build into build/
#           (BUILD_DIR; configured by scripts/configure-build.sh, as
#           scripts/test.sh does), the cluster in STATE_DIR, webhook certificates,
#           the CRD + RBAC + local-overlay webhook configurations (caBundle
#           set), the webhook and the controller in the background, the
#           samples in manifests/samples/; waits (up to 90 s) until their
#           pods are scheduled and Ready, then shows `kubectl get ms` (every
#           sample READY n/n; the autoscaled gpt2-chat Degraded, see
#           below), the pods and nodes, the defaults injected into the minimal
#           sample and a rejection.
#           Running `up` again stops whatever a previous `up` started and
#           starts everything afresh (a new, empty cluster).
#   up --real-node
#           the operator as users run it, in Pods: the cluster gets a real
#           node as well (cluster.sh up --real-node: a kubelet with
#           containerd and runc), the image is built (scripts/build-image.sh;
#           about a minute when the sources did not change, 12 or more the
#           first time) and installed with Helm like on any cluster, with the
#           README's line (test/e2e/operator/install.sh: `helm install` of
#           charts/modelservice-operator with the values of
#           test/e2e/operator/real-node-values.yaml, certificate mode self;
#           both Pods Running and Ready in modelservice-system, in a
#           namespace that enforces the restricted Pod Security Standard),
#           the samples are applied (their pods on
#           KWOK's nodes) and so is examples/model-server/modelservice.yaml,
#           whose two pods really serve on the real node; then it shows
#           `kubectl get pods -n modelservice-system`, `kubectl get ms` and an
#           answer of the model server. SKIP_IMAGE=1 uses the image as
#           build-image.sh last built it. IMAGE=NAME: the image's name in
#           build-image.sh's storage (default localhost/modelservice:dev; it
#           reaches the node under that default name whatever NAME is).
#   down    stops the webhook, the controller and the cluster (keeps the
#           logs in STATE_DIR).
#   status  says what runs.
#
# Environment: MODELSERVICE_LOCAL_DIR (STATE_DIR, default /tmp/modelservice-local),
# BUILD_DIR (default build), SKIP_SETUP=1 (do not run scripts/setup.sh),
# SKIP_BUILD=1 (use the binaries already in BUILD_DIR).
#
# Files in STATE_DIR: kubeconfig and env (from cluster.sh), run/ (webhook
# certificates, the generated webhook configurations, logs: run/webhook.log,
# run/controller.log, pids).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${MODELSERVICE_LOCAL_DIR:-/tmp/modelservice-local}"
run="$state/run"
cluster=("$root/test/e2e/cluster.sh" --dir "$state")
BUILD_DIR="${BUILD_DIR:-build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$root/$BUILD_DIR"
cmd=up real_node=0
for a in "$@"; do
  case "$a" in
    --real-node) real_node=1 ;;
    up|down|status|-h|--help|help) cmd="$a" ;;
    *) echo "run-local: unknown argument $a (up|down|status [--real-node])" >&2; exit 2 ;;
  esac
done

say() { echo "run-local: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# --------------------------------------------------------------- processes

pid_alive() {  # pid_alive NAME: pid of run/NAME.pid if alive and ours
  local f="$run/$1.pid" pid
  [[ -s "$f" ]] || return 1
  pid="$(<"$f")"
  kill -0 "$pid" 2>/dev/null || return 1
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == *"modelservice-$1"* ]] || return 1
  echo "$pid"
}

stop_proc() {  # stop_proc NAME
  local pid i
  if pid="$(pid_alive "$1")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for (( i = 0; i < 100; i++ )); do pid_alive "$1" >/dev/null || break; sleep 0.1; done
    if pid_alive "$1" >/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    say "stopped $1 (pid $pid)"
  fi
  rm -f "$run/$1.pid"
}

start_proc() {  # start_proc NAME BINARY ARGS...
  local name="$1"; shift
  echo "==== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting: $*" >>"$run/$name.log"
  setsid "$@" </dev/null >>"$run/$name.log" 2>&1 &
  echo $! >"$run/$name.pid"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { python3 "$root/test/e2e/free-port.py"; }
pick() {  # pick PREFERRED: PREFERRED if nobody listens there, else a free port
  if port_free "$1"; then echo "$1"; else free_port; fi
}

wait_http() {  # wait_http URL SECONDS
  local i
  for (( i = 0; i < $2 * 4; i++ )); do
    curl -fsS --max-time 1 -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.25
  done
  return 1
}

# --------------------------------------------------------------- commands

do_down() {
  stop_proc controller
  stop_proc webhook
  "${cluster[@]}" down >/dev/null 2>&1 || true
  say "stopped (logs in $run)"
}

do_status() {
  local rc=0 p
  "${cluster[@]}" status || rc=1
  if [[ -s "$state/real-node" && -s "$state/env" ]]; then  # up --real-node: the operator runs in Pods
    # shellcheck disable=SC1091
    (source "$state/env" && "$KUBECTL" get pods -n modelservice-system -o wide) || rc=1
    return $rc
  fi
  for p in webhook controller; do
    if pid="$(pid_alive "$p")"; then echo "$p: running (pid $pid, log $run/$p.log)"; else echo "$p: not running"; rc=1; fi
  done
  return $rc
}

# up --real-node: the operator from its image, in Pods on the real node.
do_up_real_node() {
  cd "$root"
  stop_proc controller
  stop_proc webhook
  mkdir -p "$run"
  [[ "${SKIP_SETUP:-0}" == 1 ]] || "$root/scripts/setup.sh"
  local cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
  local image="${IMAGE:-localhost/modelservice:dev}"
  if [[ "${SKIP_IMAGE:-0}" == 1 && -n "$(CONTAINERS_STORAGE_CONF="$cache/storage.conf" buildah images -q "$image" 2>/dev/null)" ]]; then
    say "SKIP_IMAGE=1: the image $image as scripts/build-image.sh last built it"
  else
    say "building the image (scripts/build-image.sh; log $run/build-image.log)"
    "$root/scripts/build-image.sh" --tag "$image" >"$run/build-image.log" 2>&1 || { tail -n 30 "$run/build-image.log" >&2; die "build-image.sh failed"; }
  fi
  say "starting the cluster with a real node in $state"
  "${cluster[@]}" up --real-node >/dev/null || die "cluster.sh up --real-node failed"
  # shellcheck disable=SC1091
  source "$state/env"
  local kc=("$KUBECTL")
  say "installing the operator from its image with Helm (test/e2e/operator/install.sh; the first time builds Helm: a few minutes)"
  "$root/test/e2e/operator/install.sh" --dir "$state" --work "$run/operator" --image "$image" 2>&1 | tee "$run/install.log" >&2 \
    || die "installing the operator failed (log: $run/install.log)"
  local helm
  helm="$("$root/test/e2e/build-helm.sh" 2>/dev/null | sed -n 's/^export HELM=//p')"
  echo
  echo "\$ $(sed -n 's/^install\.sh: \(helm install .*\)$/\1/p' "$run/install.log")"
  "$helm" list -n modelservice-system
  echo
  echo "\$ kubectl get pods -n modelservice-system -o wide"
  "${kc[@]}" get pods -n modelservice-system -o wide
  echo
  echo "\$ kubectl apply -f manifests/samples/ -f examples/model-server/modelservice.yaml"
  "${kc[@]}" apply -f manifests/samples/ -f examples/model-server/modelservice.yaml 2>&1
  "${kc[@]}" wait --for=jsonpath='{.status.phase}'=Ready --timeout=90s ms/minimal ms/bert-qa ms/gpu-no-image >/dev/null \
    && "${kc[@]}" -n serving wait --for=jsonpath='{.status.phase}'=Ready --timeout=60s ms/echo >/dev/null \
    || say "WARNING: not every ModelService is Ready after 90 s"
  echo
  echo "\$ kubectl get ms -A"
  "${kc[@]}" get ms -A
  echo
  echo "\$ kubectl -n serving get pods -o wide   # real containers on the real node"
  "${kc[@]}" -n serving get pods -o wide
  echo
  echo "\$ kubectl create --raw /api/v1/namespaces/serving/services/echo:8080/proxy/v1/predict -f - <<<'{}'"
  "${kc[@]}" create --raw /api/v1/namespaces/serving/services/echo:8080/proxy/v1/predict -f - <<<'{}' || true
  cat <<EOF

Running (state in $state; test/e2e/cluster.sh --dir $state status):
  cluster        $E2E_API_SERVER, nodes: KWOK's three fakes and $E2E_REAL_NODE (real, $E2E_NODE_IP)
  operator       Helm release modelservice-system/modelservice, from $image

Use it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get pods -n modelservice-system   # kubectl v1.34 built for this: $KUBECTL
  kubectl logs -n modelservice-system deploy/modelservice -c controller
  helm list -n modelservice-system          # Helm built for this: $helm
Stop it:
  scripts/run-local.sh down
EOF
}

do_up() {
  cd "$root"  # so that the printed commands and paths are the README's
  # Idempotent: stop what a previous `up` started.
  stop_proc controller
  stop_proc webhook
  mkdir -p "$run"

  if [[ "${SKIP_SETUP:-0}" != 1 ]]; then
    "$root/scripts/setup.sh"
  fi
  if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    say "building into $BUILD_DIR (the configuration scripts/test.sh uses there too)"
    "$root/scripts/configure-build.sh" "$BUILD_DIR" >"$run/build.log" 2>&1 \
      || { tail -n 30 "$run/build.log" >&2; die "cmake configure failed"; }
    cmake --build "$BUILD_DIR" --target modelservice-webhook modelservice-controller >>"$run/build.log" 2>&1 \
      || { tail -n 30 "$run/build.log" >&2; die "build failed (log: $run/build.log)"; }
  fi
  local webhook="$BUILD_DIR/webhook/modelservice-webhook" controller="$BUILD_DIR/controller/modelservice-controller"
  [[ -x "$webhook" && -x "$controller" ]] || die "no binaries in $BUILD_DIR"

  say "starting the cluster in $state (the first time builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok: about 10 min)"
  "${cluster[@]}" up >/dev/null || die "cluster.sh up failed"
  # shellcheck disable=SC1091
  source "$state/env"
  local kc=("$KUBECTL")

  # Ports: the README's defaults when free.
  local wport mport pport cmport cpport
  wport="$(pick 9443)"; mport="$(pick 8080)"; pport="$(pick 8081)"; cmport="$(pick 8082)"; cpport="$(pick 8083)"

  say "webhook certificates in $run/certs"
  local ca
  ca="$("$root/certs-scripts/gen-certs.sh" --out "$run/certs" --ip 127.0.0.1 --dns localhost | tail -n 1)"

  say "installing the CRD, RBAC and webhook configurations (local overlay, https://127.0.0.1:$wport)"
  "${kc[@]}" kustomize "$root/manifests/overlays/local" \
    | sed -e "s#^\( *\)url: https://127\.0\.0\.1:9443/\(.*\)\$#\1url: https://127.0.0.1:$wport/\2\n\1caBundle: $ca#" \
    >"$run/local-overlay.yaml"
  [[ "$(grep -c "caBundle: $ca" "$run/local-overlay.yaml")" == 2 ]] || die "could not set the caBundle in $run/local-overlay.yaml"
  "${kc[@]}" apply -f "$run/local-overlay.yaml" >"$run/install.log"
  "${kc[@]}" wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >/dev/null

  start_proc webhook "$webhook" --port "$wport" --bind-address 127.0.0.1 --cert-dir "$run/certs" \
    --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$pport" --log-format text
  wait_http "http://127.0.0.1:$pport/readyz" 20 || { tail -n 20 "$run/webhook.log" >&2; die "the webhook did not become ready"; }
  # --cert-mode provided: the webhook serves the certificates made above.
  start_proc controller "$controller" --kubeconfig "$KUBECONFIG" --leader-elect --cert-mode provided \
    --leader-election-id modelservice-controller --leader-election-namespace modelservice-system \
    --metrics-bind-address "127.0.0.1:$cmport" --health-probe-bind-address "127.0.0.1:$cpport" --log-format text
  wait_http "http://127.0.0.1:$cpport/healthz" 30 || { tail -n 20 "$run/controller.log" >&2; die "the controller did not become healthy"; }

  # The API server loads webhook configurations asynchronously: wait until
  # the webhook really answers through it.
  local i out=""
  for (( i = 0; i < 120; i++ )); do
    out="$("${kc[@]}" apply --dry-run=server -f "$root/manifests/samples/invalid/surge-and-unavailable-zero.yaml" 2>&1 || true)"
    [[ "$out" == *"admission webhook"*"denied the request"* ]] && break
    sleep 0.25
  done
  [[ "$out" == *"admission webhook"*"denied the request"* ]] || die "the webhook is not reached through the API server: $out"

  echo
  echo "\$ kubectl apply -f manifests/samples/"
  "${kc[@]}" apply -f manifests/samples/ 2>&1
  # The controller makes Deployments, kube-controller-manager their pods, the
  # scheduler places them on the fake nodes, KWOK makes them Ready.
  "${kc[@]}" wait --for=jsonpath='{.status.phase}'=Ready --timeout=90s ms/minimal ms/bert-qa ms/gpu-no-image \
    ms/llama-chat >/dev/null || say "WARNING: not every sample is Ready after 90 s (see $run/controller.log)"
  "${kc[@]}" wait --for=jsonpath='{.status.readyReplicas}'=2 --timeout=60s ms/gpt2-chat >/dev/null \
    || say "WARNING: gpt2-chat's pods are not Ready after 60 s"
  echo
  echo "\$ kubectl get ms"
  "${kc[@]}" get ms
  echo "# (gpt2-chat is autoscaled by queue length: without a Prometheus at --prometheus-url its"
  echo "#  replicas stay as they are, 2 Ready, and it is Degraded, reason MetricsUnavailable)"
  echo
  echo "\$ kubectl get pods -o wide"
  "${kc[@]}" get pods -o wide
  echo
  echo "\$ kubectl get nodes -L nvidia.com/gpu.present   # fake nodes played by KWOK"
  "${kc[@]}" get nodes -L nvidia.com/gpu.present
  echo "# kwok-gpu-1 is tainted nvidia.com/gpu=present:NoSchedule as real GPU nodes are: only pods with GPUs"
  echo "# (bert-qa, gpu-no-image, llama-chat), which tolerate it, run there"
  echo "\$ kubectl get node kwok-gpu-1 -o jsonpath='{.spec.taints}'"
  "${kc[@]}" get node kwok-gpu-1 -o jsonpath='{.spec.taints}'; echo
  echo
  echo "# manifests/samples/minimal.yaml sets only spec.model; the mutating webhook added the rest:"
  echo "\$ kubectl get ms minimal -o jsonpath='{.spec}'"
  "${kc[@]}" get ms minimal -o jsonpath='{.spec}'; echo
  echo
  echo "# A rejection by the validating webhook:"
  echo "\$ kubectl apply -f manifests/samples/invalid/surge-and-unavailable-zero.yaml"
  "${kc[@]}" apply -f manifests/samples/invalid/surge-and-unavailable-zero.yaml 2>&1 || true
  echo "# ... and one by the CRD's schema:"
  echo "\$ kubectl apply -f manifests/samples/invalid/replicas-0.yaml"
  "${kc[@]}" apply -f manifests/samples/invalid/replicas-0.yaml 2>&1 || true
  cat <<EOF

Running:
  cluster        $E2E_API_SERVER (state in $state; test/e2e/cluster.sh --dir $state status)
  webhook        https://127.0.0.1:$wport  metrics http://127.0.0.1:$mport/metrics  log $run/webhook.log
  controller     metrics http://127.0.0.1:$cmport/metrics  log $run/controller.log

Use it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get ms            # kubectl v1.34 built for this: $KUBECTL
  kubectl apply -f manifests/samples/invalid/no-model.yaml
Stop it:
  scripts/run-local.sh down
EOF
}

case "$cmd" in
  up) if (( real_node )); then do_up_real_node; else do_up; fi ;;
  down) do_down ;;
  status) do_status ;;
  -h|--help|help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown command $cmd (up|down|status [--real-node])" ;;
esac
