#!/usr/bin/env bash
# run.sh - the ModelService end-to-end suite against a real cluster on loopback
# (test/e2e/cluster.sh: kube-apiserver, kube-controller-manager,
# kube-scheduler and KWOK's fake nodes).
#
# Usage: test/e2e/run.sh [--only REGEX] [--keep] [--no-build] [--verbose]
#   --only REGEX  run only the cases whose file name (without .sh) matches
#                 the extended regex (e.g. --only 'webhook|samples')
#   --keep        leave the cluster, webhook, controller and Prometheus
#                 running at the end (prints how to reach and stop them)
#   --no-build    do not (re)build the C++ binaries; use those in BUILD_DIR
#   --verbose     stream each case's output instead of printing it on failure
#
# What it does: builds build/webhook/modelservice-webhook and
# build/controller/modelservice-controller (BUILD_DIR, default build/,
# configured by scripts/configure-build.sh as scripts/test.sh and
# scripts/run-local.sh configure it), Prometheus 3 and promtool
# (build-prometheus.sh), prometheus-adapter (build-prometheus-adapter.sh) and
# test/health's health-check (the cases' health_stage), from Go modules and
# cached, starts a fresh cluster with
# test/e2e/cluster.sh in a new temporary directory (E2E_WORK; the whole
# cluster, or with E2E_CLUSTER_MODE=light only etcd + kube-apiserver, where the
# cases that need pods skip themselves), makes the
# webhook's certificates, installs the CRD, RBAC and the local overlay's
# webhook configurations (pointed at a free port, caBundle set), starts the
# webhook and waits until an invalid object is really denied by it through the
# API server, starts a queue-length exporter and a fake DCGM exporter (GPU
# utilization of pods), Prometheus (scraping the
# webhook, the controllers and the exporters every second), prometheus-adapter
# (registered as APIService v1beta1.external.metrics.k8s.io, serving
# modelservice_queue_length from that Prometheus with the rule file of
# docs/user/prometheus-adapter-rules.yaml) and the
# controller (leader-electing). Then runs every test/e2e/cases/*.sh in name order, each
# in its own shell with a time limit (header line `# timeout: SECONDS`), and
# prints `N passed, N failed` (and `, N skipped`) as its last line. Exit status
# 0 only if no case failed. Every process it started is stopped on exit.
#
# A case is a bash file sourced after lib.sh with `set -euo pipefail`; it
# fails by exiting non-zero (lib.sh's fail/assert_*), is skipped by exiting
# 77. Header lines: `# timeout: S` (default 180; E2E_CASE_TIMEOUT=S overrides it
# for every selected case, e.g. a long soak: test/soak/run.sh) and `# logs: NAME...`
# (component logs whose tails are printed when it fails: webhook, controller,
# controller-b, prometheus, queue-exporter, prometheus-adapter, apiserver, controller-manager,
# scheduler, kwok; default webhook and controller). After each case, whatever
# it left stopped is started again (cluster components with `cluster.sh heal`).
#
# The real node: before the first selected case that says `# needs:
# real-node` (90-99), a second cluster is started, with a real node (cluster.sh up --real-node, in
# E2E_WORK/real), and the operator is installed there from its image the way
# users install it (test/e2e/operator/install.sh): the image
# E2E_OPERATOR_IMAGE (default localhost/modelservice:dev) as
# scripts/build-image.sh last built it, which is run first only when that
# image does not exist (rebuild it after changing the C++ to test the change
# in the Pods; .ci/run builds it just before). If that set-up fails, those
# cases fail with its reason. E2E_REAL_NODE_CASES=0 skips them instead.
#
# Logs: E2E_WORK/logs/{webhook,controller,controller-b,prometheus,
# queue-exporter,prometheus-adapter}.log, E2E_WORK/cases/CASE.log, E2E_WORK/cluster/ (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and kwok logs, the
# audit log). E2E_WORK is printed at the start and the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export E2E_ROOT="$(cd "$here/../.." && pwd)"

