# Queue-length autoscaling with the loop closed on the real node (issue 44):
# real load on real pods, read by a real Prometheus that finds them itself,
# in both modes: the controller's own autoscaler, then a HorizontalPodAutoscaler
# reading the real prometheus-adapter.
# - The model: the example server answering one prediction at a time in
#   200 ms (--concurrency 1: 5 requests/s a pod; the rest wait, and its
#   modelservice_queue_length gauge counts waiting and running), draining for
#   5 s after SIGTERM (readiness 503, still serving) within its grace period.
# - Prometheus, built from Go modules, runs in the node's network namespace as
#   an in-cluster Prometheus would, with the scrape job of
#   docs/operator/monitoring.md as users copy it: Kubernetes service
#   discovery (role pod, as a ServiceAccount allowed to watch the namespace's
#   pods) and its relabelling to the namespace and modelservice labels.
# - Mode Controller: the operator's controller (its Pod on the real node,
#   installed with prometheusURL http://10.86.0.1:9090, --autoscale-interval
#   2s and --scale-down-stabilization 20s) reads the queue with its default
#   query. Mode HPA: prometheus-adapter, in the node's network as an
#   in-cluster adapter would be, with the rule docs/user/autoscaling.md gives
#   users, serves it as the External metric the controller's HPA names
#   (kube-controller-manager syncs HPAs every 2 s; their scale-down window is
#   the same 20 s).
# - vegeta sends predictions at a constant rate (open loop: arrivals do not
#   wait for answers) through the API server's service proxy, which sends
#   each to a ready endpoint of the Service.
# Then mode GPU: mode Controller with `gpus: 1` and targetGPUUtilization 50
# (the queue's target, 100, out of the way) on the GPUs the real node
# advertises (an extended resource), read from a DCGM stand-in in the node's
# network behind the Service NVIDIA's chart makes, found by Prometheus with
# monitoring.md's dcgm-exporter job (role endpointslice, honor_labels), whose
# utilization is how busy each GPU pod really is: R = ceil(n x U / 50) steps
# up as new pods report (1 -> 2 -> 4 -> 5), then back to 1.
# In each mode, from 1 idle replica:
# 1. 16 requests/s (a little over 3 times a pod's 5/s): the queue grows, the
#    replicas go to R = clamp(ceil(L / 1), 1, 5) = 5 with no step back, the
#    new pods become Ready and answer requests, and the step's backlog drains
#    (L back under 2 per replica).
# 2. 2 requests per 3 s: L falls to 1 or 0; after the 20 s window the
#    replicas go back to 1, and the leaving pods drain. L is the sum of each
#    pod's last sample (scraped every second, each pod at its own phase), so
#    two requests less than about a second apart, answered by two pods, can
#    both be counted: arrivals 1.5 s apart (each running 200 ms) cannot.
#    (At 13 requests per 10 s, L read 2 a few tenths of a second in every
#    10 s, and an HPA syncing every 2.01 s stayed on that phase for a minute:
#    it held 2 replicas. At 2/s or 1/s the rate is in step with the scrapes
#    and a pod can be busy at every one of them.)
# 0 failed requests through both; no flapping (the desired replicas rise,
# then fall, never rise again). The timeline (load, queue, desired and ready
# replicas, per second) is kept in the case's directory as
# MODE/timeline.csv; bench/results/autoscaling-loop.{csv,md} come from a run
# of test/e2e/loop/record.sh.
# timeout: 480
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-loop
name=loop
real_node_ns "$ns"
dir="$E2E_REAL_DIR/loop"
mkdir -p "$dir"
vegeta="$("$E2E_ROOT/test/e2e/build-go-tool.sh" "$E2E_ROOT/test/e2e/load-tools" github.com/tsenart/vegeta/v12 vegeta \
  2>"$dir/build-vegeta.log")" || fail "building vegeta: $(tail -n 3 "$dir/build-vegeta.log")"
pids=()
# loop_state: what each part of the loop has for the ModelService at hand (on a failure, so
# that a hold is told apart: the metric the HPA could not read, a queue that
# stayed up, a status that did not follow the Deployment).
loop_state() {
  echo "--- state of $ns/$name at $(date -u +%T.%N | cut -c1-12):"
  echo "ModelService desired/ready: $(jp "ms/$name" '{.status.desiredReplicas}/{.status.readyReplicas}' -n "$ns" 2>&1)"
  echo "Deployment spec/ready: $(jp "deploy/$name" '{.spec.replicas}/{.status.readyReplicas}' -n "$ns" 2>&1)"
  echo "Prometheus, queue per pod: $(promq "modelservice_queue_length{namespace=\"$ns\",modelservice=\"$name\"}" 2>&1)"
  if [[ $name == loop-hpa ]]; then
    echo "External metric: $(external_metric "$ns" "$name" 2>&1 | jq -c '[.items[].value]' 2>&1)"
    k -n "$ns" get hpa "$name" -o json 2>&1 | jq -c '.status' 2>&1
    k -n "$ns" get events --field-selector "involvedObject.kind=HorizontalPodAutoscaler" \
      -o custom-columns=LAST:.lastTimestamp,REASON:.reason,MESSAGE:.message 2>&1 | tail -n 8
  fi
}
cleanup() {
  local rc=$?
  ((rc == 0)) || [[ -z ${query:-} ]] || loop_state >&2 || true
  kill -INT ${pids[@]+"${pids[@]}"} 2>/dev/null || true
  proc_stop loop-prometheus TERM 5 2>/dev/null || true
  proc_stop loop-adapter TERM 5 2>/dev/null || true
  proc_stop loop-dcgm TERM 5 2>/dev/null || true
}
trap cleanup EXIT

