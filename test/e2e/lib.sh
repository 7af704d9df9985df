# shellcheck shell=bash
# lib.sh - helpers shared by test/e2e/run.sh and the cases in test/e2e/cases/.
#
# Sourced, never executed. When E2E_WORK is set and $E2E_WORK/suite.env exists
# (written by run.sh after set-up), it is sourced too, together with the
# cluster's env file, so a case sees KUBECONFIG, KUBECTL, the ports of every
# component and the paths of their logs.
#
# Processes started through proc_start are recorded in $E2E_WORK/proc/NAME.pid
# (+ NAME.cmd, NAME.log) so that run.sh's exit trap stops every one of them,
# including those a case started (a case that stops and restarts a component
# must leave it running again under the same NAME).

E2E_ROOT="${E2E_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
E2E_LIB_DIR="$E2E_ROOT/test/e2e"

if [[ -n "${E2E_WORK:-}" && -s "$E2E_WORK/suite.env" ]]; then
  # shellcheck disable=SC1091
  source "$E2E_WORK/suite.env"
  # shellcheck disable=SC1091
  [[ -s "$E2E_WORK/cluster/env" ]] && source "$E2E_WORK/cluster/env"
fi

# ------------------------------------------------------------------ output

_ts() { date -u +%H:%M:%S.%3N; }
log() { echo "[$(_ts)] $*" >&2; }

# fail MSG...: print and exit non-zero (the case's shell exits; run.sh counts it).
fail() {
  printf "[%s] FAIL: %b\n" "$(_ts)" "$*" >&2
  exit 1
}

assert_eq() {  # assert_eq ACTUAL EXPECTED WHAT
  [[ "$1" == "$2" ]] || fail "$3: expected '$2', got '$1'"
  log "ok: $3 = '$1'"
}

assert_contains() {  # assert_contains HAYSTACK NEEDLE WHAT
  [[ "$1" == *"$2"* ]] || fail "$3: expected to contain '$2', got: $1"
  log "ok: $3 contains '$2'"
}

assert_not_contains() {  # assert_not_contains HAYSTACK NEEDLE WHAT
  [[ "$1" != *"$2"* ]] || fail "$3: expected NOT to contain '$2', got: $1"
  log "ok: $3 does not contain '$2'"
}

assert_le() {  # assert_le A B WHAT (numbers, may be decimals)
  awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }' || fail "$3: expected $1 <= $2"
  log "ok: $3: $1 <= $2"
}

assert_gt() {  # assert_gt A B WHAT
  awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }' || fail "$3: expected $1 > $2"
  log "ok: $3: $1 > $2"
}