only="" keep=0 build=1 verbose=0
while (( $# )); do
  case "$1" in
    --only) [[ $# -ge 2 ]] || { echo "--only needs a pattern" >&2; exit 2; }; only="$2"; shift 2 ;;
    --only=*) only="${1#--only=}"; shift ;;
    --keep) keep=1; shift ;;
    --no-build) build=0; shift ;;
    --verbose|-v) verbose=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR="${BUILD_DIR:-build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$E2E_ROOT/$BUILD_DIR"
suite_start=$SECONDS
bash "$E2E_ROOT/scripts/ci-stamp" e2e-setup begin

E2E_WORK="$(mktemp -d "${TMPDIR:-/tmp}/modelservice-e2e.XXXXXX")"
export E2E_WORK
mkdir -p "$E2E_WORK/logs" "$E2E_WORK/cases" "$E2E_WORK/proc"
# shellcheck source=lib.sh
source "$here/lib.sh"

say() { echo "run.sh: $*" >&2; }
say "work dir $E2E_WORK"

torn_down=0
teardown() {
  (( torn_down )) && return 0
  torn_down=1
  if (( keep )); then
    say "--keep: everything is still running. To use it:"
    say "  source $E2E_WORK/cluster/env   # KUBECONFIG, KUBECTL, ..."
    say "  logs in $E2E_WORK/logs; stop with:"
    say "  for p in $E2E_WORK/proc/*.pid; do kill \$(cat \$p); done; $here/cluster.sh --dir $E2E_WORK/cluster down"
    [[ -n "${E2E_REAL_DIR:-}" ]] && say "  the real-node cluster: source $E2E_REAL_DIR/env; stop: $here/cluster.sh --dir $E2E_REAL_DIR down"
    return 0
  fi
  # Cases still running (interrupted suite): their whole process groups.
  local g
  for g in "$E2E_WORK"/cases/*.pgid; do [[ -s "$g" ]] && kill -TERM -- "-$(<"$g")" 2>/dev/null || true; done
  proc_stop_all 2>/dev/null || true
  if [[ -n "${E2E_REAL_DIR:-}" ]]; then "$here/cluster.sh" --dir "$E2E_REAL_DIR" down >/dev/null 2>&1 || true; fi
  "$here/cluster.sh" --dir "$E2E_WORK/cluster" down >/dev/null 2>&1 || true
  rm -rf "$E2E_WORK/cluster/etcd-data" "$E2E_WORK/prometheus-data"
  # The real node's images, snapshots and volumes (about 330 MB; its logs stay).
  if [[ -n "${E2E_REAL_DIR:-}" ]]; then rm -rf "$E2E_REAL_DIR/etcd-data" "$E2E_REAL_DIR/node/containerd" "$E2E_REAL_DIR/node/kubelet"; fi
  say "stopped everything; logs kept in $E2E_WORK"
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  teardown
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# setup_fail MSG [LOG...]: set-up failed; show log tails and exit.
setup_fail() {
  local msg="$1" f; shift
  say "SETUP FAILED: $msg"
  for f in "$@"; do
    [[ -s "$f" ]] || continue
    echo "----- last 30 lines of $f -----" >&2
    tail -n 30 "$f" >&2
  done
  teardown
  echo "0 passed, 1 failed"
  exit 1
}

# ------------------------------------------------------------------ build
export WEBHOOK_BIN="$BUILD_DIR/webhook/modelservice-webhook"
export CONTROLLER_BIN="$BUILD_DIR/controller/modelservice-controller"
if (( build )); then
  t0=$SECONDS
  # The one configuration of build/ that scripts/test.sh and run-local.sh use
  # too (scripts/configure-build.sh), so no entry point rebuilds it differently.
  bash "$E2E_ROOT/scripts/configure-build.sh" "$BUILD_DIR" >"$E2E_WORK/logs/build.log" 2>&1 \
    || setup_fail "cmake configure (scripts/configure-build.sh)" "$E2E_WORK/logs/build.log"
  cmake --build "$BUILD_DIR" --target modelservice-webhook modelservice-controller >>"$E2E_WORK/logs/build.log" 2>&1 \
    || setup_fail "building the webhook and the controller" "$E2E_WORK/logs/build.log"
  say "C++ build ok ($(( SECONDS - t0 ))s)"
fi
[[ -x "$WEBHOOK_BIN" ]] || setup_fail "no webhook binary at $WEBHOOK_BIN"
[[ -x "$CONTROLLER_BIN" ]] || setup_fail "no controller binary at $CONTROLLER_BIN"
t0=$SECONDS
prom_out="$("$here/build-prometheus.sh" 2>"$E2E_WORK/logs/build-prometheus.log")" \
  || setup_fail "building Prometheus (build-prometheus.sh)" "$E2E_WORK/logs/build-prometheus.log"
eval "$(tail -n 1 <<<"$prom_out")"
export PROMETHEUS_BIN PROMTOOL_BIN
adapter_out="$("$here/build-prometheus-adapter.sh" 2>"$E2E_WORK/logs/build-prometheus-adapter.log")" \
  || setup_fail "building prometheus-adapter (build-prometheus-adapter.sh)" "$E2E_WORK/logs/build-prometheus-adapter.log"
eval "$(tail -n 1 <<<"$adapter_out")"
export PROMETHEUS_ADAPTER
E2E_HEALTH_CHECK="$("$E2E_ROOT/test/health/run.sh" --bin 2>"$E2E_WORK/logs/build-health-check.log")" \
  || setup_fail "building test/health's health-check (test/health/run.sh --bin)" "$E2E_WORK/logs/build-health-check.log"
export E2E_HEALTH_CHECK
say "Prometheus $("$PROMETHEUS_BIN" --version 2>/dev/null | sed -n '1s/^prometheus, version \([^ ]*\).*/\1/p'), prometheus-adapter and health-check ready ($(( SECONDS - t0 ))s)"

# ------------------------------------------------------------------ mTLS
# The whole suite runs the webhook with mTLS: the API server presents a
# client certificate to it (an AdmissionConfiguration whose
# WebhookAdmissionConfiguration kubeconfig names the pair, for every webhook:
# user "*"), and the webhook requires one signed by WEBHOOK_CLIENT_CA
# (--client-ca, lib.sh's start_webhook). Case 45-webhook-mtls checks both.
export WEBHOOK_CLIENT_DIR="$E2E_WORK/webhook-client"
"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$WEBHOOK_CLIENT_DIR" --client kube-apiserver >"$E2E_WORK/logs/gen-client-certs.log" 2>&1 \
  || setup_fail "gen-certs.sh (the API server's client certificate)" "$E2E_WORK/logs/gen-client-certs.log"
export WEBHOOK_CLIENT_CA="$WEBHOOK_CLIENT_DIR/ca.crt"
cat >"$E2E_WORK/admission-kubeconfig.yaml" <<EOF
apiVersion: v1
kind: Config
users:
  - name: "*"
    user:
      client-certificate: $WEBHOOK_CLIENT_DIR/kube-apiserver.crt
      client-key: $WEBHOOK_CLIENT_DIR/kube-apiserver.key
EOF
cat >"$E2E_WORK/admission-config.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: $E2E_WORK/admission-kubeconfig.yaml
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: $E2E_WORK/admission-kubeconfig.yaml
EOF
export E2E_APISERVER_ARGS="${E2E_APISERVER_ARGS:+$E2E_APISERVER_ARGS }--admission-control-config-file=$E2E_WORK/admission-config.yaml"

# ------------------------------------------------------------------ cluster
t0=$SECONDS
"$here/cluster.sh" --dir "$E2E_WORK/cluster" up >"$E2E_WORK/logs/cluster-up.log" 2>&1 \
  || setup_fail "cluster.sh up" "$E2E_WORK/logs/cluster-up.log"
# shellcheck disable=SC1091
source "$E2E_WORK/cluster/env"
say "cluster ($E2E_CLUSTER_MODE) up at $E2E_API_SERVER ($(( SECONDS - t0 ))s)"

# ------------------------------------------------------------------ ports
declare -A taken=()
pick_port() {
  local p
  while true; do
    p="$(free_port)"
    [[ -z "${taken[$p]:-}" ]] && break
  done
  taken[$p]=1
  echo "$p"
}
WEBHOOK_PORT="$(pick_port)"; taken[$WEBHOOK_PORT]=1
WEBHOOK_METRICS_PORT="$(pick_port)"; taken[$WEBHOOK_METRICS_PORT]=1
WEBHOOK_PROBE_PORT="$(pick_port)"; taken[$WEBHOOK_PROBE_PORT]=1
CONTROLLER_METRICS_PORT="$(pick_port)"; taken[$CONTROLLER_METRICS_PORT]=1
CONTROLLER_PROBE_PORT="$(pick_port)"; taken[$CONTROLLER_PROBE_PORT]=1
CONTROLLER_B_METRICS_PORT="$(pick_port)"; taken[$CONTROLLER_B_METRICS_PORT]=1
CONTROLLER_B_PROBE_PORT="$(pick_port)"; taken[$CONTROLLER_B_PROBE_PORT]=1
PROM_PORT="$(pick_port)"; taken[$PROM_PORT]=1
EXPORTER_PORT="$(pick_port)"; taken[$EXPORTER_PORT]=1
DCGM_EXPORTER_PORT="$(pick_port)"; taken[$DCGM_EXPORTER_PORT]=1
PROMETHEUS_ADAPTER_PORT="$(pick_port)"; taken[$PROMETHEUS_ADAPTER_PORT]=1
CERT_DIR="$E2E_WORK/webhook-certs"

{
  echo "# generated by test/e2e/run.sh"
  for v in E2E_ROOT E2E_WORK BUILD_DIR WEBHOOK_BIN CONTROLLER_BIN PROMETHEUS_BIN PROMTOOL_BIN PROMETHEUS_ADAPTER CERT_DIR WEBHOOK_CLIENT_DIR WEBHOOK_CLIENT_CA \
           WEBHOOK_PORT WEBHOOK_METRICS_PORT WEBHOOK_PROBE_PORT \
           CONTROLLER_METRICS_PORT CONTROLLER_PROBE_PORT CONTROLLER_B_METRICS_PORT CONTROLLER_B_PROBE_PORT \
           PROM_PORT EXPORTER_PORT DCGM_EXPORTER_PORT PROMETHEUS_ADAPTER_PORT; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done
} >"$E2E_WORK/suite.env"
# shellcheck disable=SC1091
source "$E2E_WORK/suite.env"

# ------------------------------------------------------------------ install
certs_out="$("$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$CERT_DIR" --ip 127.0.0.1 --dns localhost 2>"$E2E_WORK/logs/gen-certs.log")" \
  || setup_fail "gen-certs.sh" "$E2E_WORK/logs/gen-certs.log"
ca_bundle="$(tail -n 1 <<<"$certs_out")"
[[ "$ca_bundle" == "$(base64 -w0 "$CERT_DIR/ca.crt")" ]] || setup_fail "gen-certs.sh did not print the caBundle last"

# The local overlay, with the webhook URLs pointed at our port and the caBundle
# filled in (the overlay hardcodes https://127.0.0.1:9443).
"$KUBECTL" kustomize "$E2E_ROOT/manifests/overlays/local" >"$E2E_WORK/local-overlay.orig.yaml" 2>"$E2E_WORK/logs/install.log" \
  || setup_fail "kubectl kustomize manifests/overlays/local" "$E2E_WORK/logs/install.log"
# (The manifests carry no caBundle field: it goes in after each URL.)
sed -e "s#^\( *\)url: https://127\.0\.0\.1:9443/\(.*\)\$#\1url: https://127.0.0.1:$WEBHOOK_PORT/\2\n\1caBundle: $ca_bundle#" \
    "$E2E_WORK/local-overlay.orig.yaml" >"$E2E_WORK/local-overlay.yaml"
[[ "$(grep -c "url: https://127.0.0.1:$WEBHOOK_PORT/\(mutate\|validate\)$" "$E2E_WORK/local-overlay.yaml")" == 2 ]] \
  || setup_fail "could not point the overlay's webhook URLs at port $WEBHOOK_PORT (see $E2E_WORK/local-overlay.yaml)"
[[ "$(grep -c "caBundle: $ca_bundle" "$E2E_WORK/local-overlay.yaml")" == 2 ]] \
  || setup_fail "could not fill in the caBundle (see $E2E_WORK/local-overlay.yaml)"
"$KUBECTL" apply -f "$E2E_WORK/local-overlay.yaml" >>"$E2E_WORK/logs/install.log" 2>&1 \
  || setup_fail "kubectl apply of the local overlay" "$E2E_WORK/logs/install.log"
"$KUBECTL" wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >>"$E2E_WORK/logs/install.log" 2>&1 \
  || setup_fail "CRD not Established" "$E2E_WORK/logs/install.log"
# The suite's controllers run outside the cluster with client certificates
# (one identity each, for the audit log) in the group $E2E_CONTROLLER_GROUP:
# bound to the very ClusterRole and Role that manifests/rbac grants the
# controller's ServiceAccount, and to nothing else.
"$KUBECTL" apply -f - >>"$E2E_WORK/logs/install.log" 2>&1 <<EOF || setup_fail "RBAC bindings of the suite's controllers" "$E2E_WORK/logs/install.log"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-controllers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: modelservice-controller}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: $E2E_CONTROLLER_GROUP}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-controllers-leader-election, namespace: modelservice-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: modelservice-leader-election}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: $E2E_CONTROLLER_GROUP}
EOF

