# What the CONTROLLER reports when pods cannot be scheduled (design.md §3:
# "the status says so (condition reason and the scheduler's message, an
# Event), not just Progressing"). Same set-up as 24-gpu-unschedulable:
# 3 replicas x 2 GPUs on a fleet with one 4-GPU node, one pod Pending.
# Expected from the controller:
#   - condition Degraded: status "True", reason "Unschedulable", message
#     naming how many pods cannot be placed and the scheduler's own message,
#     e.g. "1/3 pods cannot be scheduled: 0/3 nodes are available: 3
#     Insufficient nvidia.com/gpu. ..." (contains "Insufficient nvidia.com/gpu");
#   - phase Degraded (what `kubectl get ms` shows), Ready False;
#   - a Warning Event on the ModelService, reason "Unschedulable", whose
#     message contains "Insufficient nvidia.com/gpu";
#   - no hot loop: while nothing changes (pod still Pending) the controller
#     makes zero writes over 10 s (audit log, Leases excluded);
#   - once the fleet grows (a second 4-GPU node), Degraded False and phase
#     Ready, READY 3.
# The controller learns this from its pod informer (controller/modelservice/
# pods.h). The suite's controller has the manifests' ClusterRole (through its
# group, see controller_kubeconfig); the case also checks that the manifests
# grant the ServiceAccount itself what that informer needs (list and watch on
# pods, cluster-wide).
# timeout: 150
# logs: controller scheduler
need_full_cluster
sa=system:serviceaccount:modelservice-system:modelservice-controller
for verb in list watch; do
  assert_eq "$(k auth can-i "$verb" pods --all-namespaces --as="$sa" 2>/dev/null)" yes \
    "kubectl auth can-i $verb pods as the controller's ServiceAccount (manifests/rbac)"
done
ns=e2e-gpu-status
name=llm
new_node=kwok-gpu-e2e-25
new_ns "$ns"
trap 'k delete node "$new_node" --ignore-not-found >/dev/null 2>&1 || true' EXIT
gpu_pods() {
  k get pods -A -o json | jq '[.items[] | select(any(.spec.containers[]; .resources.limits["nvidia.com/gpu"] != null))] | length'
}
wait_output 60 "no GPU pods left from earlier cases" 0 gpu_pods
ms_yaml "$name" 'model: llama' 'image: registry.local/serve:1.4' 'replicas: 3' 'gpus: 2' | k -n "$ns" apply -f - >/dev/null

degraded_unschedulable() {
  local c
  c="$(k -n "$ns" get ms "$name" -o json | jq -c '.status.conditions[]? | select(.type == "Degraded")')"
  [[ "$(jq -r .status <<<"$c")" == True && "$(jq -r .reason <<<"$c")" == Unschedulable ]]
}
wait_for 60 "Degraded True, reason Unschedulable" degraded_unschedulable
ready_phase() { awk '{print $3, $4}' <<<"$(ms_row "$ns" "$name")"; }
wait_output 30 "kubectl get ms: READY 2/3, PHASE Degraded" "2/3 Degraded" ready_phase
st="$(k -n "$ns" get ms "$name" -o json)"
msg="$(jq -r '.status.conditions[] | select(.type == "Degraded") | .message' <<<"$st")"
log "Degraded message: $msg"
assert_contains "$msg" "Insufficient nvidia.com/gpu" "Degraded message"
# The scheduler's own words, from the pending pod's PodScheduled condition.
pending="$(pods_of "$ns" "$name" '{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\t"}{.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}{end}' \
  | awk -F'\t' '$1 == "Unschedulable" { print $2 }')"
assert_eq "$(grep -c . <<<"$pending")" 1 "pods with PodScheduled=False/Unschedulable"
assert_eq "$msg" "1/3 pods cannot be scheduled: $pending" "Degraded message"
assert_eq "$(jq -r .status.phase <<<"$st")" Degraded "phase"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$st")" False "Ready condition"
# kstatus: GPUs no node offers stall the spec (status.md, "Health").
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Stalled") | .status + " " + .reason' <<<"$st")" "True Unschedulable" "Stalled condition"
health_verdict 09-unschedulable-gpus <<<"$st"
event_seen() {
  k -n "$ns" get events.events.k8s.io -o json | jq -e --arg n "$name" '[.items[] | select(.regarding.kind == "ModelService" and .regarding.name == $n
    and .type == "Warning" and .reason == "Unschedulable" and ((.note // "") | contains("Insufficient nvidia.com/gpu")))] | length > 0' >/dev/null ||
  k -n "$ns" get events -o json | jq -e --arg n "$name" '[.items[] | select(.involvedObject.kind == "ModelService" and .involvedObject.name == $n
    and .type == "Warning" and .reason == "Unschedulable" and ((.message // "") | contains("Insufficient nvidia.com/gpu")))] | length > 0' >/dev/null
}
wait_for 20 "a Warning Event Unschedulable on the ModelService" event_seen

# No hot loop while the pod stays Pending.
assert_no_controller_writes 10 "with a pod stuck Pending"
# One Warning: a single Event, not repeated (its count, when set, is 1).
assert_eq "$(warning_events "$ns" "$name" Unschedulable)" 1 "Unschedulable Warning Events on the ModelService (with their counts)"

add_node "$new_node" --gpus 4
wait_ms_ready "$ns" 60 "$name"
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .status' <<<"$st")" False "Degraded after the fleet grew"
assert_eq "$(ms_row "$ns" "$name")" "llm llama 3/3 Ready" "kubectl get ms after the fleet grew"
k -n "$ns" delete ms "$name" --wait=false >/dev/null
wait_output 60 "the GPU pods are gone" 0 gpu_pods
k delete node "$new_node" >/dev/null
