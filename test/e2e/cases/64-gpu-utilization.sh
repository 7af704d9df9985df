# GPU utilization (issue 21 section 4): a fake DCGM exporter
# (test/e2e/dcgm-exporter) serves DCGM_FI_DEV_GPU_UTIL per pod, scraped by
# the suite's Prometheus with its pod and namespace labels; the controller
# reads the mean of the ModelService's pods through its poller
# (--prometheus-gpu-query's default, the pods joined by name).
#   no series yet            -> status.gpuUtilizationMessage says why; with
#                               targetGPUUtilization, Degraded/MetricsUnavailable
#                               and the replicas kept (2);
#   U = 90 % on 2 replicas, target 60 % -> 3 replicas (ceil(2 x 90 / 60)),
#                               status.gpuUtilization 90, the wide GPU% column
#                               90, a Scaled Event naming the GPU utilization;
#                               the third pod, not reporting yet, counts for
#                               nothing: still 3 (not ceil(3 x 1.5) = 5);
#   the third pod at 0 %     -> status.gpuUtilization 60, still 3 replicas.
# timeout: 180
# logs: controller prometheus dcgm-exporter
need_full_cluster
ns=e2e-gpu-util
name=chat
new_ns "$ns"
set_queue "$ns" "$name" 0
ms_yaml "$name" 'model: gpt2' 'gpus: 1' 'replicas: 2' \
  'autoscaling: {minReplicas: 1, maxReplicas: 10, targetQueueLength: 5, targetGPUUtilization: 60}' \
  | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $name" exists "$ns" deployment "$name"
running_pods() { k -n "$ns" get pods -l "app.kubernetes.io/instance=$name" --field-selector=status.phase=Running -o 'jsonpath={.items[*].metadata.name}'; }
two_running() { [[ "$(wc -w <<<"$(running_pods)")" == 2 ]]; }
wait_for 60 "2 pods Running" two_running
read -r -a pods <<<"$(running_pods)"

status_field() { k -n "$ns" get ms "$name" -o "jsonpath={.status.$1}"; }
has_message() { [[ "$(status_field gpuUtilizationMessage)" == *"$1"* ]]; }
wait_for 30 "status.gpuUtilizationMessage says there is no series" has_message "no series"
log "message: $(status_field gpuUtilizationMessage)"
assert_eq "$(k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .reason')" \
  MetricsUnavailable "the Degraded reason while the GPU utilization cannot be read"
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 2 "replicas while the GPU utilization cannot be read"

t0="$(now)"
for p in "${pods[@]}"; do set_gpu_util "$ns" "$p" 90; done
wait_for 30 "U=90% on 2 replicas, target 60%: Deployment scaled to 3" deploy_replicas_is "$ns" "$name" 3
log "scaled to 3 $(elapsed "$t0")s after U=90"
gpu_is() { [[ "$(status_field gpuUtilization)" == "$1" ]]; }
wait_for 15 "status.gpuUtilization 90" gpu_is 90
log "status: gpuUtilization $(status_field gpuUtilization), observedAt $(status_field gpuUtilizationObservedAt)"
[[ -n "$(status_field gpuUtilizationObservedAt)" ]] || fail "no status.gpuUtilizationObservedAt"
[[ -z "$(status_field gpuUtilizationMessage)" ]] || fail "a gpuUtilizationMessage while it is read: $(status_field gpuUtilizationMessage)"
wide="$(k -n "$ns" get ms "$name" -o wide)"
log "kubectl get ms -o wide:"$'\n'"$wide"
assert_contains "$(head -1 <<<"$wide")" "GPU%" "the wide columns"
# The column's text starts under its header (an empty VERSION leaves no field).
assert_eq "$(awk 'NR == 1 { i = index($0, "GPU%") } NR == 2 { split(substr($0, i), a, " "); print a[1] }' <<<"$wide")" 90 \
  "the GPU% column"
events="$(k -n "$ns" get events --field-selector "involvedObject.name=$name,reason=Scaled" -o jsonpath='{.items[*].message}')"
assert_contains "$events" "GPU utilization 90%, target 60%" "the Scaled Event"

# The third pod does not report (yet): the two that do still say 3.
sleep 6  # three autoscale intervals
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 3 "replicas 6 s later (the third pod counts for nothing)"
degraded="$(k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .status')"
assert_eq "$degraded" False "Degraded once both metrics are read"

# The third pod idle: the mean is 60, the target: 3 stays.
three_running() { [[ "$(wc -w <<<"$(running_pods)")" == 3 ]]; }
wait_for 60 "3 pods Running" three_running
for p in $(running_pods); do
  [[ " ${pods[*]} " == *" $p "* ]] || set_gpu_util "$ns" "$p" 0
done
wait_for 15 "status.gpuUtilization 60 (90, 90, 0)" gpu_is 60
sleep 4
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 3 "replicas at the target"
k -n "$ns" delete ms "$name" --wait=false >/dev/null