# ------------------------------------------------------------------ webhook
( start_webhook ) 2>>"$E2E_WORK/logs/setup.log" || setup_fail "webhook did not start" "$E2E_WORK/logs/webhook.log"
# The API server loads webhook configurations asynchronously: wait until an
# object that only the webhook rejects is really rejected by it.
probe="$(ms_yaml e2e-webhook-probe 'model: probe' 'strategy:' '  type: RollingUpdate' '  rollingUpdate:' '    maxSurge: 0' '    maxUnavailable: 0')"
t0=$SECONDS out=""
while true; do
  out="$("$KUBECTL" create --dry-run=server -f - <<<"$probe" 2>&1 || true)"
  [[ "$out" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]] && break
  (( SECONDS - t0 < 60 )) || setup_fail "the webhook is not reached through the API server after 60s; last answer: $out" \
    "$E2E_WORK/logs/webhook.log" "$E2E_APISERVER_LOG"
  sleep 0.25
done
say "webhook on https://127.0.0.1:$WEBHOOK_PORT reached through the API server ($(( SECONDS - t0 ))s)"

# ------------------------------------------------------------------ Prometheus + exporter
sed -e "s/@WEBHOOK_METRICS_PORT@/$WEBHOOK_METRICS_PORT/g" \
    -e "s/@CONTROLLER_METRICS_PORT@/$CONTROLLER_METRICS_PORT/g" \
    -e "s/@CONTROLLER_B_METRICS_PORT@/$CONTROLLER_B_METRICS_PORT/g" \
    -e "s/@EXPORTER_PORT@/$EXPORTER_PORT/g" \
    -e "s/@DCGM_EXPORTER_PORT@/$DCGM_EXPORTER_PORT/g" \
    "$here/prometheus/prometheus.yml.in" >"$E2E_WORK/prometheus.yml"