# now: seconds since the epoch with millisecond precision.
now() { date +%s.%3N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for TIMEOUT_S DESCRIPTION CMD...: run CMD every 0.25 s until it
# succeeds; fail the case with DESCRIPTION after TIMEOUT_S seconds.
wait_for() {
  local t="$1" what="$2"; shift 2
  local start; start="$(now)"
  local deadline=$(( $(date +%s) + ${t%.*} ))
  while true; do
    if "$@" >/dev/null 2>&1; then
      log "ok: $what (after $(elapsed "$start")s)"
      return 0
    fi
    (( $(date +%s) < deadline )) || fail "timed out after ${t}s waiting for: $what"
    sleep 0.25
  done
}

# wait_output TIMEOUT_S DESCRIPTION EXPECTED CMD...: run CMD every 0.25 s until
# its output (stdout) is EXPECTED; fail the case after TIMEOUT_S seconds,
# showing the last output.
wait_output() {
  local t="$1" what="$2" want="$3"; shift 3
  local start; start="$(now)"
  local deadline=$(( $(date +%s) + ${t%.*} )) out=""
  while true; do
    out="$("$@" 2>/dev/null)" || true
    if [[ "$out" == "$want" ]]; then
      log "ok: $what (after $(elapsed "$start")s)"
      return 0
    fi
    (( $(date +%s) < deadline )) || fail "timed out after ${t}s waiting for: $what\n  expected: $want\n  last:     $out"
    sleep 0.25
  done
}

# poll_until TIMEOUT_S CMD...: like wait_for but returns 1 instead of failing.
poll_until() {
  local t="$1"; shift
  local deadline=$(( $(date +%s) + ${t%.*} ))
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || return 1
    sleep 0.2
  done
}

# ------------------------------------------------------------------ kubectl

# k ARGS...: the kubectl we built (v1.34.4), with a bounded request time.
k() { "$KUBECTL" --request-timeout=30s "$@"; }

# jp KIND/NAME JSONPATH [-n NS]: one field of an object (empty if missing).
jp() { local obj="$1" path="$2"; shift 2; k get "$obj" "$@" -o "jsonpath=$path"; }

# new_ns NAME: create a namespace for a case (cases leave their namespaces
# behind for the logs; 26-delete-gc shows that deleting one completes).
new_ns() {
  k get ns "$1" >/dev/null 2>&1 || k create ns "$1" >/dev/null
}

# ms_yaml NAME [SPEC_YAML_LINES...]: print a ModelService manifest. Each extra
# argument is a line under spec (indented by the caller, 2 spaces base).
ms_yaml() {
  local name="$1"; shift
  printf 'apiVersion: modelops.dev/v1\nkind: ModelService\nmetadata:\n  name: %s\nspec:\n' "$name"
  if (( $# == 0 )); then printf '  model: model-%s\n' "$name"; fi
  local l
  for l in "$@"; do printf '  %s\n' "$l"; done
}

# admission_loop NS PREFIX STOP RESULT [PAUSE]: server-side dry-run creates of
# ModelServices PREFIX-1, PREFIX-2, ... in NS through the API server (so
# through both webhooks) until the file STOP exists, PAUSE seconds apart
# (default none); then writes "SENT FAILED" to RESULT. Each failure is shown
# on stderr with the API server's message. Run it in the background.
admission_loop() {
  local ns="$1" prefix="$2" stop="$3" result="$4" pause="${5:-}" n=0 failed=0 out
  while [[ ! -e "$stop" ]]; do
    n=$(( n + 1 ))
    # `|| true`: under set -e a failed kubectl would end the loop without a
    # result; a failure is counted and shown instead.
    out="$(ms_yaml "$prefix-$n" "model: m" | k -n "$ns" create --dry-run=server -f - -o 'jsonpath={.spec.port}' 2>&1)" || true
    [[ "$out" == 8080 ]] || { failed=$(( failed + 1 )); echo "admission $prefix-$n: $out" >&2; }
    [[ -z "$pause" ]] || sleep "$pause"
  done
  echo "$n $failed" >"$result"
}

# hpa_yaml NS NAME: an autoscaling/v2 HorizontalPodAutoscaler of a user's
# (not the controller's HPA mode) on ModelService NAME's scale subresource,
# 1..3 replicas on an External modelservice_queue_length target of 5 a pod.
hpa_yaml() {
  cat <<EOF
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: $2}
spec:
  scaleTargetRef: {apiVersion: modelops.dev/v1, kind: ModelService, name: $2}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: External
    external:
      metric:
        name: modelservice_queue_length
        selector: {matchLabels: {namespace: $1, modelservice: $2}}
      target: {type: AverageValue, averageValue: "5"}
EOF
}

# ms_phase_is NS NAME PHASE
ms_phase_is() { [[ "$(k -n "$1" get ms "$2" -o 'jsonpath={.status.phase}' 2>/dev/null)" == "$3" ]]; }
# exists NS KIND NAME / gone NS KIND NAME
exists() { k -n "$1" get "$2" "$3" >/dev/null 2>&1; }
gone() {
  local out
  out="$(k -n "$1" get "$2" "$3" 2>&1)" && return 1
  [[ "$out" == *NotFound* || "$out" == *"not found"* ]]
}
deploy_replicas_is() { [[ "$(k -n "$1" get deployment "$2" -o 'jsonpath={.spec.replicas}' 2>/dev/null)" == "$3" ]]; }

# ms_ready NS NAME: phase Ready and READY (status.readyReplicas) equal to
# status.desiredReplicas - what `kubectl get ms` shows once the pods of the
# last rollout were scheduled and became Ready.
ms_ready() {
  local out
  out="$(k -n "$1" get ms "$2" -o 'jsonpath={.status.phase} {.status.readyReplicas} {.status.desiredReplicas}' 2>/dev/null)" || return 1
  local phase ready desired
  read -r phase ready desired <<<"$out"
  [[ "$phase" == Ready && -n "$desired" && "$ready" == "$desired" ]]
}

# wait_ms_ready NS TIMEOUT NAME...: wait_for each to be ms_ready.
wait_ms_ready() {
  local ns="$1" t="$2" n; shift 2
  for n in "$@"; do wait_for "$t" "ModelService $ns/$n Ready (READY = desired replicas)" ms_ready "$ns" "$n"; done
}

# ms_row NS NAME: `kubectl get ms NAME` as a user sees it, first four columns
# (NAME MODEL READY PHASE; READY is ready/desired, as a Deployment's).
ms_row() { k -n "$1" get ms "$2" --no-headers | awk '{print $1, $2, $3, $4}'; }

# health_verdict STAGE < OBJECT.json: what kstatus, Argo CD (the chart's
# Lua), Flux (status.md's healthCheckExprs) and `kubectl wait
# --for=condition=Ready` say of the ModelService on stdin, against the
# verdicts test/health/fixtures/STAGE.json expects (test/health/main.go);
# fails the case when one differs. The object, without what differs from
# run to run (uid, resourceVersion, managedFields), with the fixture's stage
# and verdicts, goes to $E2E_WORK/health/STAGE.json, and with
# E2E_HEALTH_CAPTURE=DIR to DIR/STAGE.json too (test/health/capture.sh: the
# fixtures are these captures).
health_verdict() {
  local stage="$1" fixture="$E2E_ROOT/test/health/fixtures/$1.json" out bin result
  [[ -s "$fixture" ]] || fail "health_verdict: no fixture test/health/fixtures/$stage.json"
  bin="${E2E_HEALTH_CHECK:?run.sh builds it}"
  mkdir -p "$E2E_WORK/health"
  out="$E2E_WORK/health/$stage.json"
  jq --slurpfile f "$fixture" '{stage: $f[0].stage, expect: $f[0].expect,
      object: del(.metadata.uid, .metadata.resourceVersion, .metadata.managedFields)}' >"$out" ||
    fail "health_verdict $stage: the object is not JSON"
  result="$("$bin" "$E2E_ROOT/charts/modelservice-operator/files/argocd-health.lua" \
    "$E2E_ROOT/test/health/flux-health-check-exprs.yaml" "$out" 2>&1)" ||
    fail "health at stage $stage (test/health/fixtures/$stage.json):\n$result\nthe object: $(jq -c .object.status "$out")"
  log "ok: health at stage $stage: $(head -n 1 <<<"$result" | tr -s ' ')"
  [[ -z "${E2E_HEALTH_CAPTURE:-}" ]] || cp "$out" "$E2E_HEALTH_CAPTURE/$stage.json"
}
# health_stage STAGE NS NAME: health_verdict of the ModelService as it is now.
health_stage() {
  local json
  json="$(k -n "$2" get ms "$3" -o json)" || fail "health_stage $1: kubectl get ms $3 -n $2"
  health_verdict "$1" <<<"$json"
}

# pods_of NS NAME [JSONPATH]: the pods of a ModelService (by its instance label).
pods_of() {
  local ns="$1" name="$2" path="${3:-}"
  if [[ -n "$path" ]]; then
    k -n "$ns" get pods -l "app.kubernetes.io/instance=$name" -o "jsonpath=$path"
  else
    k -n "$ns" get pods -l "app.kubernetes.io/instance=$name" -o name
  fi
}

# api_watch PATH FILE [QUERY]: record, in the background, every watch event
# of the collection at API PATH (e.g. /apis/apps/v1/namespaces/NS/replicasets)
# from now on, one JSON event per line ({"type":..,"object":..}) in FILE. It
# watches from the resourceVersion of a list made before it returns, so no
# change after the call is missed however late the stream connects. QUERY:
# extra query parameters, e.g. labelSelector=app.kubernetes.io/instance=x.
# Bounded to 10 minutes; killed with the case.
api_watch() {
  local path="$1" file="$2" q="${3:+&$3}" rv
  rv="$(k get --raw "$path?limit=1$q" | jq -r .metadata.resourceVersion)" || fail "cannot list $path"
  curl -sSN --max-time 600 --cacert "$E2E_CA_CERT" --cert "$E2E_ADMIN_CERT" --key "$E2E_ADMIN_KEY" \
    "$E2E_API_SERVER$path?watch=1&resourceVersion=$rv$q" >"$file" 2>"$file.err" &
}

# ms_states FILE [NAME]: from an api_watch file of ModelServices, one line per
# event: "NAME GENERATION OBSERVED_GENERATION PHASE READY". (A last line still
# being written is skipped.)
ms_states() {
  jq -R -r --arg n "${2:-}" 'fromjson? | select(.type != "BOOKMARK") | .object | select($n == "" or .metadata.name == $n)
    | "\(.metadata.name) \(.metadata.generation) \(.status.observedGeneration // "-") \(.status.phase // "-") \(.status.readyReplicas // 0)"' "$1"
}

# need_full_cluster: skip the case (exit 77) on a light cluster (API server
# and etcd only: no controller manager, scheduler or nodes, so no pods).
need_full_cluster() {
  if [[ "${E2E_CLUSTER_MODE:-full}" != full ]]; then
    echo "SKIP: needs the full cluster (E2E_CLUSTER_MODE=${E2E_CLUSTER_MODE:-})" >&2
    exit 77
  fi
}

# add_node NAME [--gpus N] ...: a fake KWOK node (cluster.sh add-node), Ready on return.
add_node() {
  "$E2E_ROOT/test/e2e/cluster.sh" --dir "$E2E_DIR" add-node "$@" >/dev/null 2>"$E2E_WORK/add-node.err" \
    || fail "cluster.sh add-node $* failed: $(cat "$E2E_WORK/add-node.err")"
  log "added node $1 ($*)"
}

# delete_ms_wait NS TIMEOUT NAME...: delete ModelServices and wait until gone.
delete_ms_wait() {
  local ns="$1" t="$2"; shift 2
  k -n "$ns" delete ms "$@" --wait=false --ignore-not-found >/dev/null
  local n
  for n in "$@"; do wait_for "$t" "ModelService $ns/$n deleted" gone "$ns" ms "$n"; done
}

# ------------------------------------------------------------------ processes

free_port() {  # a port below the ephemeral range (free-port.py says why)
  python3 "$(dirname "${BASH_SOURCE[0]}")/free-port.py"
}

port_free() {  # port_free PORT: nobody listens on 127.0.0.1:PORT
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# proc_start NAME CMD...: start CMD detached (own session), output appended to
# $E2E_WORK/logs/NAME.log, pid in $E2E_WORK/proc/NAME.pid.
proc_start() {
  local name="$1"; shift
  mkdir -p "$E2E_WORK/proc" "$E2E_WORK/logs"
  local logf="$E2E_WORK/logs/$name.log"
  echo "==== $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) starting: $*" >>"$logf"
  setsid "$@" </dev/null >>"$logf" 2>&1 &
  local pid=$!
  echo "$pid" >"$E2E_WORK/proc/$name.pid"
  printf '%s\n' "$1" >"$E2E_WORK/proc/$name.cmd"
  log "started $name (pid $pid): $*"
}

# proc_pid NAME: the pid if that process is alive (and not a zombie).
proc_pid() {
  local f="$E2E_WORK/proc/$1.pid" pid
  [[ -s "$f" ]] || return 1
  pid="$(<"$f")"
  kill -0 "$pid" 2>/dev/null || return 1
  [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || return 1
  echo "$pid"
}
proc_alive() { proc_pid "$1" >/dev/null; }

# proc_stop NAME [SIGNAL] [GRACE_S]: signal (default TERM), wait up to GRACE_S
# (default 10) for exit, then SIGKILL.
proc_stop() {
  local name="$1" sig="${2:-TERM}" grace="${3:-10}" pid i
  if pid="$(proc_pid "$name")"; then
    kill "-$sig" "$pid" 2>/dev/null || true
    for (( i = 0; i < grace * 10; i++ )); do
      proc_alive "$name" || break
      sleep 0.1
    done
    if proc_alive "$name"; then
      log "$name (pid $pid) still running after ${grace}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for (( i = 0; i < 50; i++ )); do proc_alive "$name" || break; sleep 0.1; done
    fi
    log "stopped $name (pid $pid, signal $sig)"
  fi
  rm -f "$E2E_WORK/proc/$name.pid"
}

# proc_stop_all: every process recorded in $E2E_WORK/proc (run.sh's trap).
proc_stop_all() {
  local f name
  for f in "$E2E_WORK"/proc/*.pid; do
    [[ -e "$f" ]] || continue
    name="$(basename "$f" .pid)"
    proc_stop "$name" TERM 10
  done
}

http_ok() { curl -fsS --max-time 2 -o /dev/null "$1"; }

# metric URL SERIES: the value of one sample line of a /metrics page, e.g.
# metric http://127.0.0.1:8080/metrics 'leader_election_master_status{name="x"}'
metric() {
  curl -fsS --max-time 3 "$1" 2>/dev/null | awk -v s="$2" '$1 == s { print $2; found = 1 } END { exit !found }'
}

# ------------------------------------------------------------------ components

# start_webhook: the webhook on $WEBHOOK_PORT with the certificates in $CERT_DIR.
start_webhook() {
  proc_start webhook "$WEBHOOK_BIN" --port "$WEBHOOK_PORT" --bind-address 127.0.0.1 \
    --cert-dir "$CERT_DIR" --cert-poll-interval 200ms \
    --metrics-bind-address "127.0.0.1:$WEBHOOK_METRICS_PORT" \
    --health-probe-bind-address "127.0.0.1:$WEBHOOK_PROBE_PORT" --log-format text \
    ${WEBHOOK_CLIENT_CA:+--client-ca "$WEBHOOK_CLIENT_CA"}
  wait_for 20 "webhook /readyz" http_ok "http://127.0.0.1:$WEBHOOK_PROBE_PORT/readyz"
}

# webhook_served METRICS_URL: requests a webhook answered with 200, both
# paths (/mutate and /validate), from its controller_runtime_webhook_requests_total.
webhook_served() {
  local v m total=0
  for m in /mutate /validate; do
    v="$(metric "$1" "controller_runtime_webhook_requests_total{code=\"200\",webhook=\"$m\"}" || echo 0)"
    total=$(( total + ${v%.*} ))
  done
  echo "$total"
}

# webhook_curl ARGS...: curl presenting the client certificate the webhook
# requires in this suite (run.sh starts it with --client-ca; the API server
# presents the same certificate, see run.sh).
webhook_curl() {
  curl ${WEBHOOK_CLIENT_DIR:+--cert "$WEBHOOK_CLIENT_DIR/kube-apiserver.crt" --key "$WEBHOOK_CLIENT_DIR/kube-apiserver.key"} "$@"
}

# controller_ports NAME -> "METRICS_PORT PROBE_PORT" (controller, controller-b)
controller_ports() {
  case "$1" in
    controller) echo "$CONTROLLER_METRICS_PORT $CONTROLLER_PROBE_PORT" ;;
    controller-b) echo "$CONTROLLER_B_METRICS_PORT $CONTROLLER_B_PROBE_PORT" ;;
    *) return 1 ;;
  esac
}

# controller_user NAME: the user a controller authenticates as (its client
# certificate's CN), i.e. `.user.username` in the audit log.
controller_user() { echo "e2e:$1"; }
# The group of every controller identity of the suite (see controller_kubeconfig).
E2E_CONTROLLER_GROUP=e2e:controllers

# controller_kubeconfig NAME: print the path of a kubeconfig with a client
# certificate of that controller's own (CN=$(controller_user NAME),
# O=e2e:controllers), signed by the cluster's CA, so that the audit log tells
# the controllers apart. The group has exactly the manifests' RBAC (run.sh
# binds manifests/rbac's ClusterRole and leader-election Role to it), so every
# case proves that what the controller does in a real cluster is allowed.
# Made once per suite in $E2E_WORK/identities/.
controller_kubeconfig() {
  local name="$1" d="$E2E_WORK/identities"
  local kc="$d/$name.kubeconfig"
  if [[ ! -s "$kc" ]]; then
    mkdir -p "$d"
    openssl req -newkey rsa:2048 -nodes -keyout "$d/$name.key" -out "$d/$name.csr" \
      -subj "/O=$E2E_CONTROLLER_GROUP/CN=$(controller_user "$name")" 2>/dev/null || fail "openssl req for $name"
    printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
      >"$d/$name.ext"
    openssl x509 -req -in "$d/$name.csr" -CA "$E2E_CA_CERT" -CAkey "$E2E_CA_KEY" -CAcreateserial \
      -CAserial "$d/ca.srl" -days 2 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null \
      || fail "signing the client certificate of $name"
    "$KUBECTL" config --kubeconfig="$kc.tmp" set-cluster e2e --server="$E2E_API_SERVER" \
      --certificate-authority="$E2E_CA_CERT" --embed-certs=true >/dev/null
    "$KUBECTL" config --kubeconfig="$kc.tmp" set-credentials "$name" --client-certificate="$d/$name.crt" \
      --client-key="$d/$name.key" --embed-certs=true >/dev/null
    "$KUBECTL" config --kubeconfig="$kc.tmp" set-context e2e --cluster=e2e --user="$name" >/dev/null
    "$KUBECTL" config --kubeconfig="$kc.tmp" use-context e2e >/dev/null
    mv -f "$kc.tmp" "$kc"
  fi
  echo "$kc"
}

# start_controller NAME [--no-leader-elect] [EXTRA_FLAGS...]: a controller
# (leader-electing unless --no-leader-elect) with the
# suite's common flags (Prometheus on $PROM_PORT, 2 s autoscale interval, 10 s
# scale-down window), authenticated as $(controller_user NAME). Waits for
# /healthz (not for leadership).
start_controller() {
  local name="$1"; shift
  local ports mp pp
  ports="$(controller_ports "$name")" || fail "unknown controller name $name"
  read -r mp pp <<<"$ports"
  local le=(--leader-elect --leader-election-id modelservice-controller --leader-election-namespace modelservice-system)
  if [[ "${1:-}" == --no-leader-elect ]]; then le=(); shift; fi
  local kc
  kc="$(controller_kubeconfig "$name")"
  # --cert-mode provided: the suite's webhook serves run.sh's certificates
  # (gen-certs.sh); cases 41-42 run a controller of mode self of their own.
  proc_start "$name" "$CONTROLLER_BIN" --kubeconfig "$kc" "${le[@]}" --cert-mode provided \
    --default-image registry.local/model-server:e2e \
    --prometheus-url "http://127.0.0.1:$PROM_PORT" \
    --autoscale-interval 2s --scale-down-stabilization 10s \
    --metrics-bind-address "127.0.0.1:$mp" --health-probe-bind-address "127.0.0.1:$pp" \
    --log-format text "$@"
  wait_for 30 "$name /healthz" http_ok "http://127.0.0.1:$pp/healthz"
}

# is_leader NAME: leader_election_master_status of that controller is 1.
is_leader() {
  local mp
  mp="$(controller_ports "$1" | awk '{print $1}')"
  [[ "$(metric "http://127.0.0.1:$mp/metrics" 'leader_election_master_status{name="modelservice-controller"}')" == 1 ]]
}

start_prometheus() {
  proc_start prometheus "$PROMETHEUS_BIN" --config.file "$E2E_WORK/prometheus.yml" \
    --storage.tsdb.path "$E2E_WORK/prometheus-data" \
    --web.listen-address "127.0.0.1:$PROM_PORT" --log.level warn
  wait_for 60 "prometheus ready" http_ok "http://127.0.0.1:$PROM_PORT/-/ready"
}

start_queue_exporter() {
  proc_start queue-exporter python3 "$E2E_LIB_DIR/queue-exporter/queue_exporter.py" \
    --port "$EXPORTER_PORT" --bind 127.0.0.1
  wait_for 20 "queue exporter up" http_ok "http://127.0.0.1:$EXPORTER_PORT/metrics"
}

# start_dcgm_exporter: the fake DCGM exporter (test/e2e/dcgm-exporter) on
# $DCGM_EXPORTER_PORT: DCGM_FI_DEV_GPU_UTIL per pod, set with set_gpu_util.
start_dcgm_exporter() {
  proc_start dcgm-exporter python3 "$E2E_LIB_DIR/dcgm-exporter/dcgm_exporter.py" \
    --port "$DCGM_EXPORTER_PORT" --bind 127.0.0.1
  wait_for 20 "DCGM exporter up" http_ok "http://127.0.0.1:$DCGM_EXPORTER_PORT/metrics"
}

# set_gpu_util NS POD VALUE: the GPU utilization (percent) the DCGM exporter reports for a pod's GPU 0.
set_gpu_util() {
  curl -fsS --max-time 3 -X POST "http://127.0.0.1:$DCGM_EXPORTER_PORT/set?namespace=$1&pod=$2&value=$3" >/dev/null
}

# start_prometheus_adapter [NAME HOST PORT PROMETHEUS_URL KUBECONFIG [RUNNER...]]:
# prometheus-adapter ($PROMETHEUS_ADAPTER, built by build-prometheus-adapter.sh)
# on HOST:PORT (default: the suite's, 127.0.0.1:$PROMETHEUS_ADAPTER_PORT,
# reading the suite's Prometheus, as the user of KUBECONFIG), started through
# RUNNER (e.g. the real node's `node.sh exec DIR`, whose network it then
# shares), with exactly the rule file users are given
# (docs/user/prometheus-adapter-rules.yaml), re-listing Prometheus' series
# every second (users' default: 10 minutes) so that a new series is served at
# once, and registered with kube-aggregator as users register it
# (test/e2e/prometheus-adapter/apiservice.yaml.in: APIService
# v1beta1.external.metrics.k8s.io, its Service). Waits until the APIService is
# Available. Logs: logs/NAME.log.
start_prometheus_adapter() {
  local name="${1:-prometheus-adapter}" host="${2:-127.0.0.1}" port="${3:-$PROMETHEUS_ADAPTER_PORT}"
  local prom="${4:-http://127.0.0.1:$PROM_PORT}" kubeconfig="${5:-$KUBECONFIG}"
  shift "$(( $# < 5 ? $# : 5 ))"
  local certs="$E2E_WORK/$name-certs" ca_bundle
  if [[ ! -s "$certs/tls.crt" ]]; then
    "$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$certs" --service prometheus-adapter --namespace monitoring \
      >/dev/null 2>>"$E2E_WORK/logs/gen-certs.log" || fail "gen-certs.sh for $name"
  fi
  proc_start "$name" "$@" "$PROMETHEUS_ADAPTER" --bind-address "$host" --secure-port "$port" \
    --tls-cert-file "$certs/tls.crt" --tls-private-key-file "$certs/tls.key" \
    --lister-kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" \
    --authorization-kubeconfig "$kubeconfig" \
    --prometheus-url "$prom" \
    --config "$E2E_ROOT/docs/user/prometheus-adapter-rules.yaml" \
    --metrics-relist-interval 1s --metrics-max-age 5m -v 2
  wait_for 60 "$name /readyz" "$@" curl -fsSk --max-time 2 -o /dev/null "https://$host:$port/readyz"
  ca_bundle="$(base64 -w0 "$certs/ca.crt")"
  # The Service's form: ExternalName unless kube-apiserver routes to endpoints.
  local form=ExternalName other=ClusterIP
  if grep -q -- '--enable-aggregator-routing=true' "$(dirname "$KUBECONFIG")/kube-apiserver.args" 2>/dev/null; then
    form=ClusterIP other=ExternalName
  fi
  awk -v drop="# form: $other" 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } index($0, drop) == 0' \
    "$E2E_LIB_DIR/prometheus-adapter/apiservice.yaml.in" \
    | sed -e "s/@HOST@/$host/g" -e "s/@PORT@/$port/g" -e "s#@CA_BUNDLE@#$ca_bundle#g" | k apply -f - >/dev/null
  wait_for 60 "APIService v1beta1.external.metrics.k8s.io Available" apiservice_available v1beta1.external.metrics.k8s.io
}

# apiservice_available NAME: the APIService's Available condition is True.
apiservice_available() {
  [[ "$(k get apiservice "$1" -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" == True ]]
}

# external_metric NS NAME: the raw answer of the External metrics API for
# modelservice_queue_length of ModelService NS/NAME, through kube-apiserver.
external_metric() {
  k get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/$1/modelservice_queue_length?labelSelector=modelservice%3D$2"
}

# set_queue NS NAME VALUE: the queue length the exporter reports for a ModelService.
set_queue() {
  curl -fsS --max-time 3 -X POST \
    "http://127.0.0.1:$EXPORTER_PORT/set?namespace=$1&modelservice=$2&value=$3" >/dev/null
}

# prom_query EXPR: the JSON answer of Prometheus' /api/v1/query.
prom_query() {
  curl -fsS --max-time 5 -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"
}

# ------------------------------------------------------------------ audit log

# audit_mark: the current number of lines of the audit log (a position).
audit_mark() { wc -l <"$E2E_AUDIT_LOG" | tr -d ' '; }

# controller_writes_since MARK: one line "verb resource ns/name code" per
# write request (create/update/patch/delete) the controller made after MARK,
# leases excluded (renewing the leader Lease is not reconciling). The
# certificate cases' own controllers (listed in E2E_WORK/other-controllers;
# 42-certs-rotation-under-load runs beside the others) are not counted.
controller_writes_since() {
  local others='[]'
  if [[ -s "$E2E_WORK/other-controllers" ]]; then
    others="$(jq -R -s -c 'split("\n") | map(select(. != ""))' "$E2E_WORK/other-controllers")"
  fi
  tail -n "+$(( $1 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --argjson others "$others" '
    select(.stage == "ResponseComplete")
    | select((.userAgent // "") | startswith("modelservice-controller"))
    | select(.user.username as $u | $others | index($u) | not)
    | select(.verb == "create" or .verb == "update" or .verb == "patch" or .verb == "delete" or .verb == "deletecollection")
    | select(.objectRef.resource != "leases")
    | "\(.verb) \(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end) \(.objectRef.namespace // "")/\(.objectRef.name // "") \(.responseStatus.code)"'
}

# assert_no_controller_writes SECONDS WHAT: after 3 s for in-flight work to
# settle, the controller makes no write request (Leases excepted) for
# SECONDS, from the audit log; the writes it made are listed when it did.
# Sets quiet_mark to the audit line the quiet period started at.
assert_no_controller_writes() {
  local secs="$1" what="$2" writes n
  sleep 3
  quiet_mark="$(audit_mark)"
  log "quiet period: $secs s from audit log line $quiet_mark"
  sleep "$secs"
  writes="$(controller_writes_since "$quiet_mark")"
  n="$(grep -c . <<<"$writes" || true)"
  if (( n > 0 )); then
    echo "controller writes during the quiet period:" >&2
    sort <<<"$writes" | uniq -c | sort -rn | head -n 30 >&2
  fi
  assert_eq "$n" 0 "controller write requests during $secs s $what"
}

# warning_events NS NAME REASON: how many Warning Events REASON the
# ModelService NAME has (core/v1 Events, their counts included).
warning_events() {
  k -n "$1" get events -o json | jq --arg n "$2" --arg r "$3" '[.items[] | select(.involvedObject.kind == "ModelService"
    and .involvedObject.name == $n and .type == "Warning" and .reason == $r)
    | if (.count // 0) > 0 then .count else 1 end] | add // 0'
}

# jq definitions for the audit log: `ts` turns an RFC 3339 time with
# microseconds into epoch seconds; `write` selects mutating requests; `what`
# prints "verb resource[/subresource] ns/name code".
AUDIT_JQ_DEFS='
def ts: (.[0:19] + "Z" | fromdateiso8601) + (("0" + .[19:-1]) | tonumber? // 0);
def write: .verb == "create" or .verb == "update" or .verb == "patch" or .verb == "delete" or .verb == "deletecollection";
def what: "\(.verb) \(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end) \(.objectRef.namespace // "")/\(.objectRef.name // "") \(.responseStatus.code)";
'

# audit_writes_by USER MARK [AFTER]: one line "EPOCH verb resource ns/name
# code" per write request (any resource, Events and the Lease included) made
# by USER (see controller_user) after audit line MARK and received by the API
# server after AFTER (epoch seconds, default 0).
audit_writes_by() {
  tail -n "+$(( $2 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg u "$1" --argjson after "${3:-0}" "$AUDIT_JQ_DEFS"'
    select(.stage == "ResponseComplete" and .user.username == $u and write)
    | (.requestReceivedTimestamp | ts) as $t | select($t > $after) | "\($t) \(what)"'
}

# audit_lease_writes USER MARK: the epoch (received) of each successful write
# of the leader Lease by USER after audit line MARK, one a line.
audit_lease_writes() {
  tail -n "+$(( $2 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg u "$1" "$AUDIT_JQ_DEFS"'
    select(.stage == "ResponseComplete" and .user.username == $u and write
           and .objectRef.resource == "leases" and .objectRef.name == "modelservice-controller"
           and .responseStatus.code < 300)
    | .requestReceivedTimestamp | ts'
}

# audit_lease_renewals USER MARK AFTER: "RECEIVED RENEWTIME CODE" (epochs) for
# each write of the leader Lease by USER after audit line MARK received after
# AFTER; RENEWTIME is the spec.renewTime the writer stamped when it sent it.
audit_lease_renewals() {
  tail -n "+$(( $2 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg u "$1" --argjson after "$3" "$AUDIT_JQ_DEFS"'
    select(.stage == "ResponseComplete" and .user.username == $u and write
           and .objectRef.resource == "leases" and .objectRef.name == "modelservice-controller")
    | (.requestReceivedTimestamp | ts) as $t | select($t > $after)
    | "\($t) \(.requestObject.spec.renewTime // "-" | if . == "-" then . else ts end) \(.responseStatus.code)"'
}

# audit_creates NS RESOURCE MARK: "name count" of successful creates of
# RESOURCE in NS after audit line MARK, by anyone.
audit_creates() {
  tail -n "+$(( $3 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$1" --arg r "$2" '
    select(.stage == "ResponseComplete" and .verb == "create" and .objectRef.resource == $r
           and .objectRef.namespace == $ns and .responseStatus.code < 300) | .objectRef.name // .responseObject.metadata.name // "?"' \
    | sort | uniq -c | awk '{print $2, $1}'
}

# ------------------------------------------------------------------ the real node

# The cases 90-99 run against a cluster of their own with a real node
# (test/e2e/cluster.sh up --real-node, in $E2E_WORK/real), where run.sh
# installed the operator from its image (test/e2e/operator/install.sh): the
# suite's own cluster stays as it is, with the webhook and the controllers
# of the other cases as host processes. Such a case says `# needs: real-node`.
OPERATOR_NS=modelservice-system

# need_real_node: fail when run.sh could not set up the real-node cluster, skip
# (exit 77) when it did not (E2E_REAL_NODE_CASES=0);
# otherwise point this case's kubectl at it (its env: KUBECONFIG, KUBECTL,
# E2E_AUDIT_LOG, E2E_NODE_DIR, ...).
need_real_node() {
  [[ -z "${E2E_REAL_SETUP_FAILED:-}" ]] || fail "the real-node set-up failed: $E2E_REAL_SETUP_FAILED"
  if [[ -z "${E2E_REAL_DIR:-}" || ! -s "$E2E_REAL_DIR/env" ]]; then
    echo "SKIP: needs the real-node cluster (run.sh starts it when a selected case says '# needs: real-node')" >&2
    exit 77
  fi
  # shellcheck disable=SC1091
  source "$E2E_REAL_DIR/env"
}

# node_exec CMD...: CMD in the real node's network and mount namespaces.
node_exec() { "$E2E_ROOT/test/e2e/cluster.sh" --dir "$E2E_REAL_DIR" node-exec "$@"; }

# container_pid NS POD CONTAINER: the host PID of the container's first
# process, from containerd's task list (the real node shares the host's PID
# namespace). The operator's image has no shell, so a case looks at its
# containers from outside: /proc/PID/status, /proc/PID/mountinfo and
# /proc/PID/root/... instead of `kubectl exec`.
container_pid() {
  local id
  id="$(k -n "$1" get pod "$2" -o "jsonpath={.status.containerStatuses[?(@.name==\"$3\")].containerID}")"
  id="${id#containerd://}"
  [[ -n $id ]] || { echo "container_pid: no container $3 in pod $2" >&2; return 1; }
  ctr --address "$E2E_REAL_DIR/node/containerd.sock" -n k8s.io task ls | awk -v id="$id" '$1 == id { print $2 }'
}

# operator_pods: the operator's Pod names, one a line (sorted).
operator_pods() {
  # The Deployment's selector: not the helm test Pod (component test) that
  # case 90 leaves behind.
  k -n "$OPERATOR_NS" get pods -l app.kubernetes.io/name=modelservice-operator,app.kubernetes.io/component=operator \
    -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}' | sort
}

# pods_ready_count: how many operator Pods are Ready (condition Ready True).
operator_ready_count() {
  k -n "$OPERATOR_NS" get pods -l app.kubernetes.io/name=modelservice-operator,app.kubernetes.io/component=operator -o json \
    | jq '[.items[] | select(.metadata.deletionTimestamp == null)
           | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}

# webhook_endpoints: the ready addresses of the webhook Service's
# EndpointSlices (what the API server may call), sorted, space-separated.
webhook_endpoints() {
  k -n "$OPERATOR_NS" get endpointslices -l kubernetes.io/service-name=modelservice-webhook -o json \
    | jq -r '[.items[].endpoints[]? | select(.conditions.ready == true) | .addresses[]] | sort | join(" ")'
}

# leader_pod: the operator Pod holding the controller's Lease (the holder
# identity is HOSTNAME_SUFFIX, the hostname being the Pod's name).
leader_pod() {
  local holder
  holder="$(k -n "$OPERATOR_NS" get lease modelservice-controller -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null)" || return 1
  [[ -n "$holder" ]] || return 1
  echo "${holder%_*}"
}

# pod_get POD PORT PATH: GET http://POD:PORT/PATH through the API server's
# pod proxy (its egress selector reaches the Pod inside the node's namespace).
pod_get() { k get --raw "/api/v1/namespaces/$OPERATOR_NS/pods/$1:$2/proxy/${3#/}"; }

# container_restarts POD CONTAINER
container_restarts() {
  k -n "$OPERATOR_NS" get pod "$1" -o "jsonpath={.status.containerStatuses[?(@.name==\"$2\")].restartCount}"
}

# real_node_ns NAME: a namespace whose Pods all run on the real node: the
# PodNodeSelector and PodTolerationRestriction admission plugins (on in a
# real-node cluster) give each Pod the node's selector and a toleration of
# its taint (a ModelService's spec has no placement fields).
real_node_ns() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $1
  annotations:
    scheduler.alpha.kubernetes.io/node-selector: modelops.dev/real-node=true
    scheduler.alpha.kubernetes.io/defaultTolerations: '[{"key":"modelops.dev/real-node","operator":"Exists","effect":"NoSchedule"}]'
EOF
}

# real_node_ms NAME [SPEC_LINES...]: ms_yaml for a ModelService of the
# example model server (its image imported by install.sh); in a real_node_ns
# namespace its pods run on the real node.
real_node_ms() {
  local name="$1"; shift
  ms_yaml "$name" "model: $name-model" 'image: localhost/model-server:dev' "$@"
}

# The webhook's certificates in mode self (the chart's default): the Secret
# the leader's controller keeps, and what the webhook Pods serve.
OPERATOR_SECRET=modelservice-webhook-tls
# operator_secret KEY: that key of the Secret, decoded (e.g. tls.crt, ca.crt).
operator_secret() {
  k -n "$OPERATOR_NS" get secret "$OPERATOR_SECRET" -o "jsonpath={.data.${1//./\\.}}" | base64 -d
}
# fingerprint: the SHA-256 fingerprint of the first certificate on stdin.
fingerprint() { openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2; }
# served_fp IP: the fingerprint of the certificate the webhook at IP:9443
# serves (a TLS handshake from inside the real node's network namespace).
served_fp() {
  node_exec sh -c "openssl s_client -connect $1:9443 -servername modelservice-webhook.$OPERATOR_NS.svc </dev/null 2>/dev/null" \
    | fingerprint
}
# ca_bundle KIND NAME: the caBundle of a webhook configuration's first webhook, decoded.
ca_bundle() { k get "$1" "$2" -o 'jsonpath={.webhooks[0].clientConfig.caBundle}' | base64 -d; }
# real_helm ARGS...: the cached Helm (test/e2e/build-helm.sh), with its
# homes in this case's work space, against the real-node cluster.
real_helm() {
  [[ -n "${HELM:-}" ]] || eval "$("$E2E_ROOT/test/e2e/build-helm.sh" 2>/dev/null)"
  HELM_CACHE_HOME="$E2E_WORK/helm-real/cache" HELM_CONFIG_HOME="$E2E_WORK/helm-real/config" \
    HELM_DATA_HOME="$E2E_WORK/helm-real/data" "$HELM" "$@"
}
