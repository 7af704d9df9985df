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
# SKIPPED (exit 77) until the controller can see pods: it needs list/watch on
# pods (or events) in its ClusterRole (manifests/rbac), which is how this case
# knows the controller has the feature. That is C++ work of its own (issue 10).
# timeout: 150
# logs: controller scheduler
need_full_cluster
sa=system:serviceaccount:modelservice-system:modelservice-controller
if [[ "$(k auth can-i watch pods --all-namespaces --as="$sa" 2>/dev/null)" != yes &&
      "$(k auth can-i list events --all-namespaces --as="$sa" 2>/dev/null)" != yes ]]; then
  echo "SKIP: the controller does not report unschedulable pods yet (its ClusterRole has no list/watch on pods or events)" >&2
  exit 77
fi
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
st="$(k -n "$ns" get ms "$name" -o json)"
msg="$(jq -r '.status.conditions[] | select(.type == "Degraded") | .message' <<<"$st")"
log "Degraded message: $msg"
assert_contains "$msg" "Insufficient nvidia.com/gpu" "Degraded message"
assert_eq "$(jq -r .status.phase <<<"$st")" Degraded "phase"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$st")" False "Ready condition"
assert_eq "$(awk '{print $4, $5}' <<<"$(ms_row "$ns" "$name")")" "2 Degraded" "kubectl get ms READY PHASE"
event_seen() {
  k -n "$ns" get events.events.k8s.io -o json | jq -e --arg n "$name" '[.items[] | select(.regarding.kind == "ModelService" and .regarding.name == $n
    and .type == "Warning" and .reason == "Unschedulable" and ((.note // "") | contains("Insufficient nvidia.com/gpu")))] | length > 0' >/dev/null ||
  k -n "$ns" get events -o json | jq -e --arg n "$name" '[.items[] | select(.involvedObject.kind == "ModelService" and .involvedObject.name == $n
    and .type == "Warning" and .reason == "Unschedulable" and ((.message // "") | contains("Insufficient nvidia.com/gpu")))] | length > 0' >/dev/null
}
wait_for 20 "a Warning Event Unschedulable on the ModelService" event_seen

# No hot loop while the pod stays Pending.
sleep 3
mark="$(audit_mark)"
sleep 10
writes="$(controller_writes_since "$mark")"
n="$(grep -c . <<<"$writes" || true)"
(( n == 0 )) || { sort <<<"$writes" | uniq -c | sort -rn | head -n 20 >&2; }
assert_eq "$n" 0 "controller writes during 10 s with a pod stuck Pending"

add_node "$new_node" --gpus 4
wait_ms_ready "$ns" 60 "$name"
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .status' <<<"$st")" False "Degraded after the fleet grew"
assert_eq "$(ms_row "$ns" "$name")" "llm llama 3 3 Ready" "kubectl get ms after the fleet grew"
k -n "$ns" delete ms "$name" --wait=false >/dev/null
wait_output 60 "the GPU pods are gone" 0 gpu_pods
k delete node "$new_node" >/dev/null