"$PROMTOOL_BIN" check config "$E2E_WORK/prometheus.yml" >>"$E2E_WORK/logs/setup.log" 2>&1 \
  || setup_fail "promtool check config" "$E2E_WORK/logs/setup.log"
( start_queue_exporter ) 2>>"$E2E_WORK/logs/setup.log" || setup_fail "queue exporter did not start" "$E2E_WORK/logs/queue-exporter.log"
( start_dcgm_exporter ) 2>>"$E2E_WORK/logs/setup.log" || setup_fail "DCGM exporter did not start" "$E2E_WORK/logs/dcgm-exporter.log"
( start_prometheus ) 2>>"$E2E_WORK/logs/setup.log" || setup_fail "prometheus did not start" "$E2E_WORK/logs/prometheus.log"
( start_prometheus_adapter ) 2>>"$E2E_WORK/logs/setup.log" \
  || setup_fail "prometheus-adapter did not start or register" "$E2E_WORK/logs/setup.log" "$E2E_WORK/logs/prometheus-adapter.log"

# ------------------------------------------------------------------ controller
( start_controller controller ) 2>>"$E2E_WORK/logs/setup.log" || setup_fail "controller did not start" "$E2E_WORK/logs/controller.log"
if ( poll_until 30 is_leader controller ); then
  say "controller up and leading"
