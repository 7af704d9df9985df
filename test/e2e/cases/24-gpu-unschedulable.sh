# More GPUs asked than the fleet has: 3 replicas x 2 GPUs, with one 4-GPU
# node in the fleet. The real scheduler places two pods on kwok-gpu-1 (Ready)
# and leaves the third Pending: PodScheduled=False, reason Unschedulable, its
# message (and a FailedScheduling Event) says "Insufficient nvidia.com/gpu".
# `kubectl get ms` shows READY 2 and not Ready. When the fleet grows (a second
# 4-GPU node through cluster.sh add-node) the scheduler places the pending pod
# there and the ModelService becomes Ready with READY 3.
# (What the controller itself reports meanwhile is 25-unschedulable-status.)
# timeout: 150
# logs: controller scheduler
need_full_cluster
ns=e2e-gpu
name=llm
new_node=kwok-gpu-e2e-24
new_ns "$ns"
trap 'k delete node "$new_node" --ignore-not-found >/dev/null 2>&1 || true' EXIT
# GPU pods of earlier cases are gone (they delete their ModelServices).
gpu_pods() {
  k get pods -A -o json | jq '[.items[] | select(any(.spec.containers[]; .resources.limits["nvidia.com/gpu"] != null))] | length'
}
wait_output 60 "no GPU pods left from earlier cases" 0 gpu_pods
assert_eq "$(k get nodes -o json | jq -r '[.items[] | select(.status.allocatable["nvidia.com/gpu"] != null) | "\(.metadata.name)=\(.status.allocatable["nvidia.com/gpu"])"] | join(",")')" \
  "kwok-gpu-1=4" "GPU nodes in the fleet"

ms_yaml "$name" 'model: llama' 'image: registry.local/serve:1.4' 'replicas: 3' 'gpus: 2' | k -n "$ns" apply -f - >/dev/null

pending() {  # pending: the names of the Pending pods that the scheduler could not place
  pods_of "$ns" "$name" '{range .items[?(@.status.phase=="Pending")]}{.metadata.name} {.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}' \
    | awk '$2 == "Unschedulable" { print $1 }'
}
running_ready() {
  pods_of "$ns" "$name" '{range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^Running/True$'
}
wait_output 60 "2 pods Running and Ready" 2 running_ready
wait_output 30 "1 pod Pending, Unschedulable" 1 eval 'pending | wc -l'
pod="$(pending)"
p="$(k -n "$ns" get pod "$pod" -o json)"
assert_eq "$(jq -r '.spec.nodeName // "none"' <<<"$p")" none "nodeName of the pending pod"
cond="$(jq -c '.status.conditions[] | select(.type == "PodScheduled")' <<<"$p")"
assert_eq "$(jq -r .status <<<"$cond")" False "PodScheduled status"
assert_eq "$(jq -r .reason <<<"$cond")" Unschedulable "PodScheduled reason"
msg="$(jq -r .message <<<"$cond")"
log "the scheduler says: $msg"
assert_contains "$msg" "Insufficient nvidia.com/gpu" "PodScheduled message"
assert_contains "$msg" "0/3 nodes are available" "PodScheduled message"
wait_for 20 "a FailedScheduling Event for $pod" bash -c \
  "'$KUBECTL' -n '$ns' get events --field-selector involvedObject.name=$pod,reason=FailedScheduling -o json | jq -e '[.items[] | select(.message | contains(\"Insufficient nvidia.com/gpu\"))] | length > 0'"
assert_eq "$(pods_of "$ns" "$name" '{range .items[?(@.status.phase=="Running")]}{.spec.nodeName} {end}')" "kwok-gpu-1 kwok-gpu-1 " "nodes of the running pods"
wait_output 20 "ModelService reports READY 2" 2 jp "ms/$name" '{.status.readyReplicas}' -n "$ns"
row="$(ms_row "$ns" "$name")"
assert_eq "$(awk '{print $1, $2, $3}' <<<"$row")" "llm llama 2/3" "kubectl get ms (NAME MODEL READY)"
[[ "$(awk '{print $5}' <<<"$row")" != Ready ]] || fail "PHASE Ready with a pod that cannot be scheduled: $row"
log "ok: kubectl get ms while a pod is unschedulable: $row"

# The fleet grows: the pending pod is placed on the new node.
add_node "$new_node" --gpus 4
wait_output 60 "the pending pod scheduled on $new_node and Ready" "$new_node Running True" \
  k -n "$ns" get pod "$pod" -o 'jsonpath={.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}'
wait_ms_ready "$ns" 30 "$name"
assert_eq "$(ms_row "$ns" "$name")" "llm llama 3/3 Ready" "kubectl get ms after the fleet grew"

k -n "$ns" delete ms "$name" --wait=false >/dev/null
wait_output 60 "the GPU pods are gone" 0 gpu_pods
k delete node "$new_node" >/dev/null
