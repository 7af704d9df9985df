# Autoscaling mode HPA (issue 15 part 3): with spec.autoscaling.mode HPA the
# controller creates and owns an autoscaling/v2 HorizontalPodAutoscaler on
# the ModelService's scale subresource, and kube-controller-manager's HPA
# controller (sync period 2 s, cluster.sh) scales the ModelService from the
# real Prometheus through the suite's External metrics API server. The
# controller's flag --scale-down-stabilization 10s becomes the HPA's
# behavior.scaleDown.stabilizationWindowSeconds. With minReplicas 1,
# maxReplicas 10, targetQueueLength 5:
#   the HPA: owner, labels, target, metric, bounds, window as specified;
#   L=23 -> the HPA sets spec.replicas 5 through /scale (its own user in the
#   audit log), the Deployment follows, status.desiredReplicas 5, Ready;
#   steady state -> the controller writes nothing; a hand edit of the HPA
#   is reverted; a hand scale inside the bounds is warned about and the HPA
#   puts it back;
#   L=0 -> still 5 during the 10 s window, then 1;
#   a ModelService whose metric has no series -> Degraded with the HPA's
#   reason (FailedGetExternalMetric);
#   mode back to Controller -> the HPA is deleted and the controller scales;
#   mode HPA again -> the running replicas are handed over (spec.replicas
#   takes the Deployment's count), no pod dropped;
#   deleting the ModelService deletes its HPA.
# Needs kube-controller-manager (its HPA controller): skipped (77) without it.
# timeout: 240
# logs: controller controller-manager prometheus-adapter
if [[ -z "${E2E_KCM_PID:-}" ]] || ! kill -0 "$E2E_KCM_PID" 2>/dev/null; then
  log "SKIP: no kube-controller-manager in this cluster (its HPA controller is what scales)"
  exit 77
fi
ns=e2e-hpa-mode
name=chat
new_ns "$ns"
set_queue "$ns" "$name" 0
ms_yaml "$name" 'model: gpt2' 'autoscaling: {mode: HPA, minReplicas: 1, maxReplicas: 10, targetQueueLength: 5}' \
  | k -n "$ns" apply -f - >/dev/null
assert_eq "$(jp "ms/$name" '{.spec.autoscaling.mode} {.spec.replicas}' -n "$ns")" "HPA 1" "mode as given, replicas defaulted to minReplicas"
wait_for 30 "HorizontalPodAutoscaler $ns/$name created" exists "$ns" hpa "$name"
wait_for 30 "Deployment $ns/$name created" exists "$ns" deployment "$name"

# ---- The HPA as the controller made it.
hpa="$(k -n "$ns" get hpa "$name" -o json)"
uid="$(jp "ms/$name" '{.metadata.uid}' -n "$ns")"
assert_eq "$(jq -c --arg uid "$uid" '[.metadata.ownerReferences[] | select(.uid == $uid) | {apiVersion, kind, name, controller, blockOwnerDeletion}]' <<<"$hpa")" \
  "[{\"apiVersion\":\"modelops.dev/v1\",\"kind\":\"ModelService\",\"name\":\"$name\",\"controller\":true,\"blockOwnerDeletion\":true}]" \
  "the HPA's controller ownerReference"
assert_eq "$(jq -r '.metadata.labels["app.kubernetes.io/managed-by"] + " " + .metadata.labels["app.kubernetes.io/instance"]' <<<"$hpa")" \
  "modelservice-controller $name" "the HPA's labels"
assert_eq "$(jq -c .spec.scaleTargetRef <<<"$hpa")" "{\"apiVersion\":\"modelops.dev/v1\",\"kind\":\"ModelService\",\"name\":\"$name\"}" \
  "scaleTargetRef: the ModelService's scale subresource"
assert_eq "$(jq -c .spec.metrics <<<"$hpa")" \
  "[{\"external\":{\"metric\":{\"name\":\"modelservice_queue_length\",\"selector\":{\"matchLabels\":{\"modelservice\":\"$name\"}}},\"target\":{\"averageValue\":\"5\",\"type\":\"AverageValue\"}},\"type\":\"External\"}]" \
  "the External metric, selector and target"
assert_eq "$(jq -r '"\(.spec.minReplicas) \(.spec.maxReplicas) \(.spec.behavior.scaleDown.stabilizationWindowSeconds)"' <<<"$hpa")" \
  "1 10 10" "min, max and the scale-down window (--scale-down-stabilization 10s)"