else
  say "WARNING: the controller does not report leader_election_master_status 1 after 30s (see logs/controller.log)"
fi
# ------------------------------------------------------------------ the real node
# real_node_setup: the second cluster, with a real node, and the operator
# installed there from its image; done when the first case that says
# `# needs: real-node` comes (so the other cases do not share the machine
# with it). On failure those cases fail with the reason (lib.sh's
# need_real_node), the others still run.
real_node_setup() {
  local t0=$SECONDS t1 image_cache
  real_setup_done=1
  E2E_OPERATOR_IMAGE="${E2E_OPERATOR_IMAGE:-localhost/modelservice:dev}"
  image_cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
  if [[ -z "$(CONTAINERS_STORAGE_CONF="$image_cache/storage.conf" buildah images -q "$E2E_OPERATOR_IMAGE" 2>/dev/null)" ]]; then
    say "no image $E2E_OPERATOR_IMAGE yet: scripts/build-image.sh (logs/build-image.log)"
    if ! "$E2E_ROOT/scripts/build-image.sh" --tag "$E2E_OPERATOR_IMAGE" >"$E2E_WORK/logs/build-image.log" 2>&1; then
      real_setup_failed "scripts/build-image.sh failed (see $E2E_WORK/logs/build-image.log)"; return
    fi
  fi
  export E2E_REAL_DIR="$E2E_WORK/real"
  # The real-node cluster is the users' kind of cluster: none of the suite's
  # own API server flags (the webhook client certificate of the mTLS set-up).
  if ! E2E_APISERVER_ARGS="" "$here/cluster.sh" --dir "$E2E_REAL_DIR" up --real-node >"$E2E_WORK/logs/real-cluster-up.log" 2>&1; then
    real_setup_failed "cluster.sh up --real-node failed: $(why "$E2E_WORK/logs/real-cluster-up.log")"; return
  fi
  t1=$SECONDS
  if ! "$here/operator/install.sh" --dir "$E2E_REAL_DIR" --image "$E2E_OPERATOR_IMAGE" \
    >"$E2E_WORK/logs/operator-install.log" 2>&1; then
    real_setup_failed "installing the operator from $E2E_OPERATOR_IMAGE failed: $(why "$E2E_WORK/logs/operator-install.log")"; return
  fi
  printf 'export E2E_REAL_DIR=%q\n' "$E2E_REAL_DIR" >>"$E2E_WORK/suite.env"
  say "real-node cluster up ($(( t1 - t0 ))s) and the operator installed from $E2E_OPERATOR_IMAGE ($(( SECONDS - t1 ))s)"
  echo "TIMING real-node set-up $(( SECONDS - t0 ))s (cluster $(( t1 - t0 ))s, operator $(( SECONDS - t1 ))s)" >>"$E2E_WORK/timings.txt"
}
why() { grep -h -m1 'ERROR' "$1" || tail -n 3 "$1" | tr '\n' ' '; }  # why LOG: the reason a script gave
real_setup_failed() {
  say "THE REAL-NODE SET-UP FAILED: $1"
  printf 'export E2E_REAL_SETUP_FAILED=%q\n' "$1" >>"$E2E_WORK/suite.env"
}
real_setup_done=0
say "set-up done in $(( SECONDS - suite_start ))s"

