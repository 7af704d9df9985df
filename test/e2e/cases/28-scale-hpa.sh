# A HorizontalPodAutoscaler (autoscaling/v2) resolves a ModelService as its
# scale target: kube-controller-manager's HPA controller reads /scale (the
# condition AbleToScale is True with reason SucceededGetScale, and
# status.currentReplicas is the Scale's status.replicas). The metric is not
# served (no external metrics API here), which the HPA reports separately.
# Needs kube-controller-manager in the local cluster: skipped (77) without it.
# timeout: 120
# logs: controller
if [[ -z "${E2E_KCM_PID:-}" ]] || ! kill -0 "$E2E_KCM_PID" 2>/dev/null; then
  log "skip: no kube-controller-manager in this cluster (its HPA controller is what reads /scale)"
  exit 77
fi
ns=e2e-scale-hpa
new_ns "$ns"
ms_yaml target 'model: m' 'replicas: 2' | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $ns/target created" exists "$ns" deployment target
hpa_yaml "$ns" target | k -n "$ns" apply -f - >/dev/null
able_to_scale() {
  [[ "$(k -n "$ns" get hpa target -o 'jsonpath={.status.conditions[?(@.type=="AbleToScale")].reason}')" == SucceededGetScale ]]
}
wait_for 90 "the HPA read the ModelService's scale subresource (AbleToScale: SucceededGetScale)" able_to_scale
hpa="$(k -n "$ns" get hpa target -o json)"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "AbleToScale") | .status' <<<"$hpa")" True "AbleToScale"
current_is_scale_status() {
  [[ "$(k -n "$ns" get hpa target -o 'jsonpath={.status.currentReplicas}')" == \
     "$(k -n "$ns" get ms target --subresource=scale -o 'jsonpath={.status.replicas}')" ]]
}
wait_for 60 "the HPA's currentReplicas is the Scale's status.replicas" current_is_scale_status
log "HPA conditions: $(jq -c '[.status.conditions[] | {type, status, reason}]' <<<"$hpa")"
k -n "$ns" delete hpa target --wait=false >/dev/null
k -n "$ns" delete ms target --wait=false >/dev/null
