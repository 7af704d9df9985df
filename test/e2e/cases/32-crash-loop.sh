# What the controller reports when a model server keeps exiting (the most
# common failure of a new model: a wrong name, a bad argument, out of
# memory). KWOK's pod-crash-loop stage (test/e2e/kwok/stages.yaml) shows
# every container of an image named *crash-loop* as a kubelet shows one that
# keeps exiting: not ready, restartCount 5, waiting CrashLoopBackOff, last
# state terminated with exit code 1 (Error). Expected from the controller,
# long before the rollout's progress deadline:
#   - condition Degraded True, reason CrashLoopBackOff, message
#     "2/2 pods are crash-looping: container model keeps exiting (last exit
#     code 1, Error)"; phase Degraded (`kubectl get ms`), Ready False;
#   - one Warning Event CrashLoopBackOff on the ModelService;
#   - zero controller writes over 10 s while nothing changes;
#   - with a working image, the rollout completes and Degraded turns False.
# timeout: 150
# logs: controller kwok
need_full_cluster
ns=e2e-crash
name=bad-model
new_ns "$ns"
ms_yaml "$name" 'model: no-such-model' 'image: registry.local/serve:crash-loop' 'replicas: 2' | k -n "$ns" apply -f - >/dev/null
degraded_reason() { k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[]? | select(.type == "Degraded" and .status == "True") | .reason'; }
wait_output 60 "Degraded True, reason CrashLoopBackOff" CrashLoopBackOff degraded_reason
# KWOK starts the two pods up to 1.5 s apart: "1/2 pods ..." may come first.
degraded_message() { k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[]? | select(.type == "Degraded") | .message'; }
wait_output 30 "the Degraded message, once both pods crash-loop" \
  "2/2 pods are crash-looping: container model keeps exiting (last exit code 1, Error)" degraded_message
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r .status.phase <<<"$st")" Degraded "phase"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$st")" False "Ready condition"
assert_eq "$(ms_row "$ns" "$name")" "$name no-such-model 0/2 Degraded" "kubectl get ms"
# The pods say so too (what the controller read).
waiting="$(pods_of "$ns" "$name" '{range .items[*]}{.status.containerStatuses[0].state.waiting.reason}{" "}{.status.containerStatuses[0].restartCount}{"\n"}{end}')"
assert_eq "$(sort -u <<<"$waiting")" "CrashLoopBackOff 5" "the pods' container state and restart count"
wait_output 20 "a Warning Event CrashLoopBackOff on the ModelService" 1 warning_events "$ns" "$name" CrashLoopBackOff
assert_no_controller_writes 10 "with crash-looping pods"
assert_eq "$(warning_events "$ns" "$name" CrashLoopBackOff)" 1 "CrashLoopBackOff Warning Events (with their counts)"

# A working image: the rollout replaces the crashing pods.
k -n "$ns" patch ms "$name" --type=merge -p '{"spec":{"image":"registry.local/serve:1.4"}}' >/dev/null
wait_ms_ready "$ns" 90 "$name"
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .status' <<<"$st")" False "Degraded after a working image"
assert_eq "$(ms_row "$ns" "$name")" "$name no-such-model 2/2 Ready" "kubectl get ms after a working image"
k -n "$ns" delete ms "$name" --wait=false >/dev/null