hpa_condition() {  # hpa_condition NAME TYPE STATUS [REASON]
  local c
  c="$(k -n "$ns" get hpa "$1" -o json | jq -c --arg t "$2" '.status.conditions[]? | select(.type == $t)')"
  [[ "$(jq -r .status <<<"$c")" == "$3" ]] || return 1
  [[ -z "${4:-}" || "$(jq -r .reason <<<"$c")" == "$4" ]]
}
wait_for 60 "the HPA reads the metric (ScalingActive True, ValidMetricFound)" hpa_condition "$name" ScalingActive True ValidMetricFound

# ---- L=23: the HPA scales the ModelService to ceil(23/5) = 5 through /scale.
spec_replicas_is() { [[ "$(jp "ms/$2" '{.spec.replicas}' -n "$ns")" == "$1" ]]; }
status_desired_is() { [[ "$(jp "ms/$2" '{.status.desiredReplicas}' -n "$ns")" == "$1" ]]; }
mark="$(audit_mark)"
t0="$(now)"
set_queue "$ns" "$name" 23
wait_for 60 "L=23: spec.replicas 5, set by the HPA" spec_replicas_is 5 "$name"
log "the HPA scaled the ModelService $(elapsed "$t0")s after L=23"
wait_for 30 "the Deployment follows spec.replicas to 5" deploy_replicas_is "$ns" "$name" 5
wait_for 30 "status.desiredReplicas 5 (the HPA's status.desiredReplicas)" status_desired_is 5 "$name"
wait_ms_ready "$ns" 90 "$name"
log "kubectl get hpa:"$'\n'"$(k -n "$ns" get hpa "$name")"
hpa_writes="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" --arg n "$name" '
  select(.stage == "ResponseComplete" and .verb == "update" and .objectRef.resource == "modelservices"
         and .objectRef.subresource == "scale" and .objectRef.namespace == $ns and .objectRef.name == $n
         and .responseStatus.code == 200) | .user.username' | sort -u)"
assert_eq "$hpa_writes" "system:serviceaccount:kube-system:horizontal-pod-autoscaler" "who wrote /scale"
controller_scaled="$(controller_writes_since "$mark" | grep -E "^(update|patch) modelservices(/scale)? $ns/$name " || true)"
assert_eq "$controller_scaled" "" "the controller's own writes of the ModelService (none: it never sets replicas in mode HPA)"

# ---- Steady state: the HPA's status keeps changing, the controller writes nothing.
sleep 3
mark="$(audit_mark)"
sleep 8
assert_eq "$(controller_writes_since "$mark" | grep " $ns/" || true)" "" "controller writes in $ns during 8 s of steady state"

# ---- A hand edit of the HPA is reverted.
k -n "$ns" patch hpa "$name" --type merge -p '{"spec":{"maxReplicas":3}}' >/dev/null
hpa_max_is() { [[ "$(jp "hpa/$name" '{.spec.maxReplicas}' -n "$ns")" == "$1" ]]; }
wait_for 30 "the hand-edited maxReplicas is put back to 10" hpa_max_is 10

# ---- A hand scale inside the bounds: warned (scale-policy.yaml), then the HPA puts it back.
out="$(k -n "$ns" scale ms "$name" --replicas=7 2>&1)" || fail "kubectl scale inside the bounds refused: $out"
assert_contains "$out" "spec.replicas: scaled to 7 by hand, but spec.autoscaling is set: the autoscaler decides the replica count and will override it" \
  "the warning of a hand scale in mode HPA"
wait_for 60 "the HPA puts spec.replicas back to 5" spec_replicas_is 5 "$name"
out="$(k -n "$ns" scale ms "$name" --replicas=11 2>&1 || true)"
assert_contains "$out" "must be between minReplicas and maxReplicas [1, 10]" "a hand scale outside the bounds in mode HPA"

# ---- L=0: the HPA waits for its 10 s window, then scales down to 1.
t0="$(now)"
set_queue "$ns" "$name" 0
while awk -v e="$(elapsed "$t0")" 'BEGIN { exit !(e < 8) }'; do
  r="$(jp "ms/$name" '{.spec.replicas}' -n "$ns")"
  [[ "$r" == 5 ]] || fail "L=0: spec.replicas changed to $r only $(elapsed "$t0")s after the drop (window 10 s)"
  sleep 0.5
done
log "ok: still 5 replicas 8 s after L dropped to 0"
wait_for 40 "L=0: spec.replicas 1 after the window" spec_replicas_is 1 "$name"
dt="$(elapsed "$t0")"
log "scale-down happened ${dt}s after L dropped"
assert_gt "$dt" 8 "scale-down not before the 10 s window"
wait_for 30 "the Deployment follows to 1" deploy_replicas_is "$ns" "$name" 1