# ---- Prometheus: a ServiceAccount that may watch the namespace's pods, the docs' scrape job.
k -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: prometheus-pods}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: prometheus-pods}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: prometheus-pods}
subjects: [{kind: ServiceAccount, name: prometheus, namespace: $ns}]
EOF
k -n "$ns" create token prometheus --duration 1h >"$dir/token"
cp "$E2E_CA_CERT" "$dir/ca.crt"
# ---- The GPUs: the real node offers 8 nvidia.com/gpu (an extended resource
# no device plugin manages: the pods that ask for one get nothing, which the
# example server does not need), and a DCGM stand-in in the node's network,
# behind the Service NVIDIA's chart makes (app.kubernetes.io/name
# dcgm-exporter, port metrics), reporting each GPU pod of the node as busy
# as the pod really is (test/e2e/dcgm-exporter --kubernetes).
node="$(k get nodes -l modelops.dev/real-node=true -o jsonpath='{.items[0].metadata.name}')"
k patch node "$node" --subresource=status --type=json \
  -p '[{"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "8"}]' >/dev/null
wait_output 60 "the kubelet counts the 8 GPUs in the node's allocatable" 8 \
  jp "node/$node" '{.status.allocatable.nvidia\.com/gpu}'
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: gpu-operator}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: dcgm-exporter, namespace: gpu-operator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-dcgm-exporter}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-dcgm-exporter}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-dcgm-exporter}
subjects: [{kind: ServiceAccount, name: dcgm-exporter, namespace: gpu-operator}]
---
apiVersion: v1
kind: Service
metadata:
  name: dcgm-exporter
  namespace: gpu-operator
  labels: {app.kubernetes.io/name: dcgm-exporter}