# ------------------------------------------------------------------ cases

# ensure_components: after a case, put back whatever it left stopped, so that
# one failing case does not break the next ones.
ensure_components() {
  proc_alive webhook || { say "webhook not running after the case: restarting it"; ( start_webhook ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  proc_alive queue-exporter || { say "queue exporter not running: restarting it"; ( start_queue_exporter ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  proc_alive dcgm-exporter || { say "DCGM exporter not running: restarting it"; ( start_dcgm_exporter ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  proc_alive prometheus || { say "prometheus not running: restarting it"; ( start_prometheus ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  proc_alive prometheus-adapter || { say "prometheus-adapter not running: restarting it"; ( start_prometheus_adapter ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  if proc_alive controller-b; then say "controller-b left running: stopping it"; proc_stop controller-b TERM 10 2>/dev/null; fi
  proc_alive controller || { say "controller not running: restarting it"; ( start_controller controller ) 2>>"$E2E_WORK/logs/setup.log" || true; }
  if [[ -n "${E2E_REAL_DIR:-}" ]] && ! "$here/cluster.sh" --dir "$E2E_REAL_DIR" status >>"$E2E_WORK/logs/real-cluster-up.log" 2>&1; then
    say "the real-node cluster is not healthy after the case: cluster.sh heal"
    "$here/cluster.sh" --dir "$E2E_REAL_DIR" heal >>"$E2E_WORK/logs/real-cluster-up.log" 2>&1 || true
  fi
  if ! "$here/cluster.sh" --dir "$E2E_WORK/cluster" status >>"$E2E_WORK/logs/cluster-up.log" 2>&1; then
    say "cluster not healthy after the case: restarting what is not running (cluster.sh heal)"
    "$here/cluster.sh" --dir "$E2E_WORK/cluster" heal >>"$E2E_WORK/logs/cluster-up.log" 2>&1 || true
    if ! "$here/cluster.sh" --dir "$E2E_WORK/cluster" status >>"$E2E_WORK/logs/cluster-up.log" 2>&1; then
      say "still not healthy: restarting kube-apiserver"
      "$here/cluster.sh" --dir "$E2E_WORK/cluster" restart-apiserver >>"$E2E_WORK/logs/cluster-up.log" 2>&1 || true
    fi
  fi
}

header() {  # header FILE KEY DEFAULT
  local v
  v="$(sed -n "s/^# $2: *//p" "$1" | head -n 1)"
  echo "${v:-$3}"
}

bash "$E2E_ROOT/scripts/ci-stamp" e2e-setup end  # the step times .ci/run prints
passed=0 failed=0 skipped=0
results=()
shopt -s nullglob
cases=("$here"/cases/*.sh)
(( ${#cases[@]} )) || setup_fail "no cases in $here/cases"

# run_case FILE: runs one case in its own process group under its timeout and
# prints what the console shows of it; its outcome ("PASS|FAIL|SKIP  NAME
# (Ns)[: why]") goes to E2E_WORK/cases/NAME.result.
run_case() {
  local c="$1" name tmo comps clog t0 rc dt why first pid f
  name="$(basename "$c" .sh)"
  tmo="${E2E_CASE_TIMEOUT:-$(header "$c" timeout 180)}"
  comps="$(header "$c" logs "webhook controller")"
  clog="$E2E_WORK/cases/$name.log"
  echo "=== RUN   $name (timeout ${tmo}s)"
  t0=$(now)
  set +e
  # timeout(1) puts the case in its own process group and signals the whole
  # group on expiry; the case's EXIT traps run on SIGTERM.
  if (( verbose )); then
    timeout -k 10 "$tmo" bash -c 'set -euo pipefail; trap "exit 143" TERM; source "$E2E_ROOT/test/e2e/lib.sh"; source "$1"' \
      "$name" "$c" > >(tee "$clog") 2>&1 &
  else
    timeout -k 10 "$tmo" bash -c 'set -euo pipefail; trap "exit 143" TERM; source "$E2E_ROOT/test/e2e/lib.sh"; source "$1"' \
      "$name" "$c" >"$clog" 2>&1 &
  fi
  pid=$!
  echo "$pid" >"$E2E_WORK/cases/$name.pgid"
  wait "$pid"; rc=$?
  kill -KILL -- "-$pid" 2>/dev/null  # background jobs the case left behind
  rm -f "$E2E_WORK/cases/$name.pgid"
  set -e
  dt="$(elapsed "$t0")"
  if (( rc == 0 )); then
    echo "PASS  $name (${dt}s)" >"$E2E_WORK/cases/$name.result"
    echo "--- PASS  $name (${dt}s)"
  elif (( rc == 77 )); then
    echo "SKIP  $name (${dt}s)" >"$E2E_WORK/cases/$name.result"
    echo "--- SKIP  $name (${dt}s): $(grep -m1 'SKIP' "$clog" || true)"
  else
    why=""; (( rc == 124 || rc == 137 )) && why=" TIMED OUT after ${tmo}s"
    # The summary repeats the case's first FAIL line: a CI log that keeps
    # only its tail still says why.
    first="$(grep -m1 -o 'FAIL: .*' "$clog" | cut -c1-300 || true)"
    echo "FAIL  $name (${dt}s)$why${first:+: $first}" >"$E2E_WORK/cases/$name.result"
    echo "--- FAIL  $name (${dt}s, exit $rc)$why"
    echo "    ----- last 60 lines of $clog -----"
    tail -n 60 "$clog" | sed 's/^/    /'
    for comp in $comps; do
      case "$comp" in
        apiserver) f="$E2E_APISERVER_LOG" ;;
        controller-manager) f="$E2E_KCM_LOG" ;;
        scheduler) f="$E2E_SCHEDULER_LOG" ;;
        kwok) f="$E2E_KWOK_LOG" ;;
        *) f="$E2E_WORK/logs/$comp.log" ;;
      esac
      [[ -s "$f" ]] || continue
      echo "    ----- last 25 lines of $f -----"
      tail -n 25 "$f" | sed 's/^/    /'
    done
  fi
}
# count NAME: adds a finished case's outcome to the summary.
count() {
  local r
  r="$(<"$E2E_WORK/cases/$1.result")"
  results+=("$r")
  case "$r" in
    PASS*) passed=$(( passed + 1 )) ;;
    SKIP*) skipped=$(( skipped + 1 )) ;;
    *) failed=$(( failed + 1 )) ;;
  esac
}

# Cases whose header says "# beside: true" are self-contained (their own
# namespace, processes and load) and mostly wait: they run in the background
# from the start, beside the others, and are reported at the end. A case
# whose header says "# alone: true" stops, pauses or reconfigures what every
# request goes through (the API server, the suite's webhook, its leader): the
# cases beside are finished first.
beside=() sequential=()
for c in "${cases[@]}"; do
  name="$(basename "$c" .sh)"
  if [[ -n "$only" ]] && ! [[ "$name" =~ $only ]]; then continue; fi
  if [[ "$(header "$c" beside false)" == true ]]; then beside+=("$c"); else sequential+=("$c"); fi
done
mkdir -p "$E2E_WORK/cases"
for c in ${beside[@]+"${beside[@]}"}; do
  name="$(basename "$c" .sh)"
  echo "=== BESIDE $name (reported at the end)"
  run_case "$c" >"$E2E_WORK/cases/$name.console" 2>&1 &
done
for c in ${sequential[@]+"${sequential[@]}"}; do
  if (( ! real_setup_done )) && [[ "${E2E_REAL_NODE_CASES:-1}" != 0 ]] && grep -q '^# needs: real-node' "$c"; then
    bash "$E2E_ROOT/scripts/ci-stamp" e2e-real-node-setup begin
    real_node_setup
    bash "$E2E_ROOT/scripts/ci-stamp" e2e-real-node-setup end
  fi
  if [[ "$(header "$c" alone false)" == true ]] && (( ${#beside[@]} )); then
    wait  # the cases beside
  fi
  run_case "$c"
  count "$(basename "$c" .sh)"
  ensure_components
done
wait  # the cases beside
for c in ${beside[@]+"${beside[@]}"}; do
  name="$(basename "$c" .sh)"
  cat "$E2E_WORK/cases/$name.console"
  count "$name"
done

teardown
echo
echo "Summary ($(( SECONDS - suite_start ))s wall, logs in $E2E_WORK):"
printf '  %s\n' "${results[@]}"
if [[ -s "$E2E_WORK/timings.txt" ]]; then
  echo "Timings:"
  sed 's/^TIMING /  /' "$E2E_WORK/timings.txt"
fi
summary="$passed passed, $failed failed"
(( skipped )) && summary+=", $skipped skipped"
echo "$summary"
(( failed == 0 ))