# ---- No series for a ModelService: the HPA cannot read the metric; its
# ModelService is Degraded with the HPA's reason.
ms_yaml quiet 'model: gpt2' 'autoscaling: {mode: HPA, maxReplicas: 4, targetQueueLength: 5}' | k -n "$ns" apply -f - >/dev/null
degraded_with() {  # degraded_with NAME REASON
  local c
  c="$(k -n "$ns" get ms "$1" -o json | jq -c '.status.conditions[]? | select(.type == "Degraded")')"
  [[ "$(jq -r .status <<<"$c")" == True && "$(jq -r .reason <<<"$c")" == "$2" ]]
}
wait_for 60 "quiet: Degraded with reason FailedGetExternalMetric" degraded_with quiet FailedGetExternalMetric
msg="$(k -n "$ns" get ms quiet -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .message')"
log "quiet's Degraded message: $msg"
assert_contains "$msg" "HorizontalPodAutoscaler quiet: ScalingActive False: " "the Degraded message names the HPA's condition"
assert_eq "$(jp ms/quiet '{.status.phase}' -n "$ns")" Degraded "quiet's phase"
set_queue "$ns" quiet 2
degraded_false() { [[ "$(jp "ms/$1" '{.status.conditions[?(@.type=="Degraded")].status}' -n "$ns")" == False ]]; }
wait_for 60 "quiet: Degraded False once the metric has a series" degraded_false quiet

# ---- Back to mode Controller: the HPA goes, the controller scales.
k -n "$ns" patch ms "$name" --type merge -p '{"spec":{"autoscaling":{"mode":"Controller"}}}' >/dev/null
wait_for 30 "mode Controller: the HPA is deleted" gone "$ns" hpa "$name"
set_queue "$ns" "$name" 12
wait_for 30 "mode Controller: L=12 -> the controller scales the Deployment to 3" deploy_replicas_is "$ns" "$name" 3
assert_eq "$(jp "ms/$name" '{.spec.replicas}' -n "$ns")" 1 "spec.replicas untouched by the controller's autoscaler"

# ---- Mode HPA again while the controller's autoscaler holds 3 pods (spec.replicas
# still 1): the controller hands the running count over (spec.replicas 3, one
# Event), the HPA starts from it, and no pod is dropped (every Deployment
# spec.replicas seen through a watch is 3).
w="$E2E_WORK/cases/63-deployments.watch"
api_watch "/apis/apps/v1/namespaces/$ns/deployments" "$w" "fieldSelector=metadata.name=$name"
mark="$(audit_mark)"
k -n "$ns" patch ms "$name" --type merge -p '{"spec":{"autoscaling":{"mode":"HPA"}}}' >/dev/null
wait_for 30 "mode HPA: spec.replicas 3, handed over by the controller" spec_replicas_is 3 "$name"
wait_for 30 "mode HPA: the HPA is created again" exists "$ns" hpa "$name"
wait_for 60 "the new HPA reads the metric (ScalingActive True)" hpa_condition "$name" ScalingActive True ValidMetricFound
sleep 4  # two more HPA syncs at L=12: ceil(12/5) = 3, nothing to change
# A drop to spec.replicas 1 would be a watch event; none at all is fine.
seen="$(jq -R -r 'fromjson? | select(.type != "BOOKMARK") | .object.spec.replicas' "$w" | sort -un | grep -v '^3$' || true)"
log "Deployment watch events across the switch: $(grep -c . "$w" || true)"
assert_eq "$seen" "" "a Deployment spec.replicas other than 3 in a watch event across the switch"
assert_eq "$(jp "deploy/$name" '{.spec.replicas}' -n "$ns")" 3 "the Deployment after the switch"
handover="$(controller_writes_since "$mark" | grep -E "^patch modelservices $ns/$name 200$" | grep -c . || true)"
assert_eq "$handover" 1 "the controller's patches of the ModelService (the one hand-over)"
handed_event() {
  k -n "$ns" get events -o json | jq -r --arg n "$name" '.items[] | select(.involvedObject.name == $n and .reason == "HandedOverToHPA") | .message'
}
wait_output 20 "the hand-over Event" \
  "Set spec.replicas from 1 to 3, the Deployment's current replicas, for the HorizontalPodAutoscaler to start from (spec.autoscaling.mode HPA)" \
  handed_event

# ---- Deleting a ModelService deletes its HPA.
wait_for 30 "quiet's HPA exists" exists "$ns" hpa quiet
delete_ms_wait "$ns" 60 quiet "$name"
wait_for 30 "quiet's HPA deleted with it" gone "$ns" hpa quiet