spec:
  ports: [{name: metrics, port: 9400}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: dcgm-exporter
  namespace: gpu-operator
  labels: {kubernetes.io/service-name: dcgm-exporter}
addressType: IPv4
ports: [{name: metrics, port: 9400}]
endpoints: [{addresses: [10.86.0.1]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: prometheus-endpoints, namespace: gpu-operator}
rules:
  - {apiGroups: [""], resources: [pods, services], verbs: [get, list, watch]}
  - {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: prometheus-endpoints, namespace: gpu-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: prometheus-endpoints}
subjects: [{kind: ServiceAccount, name: prometheus, namespace: $ns}]
EOF
k -n gpu-operator create token dcgm-exporter --duration 1h >"$dir/dcgm-token"
proc_start loop-dcgm "$E2E_ROOT/test/e2e/node/node.sh" exec "$E2E_REAL_DIR" python3 \
  "$E2E_ROOT/test/e2e/dcgm-exporter/dcgm_exporter.py" --bind 10.86.0.1 --port 9400 \
  --kubernetes https://10.0.0.1:443 --token-file "$dir/dcgm-token" --ca-file "$dir/ca.crt" --node "$node"
python3 "$E2E_ROOT/test/e2e/prometheus/models-job.py" "$E2E_ROOT/docs/operator/monitoring.md" \
  https://10.0.0.1:443 "$dir/ca.crt" "$dir/token" "$ns" 1s gpu-operator >"$dir/prometheus.yml"
proc_start loop-prometheus "$E2E_ROOT/test/e2e/node/node.sh" exec "$E2E_REAL_DIR" "$PROMETHEUS_BIN" \
  --config.file "$dir/prometheus.yml" --storage.tsdb.path "$dir/prometheus-data" \
  --web.listen-address 10.86.0.1:9090 --log.level warn
promq() {  # promq QUERY: the values of an instant query, as a JSON list
  node_exec curl -fsS --max-time 3 http://10.86.0.1:9090/api/v1/query --data-urlencode "query=$1" \
    | jq -c '[.data.result[].value[1]]'
}

# ---- prometheus-adapter: in the node's network, as the cluster's admin
# (through the node's address of the API server, 10.0.0.1:443).
sed "s#server: https://.*#server: https://10.0.0.1:443#" "$E2E_REAL_DIR/kubeconfig" >"$dir/adapter.kubeconfig"
start_prometheus_adapter loop-adapter 10.86.0.1 7443 http://10.86.0.1:9090 "$dir/adapter.kubeconfig" \
  "$E2E_ROOT/test/e2e/node/node.sh" exec "$E2E_REAL_DIR"

desired_ready() { jp "ms/$name" '{.status.desiredReplicas} {.status.readyReplicas}' -n "$ns"; }
queue_is() {  # queue_is OP N: L (as Prometheus has it) compares so with N
  awk -v l="$(promq "$query" | jq -r '.[0] // "x"')" -v op="$1" -v n="$2" \
    'BEGIN { exit !(l != "x" && (op == "<" ? l + 0 < n : l + 0 >= n)) }'
}
model_pods() { pods_of "$ns" "$name" | grep -c . || true; }
# attack RATE OUT: predictions at RATE (vegeta's N/DURATION) until SIGINT (then it waits for the
# answers in flight and writes them).
attack() {
  "$vegeta" attack -targets "$out/target.txt" -rate "$1" -duration 10m -timeout 60s -max-workers 200 \
    -root-certs "$E2E_CA_CERT" -cert "$E2E_ADMIN_CERT" -key "$E2E_ADMIN_KEY" >"$2" 2>"$2.err" &
  pids+=($!)
  attacker=$!
}
stop_attack() { kill -INT "$attacker"; wait "$attacker" || fail "vegeta: $(cat "$1.err")"; }

# loop MODE: the two steps of load on a ModelService of that autoscaling
# mode; what everyone saw in $dir/MODE/.
loop() {
  local mode="$1" start end t_out t_in summary total failed peak changes
  name="loop-${mode,,}" out="$dir/$mode"
  mkdir -p "$out"
  # The controller's default query (--prometheus-query), for this object;
  # in mode HPA the same sum, which prometheus-adapter's rule makes.
  query="sum(modelservice_queue_length{namespace=\"$ns\",modelservice=\"$name\"})"
  # Mode GPU: mode Controller on GPU utilization (target 50 %), the queue's
  # target (100) out of the way.
  local scaling="autoscaling: {mode: $mode, minReplicas: 1, maxReplicas: 5, targetQueueLength: 1}" gpus='gpus: 0'
  if [[ $mode == GPU ]]; then
    scaling="autoscaling: {minReplicas: 1, maxReplicas: 5, targetQueueLength: 100, targetGPUUtilization: 50}" gpus='gpus: 1'
  fi
  real_node_ms "$name" 'args: ["--delay-ms", "200", "--concurrency", "1", "--drain-seconds", "5"]' \
    'terminationGracePeriodSeconds: 30' "$gpus" "$scaling" | k -n "$ns" apply -f - >/dev/null
  wait_ms_ready "$ns" 90 "$name"
  wait_output 60 "Prometheus found the pod by service discovery and reads its queue" '["0"]' promq "$query"
  assert_eq "$(promq "up{job=\"modelservice-models\",namespace=\"$ns\",modelservice=\"$name\"}")" '["1"]' "the pod's target is up"
  if [[ $mode == GPU ]]; then
    wait_output 60 "Prometheus found the DCGM stand-in by service discovery, with the pod's GPU idle" '["0"]' \
      promq "DCGM_FI_DEV_GPU_UTIL{namespace=\"$ns\",pod=~\"$name-.*\"}"
    wait_output 60 "status.gpuUtilization" 0 jp "ms/$name" '{.status.gpuUtilization}' -n "$ns"
  fi
  if [[ $mode == HPA ]]; then
    wait_for 60 "prometheus-adapter serves the queue (0) as the External metric" \
      eval '[[ "$(external_metric "$ns" "$name" | jq -r ".items[0].value")" == 0 ]]'
    wait_for 60 "the HPA reads it" eval \
      '[[ "$(k -n "$ns" get hpa "$name" -o jsonpath="{.status.currentMetrics[0].external.current.averageValue}")" == 0 ]]'
  fi
  assert_eq "$(jp "ms/$name" '{.status.desiredReplicas} {.status.readyReplicas}' -n "$ns")" "1 1" "desired and ready before the load"

  # The ModelService (a first ADDED event: its state now) and every change,
  # each stamped with the time it arrived.
  curl -sSN --max-time 600 --cacert "$E2E_CA_CERT" --cert "$E2E_ADMIN_CERT" --key "$E2E_ADMIN_KEY" \
    "$E2E_API_SERVER/apis/modelops.dev/v1/namespaces/$ns/modelservices?watch=1&fieldSelector=metadata.name%3D$name" \
    2>/dev/null | while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$out/watch.txt" &
  pids+=($!)
  printf 'POST %s/api/v1/namespaces/%s/services/%s:8080/proxy/v1/predict\n' "$E2E_API_SERVER" "$ns" "$name" >"$out/target.txt"

  # ---- 1. Scale out under 16 requests/s.
  start="$EPOCHREALTIME"
  attack 16/1s "$out/phase1.bin"
  wait_for 60 "$mode: the queue reaches Prometheus (L >= 5)" queue_is '>=' 5
  wait_output 90 "$mode: scaled out: 5 desired, 5 ready" "5 5" desired_ready
  t_out="$(awk -v s="$start" -v n="$EPOCHREALTIME" 'BEGIN { printf "%.1f", n - s }')"
  wait_for 60 "$mode: the step's backlog drained (L < 10 with 5 replicas)" queue_is '<' 10
  stop_attack "$out/phase1.bin"

  # ---- 2. Scale in under 0.67 requests/s.
  local t_in0="$EPOCHREALTIME"
  attack 2/3s "$out/phase2.bin"
  wait_output 90 "$mode: scaled in: 1 desired, 1 ready" "1 1" desired_ready
  t_in="$(awk -v s="$t_in0" -v n="$EPOCHREALTIME" 'BEGIN { printf "%.1f", n - s }')"
  wait_output 60 "$mode: the leaving pods drained and exited" 1 model_pods
  stop_attack "$out/phase2.bin"
  end="$EPOCHREALTIME"

  # ---- What everyone saw.
  # (each file decoded on its own: two gob streams do not concatenate)
  "$vegeta" encode --to csv "$out/phase1.bin" "$out/phase2.bin" >"$out/requests.csv"
  "$vegeta" report "$out/phase1.bin" "$out/phase2.bin" >"$out/report.txt" 2>&1 || true
  node_exec curl -fsS --max-time 10 http://10.86.0.1:9090/api/v1/query_range --data-urlencode "query=$query" \
    --data-urlencode "start=${start%.*}" --data-urlencode "end=${end%.*}" --data-urlencode step=1 >"$out/queue.json"
  summary="$(python3 "$E2E_ROOT/test/e2e/loop/timeline.py" "$start" "$out/requests.csv" "$out/watch.txt" "$out/queue.json" \
    "$out/timeline.csv")" || fail "timeline.py failed"
  printf '%s\nscale-in-ready %s\n' "$summary" "$t_in" >"$out/summary.txt"
  log "$mode: $summary"
  total="$(awk '$1 == "requests" { print $2 }' <<<"$summary")"
  failed="$(awk '$1 == "failed" { print $2 }' <<<"$summary")"
  grep -m 5 -v ',200,' "$out/requests.csv" >&2 || true
  assert_eq "$failed" 0 "$mode: failed requests of $total through the scale-out and the scale-in"
  assert_eq "$(awk '$1 == "first-answer"' <<<"$summary" | grep -c .)" 5 "$mode: pods that answered predictions"
  while read -r _ pod first; do
    assert_gt "$(awk -v p="$pod" '$1 == "pods" { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == p) print a[2] } }' <<<"$summary")" 5 \
      "$mode: predictions answered by $pod (first at ${first}s)"
  done < <(awk '$1 == "first-answer"' <<<"$summary")
  changes="$(awk '$1 == "desired" { $1 = ""; print substr($0, 2) }' <<<"$summary")"
  assert_eq "$(awk '$1 == "flapping" { print $2 }' <<<"$summary")" 0 "$mode: the desired replicas rose then fell, never rose again ($changes)"
  peak="$(awk '$1 == "queue-peak" { print $2 }' <<<"$summary")"
  if [[ $mode == GPU ]]; then
    # L never passed 100 (1 replica's worth): the GPUs' utilization, as the
    # DCGM stand-in measured the pods' work, scaled them.
    assert_eq "$(awk -v p="$peak" 'BEGIN { print (p < 100) }')" 1 "GPU: the queue's peak $peak stayed under its target of 100"
    assert_contains "$(k -n "$ns" get events --field-selector "involvedObject.name=$name,reason=Scaled" -o jsonpath='{.items[*].message}')" \
      "target 50%" "GPU: the Scaled Events name the GPU utilization"
  fi
  log "$mode: scale-out: 5 ready ${t_out}s after the load began (queue peak $peak); scale-in: 1 ready ${t_in}s after the load fell; desired $changes"
  echo "TIMING 92-autoscaling-loop $mode: $total requests, $failed failed; 1->5 ready in ${t_out}s at 16/s (queue peak $peak), 5->1 in ${t_in}s at 0.67/s (window 20s); desired $changes" \
    >>"$E2E_WORK/timings.txt"
  k -n "$ns" delete ms "$name" --wait=false >/dev/null
  wait_output 60 "$mode: its pods are gone" 0 model_pods
}

loop Controller
loop HPA
loop GPU
