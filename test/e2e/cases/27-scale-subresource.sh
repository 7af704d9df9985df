# The scale subresource (issue 11): `kubectl scale` works and the Deployment
# follows; a scale to 0 or 101 is refused (through the API server by the
# CRD's schema, which runs before validating admission, in the API server's
# wording; a Scale review posted to the webhook gets the webhook's wording);
# `kubectl get --subresource=scale` shows the pods' selector (status.selector,
# written by the controller); with spec.autoscaling a manual scale outside
# [minReplicas, maxReplicas] is denied with the reason, and one inside is
# allowed with a warning (manifests/webhook/scale-policy.yaml); an
# autoscaling/v2 HorizontalPodAutoscaler on the ModelService is accepted.
# timeout: 150
# logs: webhook controller
ns=e2e-scale-sub  # not e2e-scale: 30-scale-200 counts every object there
new_ns "$ns"
ms_yaml scaled 'model: m' 'replicas: 1' | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $ns/scaled created" exists "$ns" deployment scaled

# ---- kubectl scale to 3: spec.replicas, then the Deployment.
out="$(k -n "$ns" scale ms scaled --replicas=3 2>&1)" || fail "kubectl scale --replicas=3 failed: $out"
assert_eq "$out" "modelservice.modelops.dev/scaled scaled" "kubectl scale output"
assert_eq "$(jp ms/scaled '{.spec.replicas}' -n "$ns")" 3 "spec.replicas after kubectl scale"
wait_for 30 "the Deployment follows to 3 replicas" deploy_replicas_is "$ns" scaled 3

# ---- /scale shows the selector the controller writes to status.selector.
selector='app.kubernetes.io/instance=scaled,app.kubernetes.io/name=modelservice'
scale_selector_is() { [[ "$(k -n "$ns" get ms scaled --subresource=scale -o 'jsonpath={.status.selector}')" == "$1" ]]; }
wait_for 30 "kubectl get --subresource=scale shows the selector" scale_selector_is "$selector"
scale="$(k -n "$ns" get ms scaled --subresource=scale -o json)"
assert_eq "$(jq -r '.apiVersion + " " + .kind' <<<"$scale")" "autoscaling/v1 Scale" "the subresource's kind"
assert_eq "$(jq -r .spec.replicas <<<"$scale")" 3 "Scale spec.replicas"
assert_eq "$(jp ms/scaled '{.status.selector}' -n "$ns")" "$selector" "status.selector"
# The selector selects the Deployment's pods.
assert_eq "$(k -n "$ns" get deployment scaled -o json | jq -r '.spec.selector.matchLabels | to_entries | map(.key + "=" + .value) | join(",")')" \
  "$selector" "the Deployment's selector"

# ---- 0 and 101: refused, the object unchanged.
for r in 0 101; do
  if out="$(k -n "$ns" scale ms scaled --replicas=$r 2>&1)"; then fail "kubectl scale --replicas=$r accepted: $out"; fi
  log "kubectl scale ms scaled --replicas=$r: $out"
  if (( r == 0 )); then want='greater than or equal to 1'; else want='less than or equal to 100'; fi
  assert_contains "$out" "The ModelService \"scaled\" is invalid: spec.replicas: Invalid value: $r: spec.replicas in body should be $want" \
    "kubectl scale --replicas=$r (CRD schema)"
done
assert_eq "$(jp ms/scaled '{.spec.replicas}' -n "$ns")" 3 "spec.replicas after refused scales"

# ---- The webhook's own answer to a Scale review (as the API server sends it
# for modelservices/scale), posted directly: the same rule, its wording.
scale_review() {  # scale_review REPLICAS: an AdmissionReview of the Scale, from the stored Scale (oldObject)
  local obj old; obj="$(jq -c --argjson r "$1" '.spec = (if $r == 0 then {} else {replicas: $r} end) | del(.metadata.managedFields)' <<<"$scale")"
  old="$(jq -c 'del(.metadata.managedFields)' <<<"$scale")"
  jq -cn --argjson obj "$obj" --argjson old "$old" --arg ns "$ns" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "e2e-scale", kind: {group: "autoscaling", version: "v1", kind: "Scale"},
              resource: {group: "modelops.dev", version: "v1", resource: "modelservices"}, subResource: "scale",
              requestKind: {group: "autoscaling", version: "v1", kind: "Scale"},
              requestResource: {group: "modelops.dev", version: "v1", resource: "modelservices"}, requestSubResource: "scale",
              name: "scaled", namespace: $ns, operation: "UPDATE", userInfo: {username: "e2e"},
              object: $obj, oldObject: $old, dryRun: false}}'
}
post_validate() {
  webhook_curl -sS --max-time 5 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' \
    --data-binary "$1" "https://127.0.0.1:$WEBHOOK_PORT/validate"
}
for r in 0 101; do
  resp="$(post_validate "$(scale_review $r)")" || fail "POST /validate failed"
  assert_eq "$(jq -r .response.allowed <<<"$resp")" false "/validate Scale $r: allowed"
  assert_eq "$(jq -r .response.status.code <<<"$resp")" 422 "/validate Scale $r: code"
  assert_eq "$(jq -r .response.status.message <<<"$resp")" "spec.replicas: Invalid value: $r: must be between 1 and 100" \
    "/validate Scale $r: message"
done
assert_eq "$(post_validate "$(scale_review 4)" | jq -cS .response)" '{"allowed":true,"uid":"e2e-scale"}' "/validate Scale 4"

# ---- The policies' expressions type-check against the ModelService's schema.
for p in modelservice-scale-bounds modelservice-scale-autoscaled; do
  checked() { [[ -n "$(k get validatingadmissionpolicy "$1" -o 'jsonpath={.status.observedGeneration}')" ]]; }
  wait_for 30 "ValidatingAdmissionPolicy $p type-checked" checked "$p"
  assert_eq "$(k get validatingadmissionpolicy "$p" -o 'jsonpath={.status.typeChecking.expressionWarnings}')" "" \
    "$p: type-checking warnings"
done

# ---- With spec.autoscaling: outside [2, 4] denied, inside allowed with a warning.
ms_yaml auto 'model: m' 'autoscaling: {minReplicas: 2, maxReplicas: 4, targetQueueLength: 5}' | k -n "$ns" apply -f - >/dev/null
assert_eq "$(jp ms/auto '{.spec.replicas}' -n "$ns")" 2 "autoscaled replicas defaulted to minReplicas"
# The API server loads policies and their parameters asynchronously: wait
# until the bound is enforced.
denied_above() {
  local o; o="$(k -n "$ns" scale ms auto --replicas=9 2>&1)" && return 1
  [[ "$o" == *"must be between minReplicas and maxReplicas"* ]]
}
wait_for 60 "the scale bounds policy is in force" denied_above
out="$(k -n "$ns" scale ms auto --replicas=9 2>&1 || true)"
log "kubectl scale ms auto --replicas=9: $out"
assert_contains "$out" "ValidatingAdmissionPolicy 'modelservice-scale-bounds' with binding 'modelservice-scale-bounds' denied request" "above the range: who"
assert_contains "$out" "spec.replicas: Invalid value: 9: must be between minReplicas and maxReplicas [2, 4] while spec.autoscaling is set" "above the range: why"
out="$(k -n "$ns" scale ms auto --replicas=1 2>&1 || true)"
assert_contains "$out" "spec.replicas: Invalid value: 1: must be between minReplicas and maxReplicas [2, 4]" "below the range"
assert_eq "$(jp ms/auto '{.spec.replicas}' -n "$ns")" 2 "spec.replicas after denied scales"
out="$(k -n "$ns" scale ms auto --replicas=3 2>&1)" || fail "scale inside the range refused: $out"
log "kubectl scale ms auto --replicas=3: $out"
assert_contains "$out" "Warning: " "inside the range: a warning"
assert_contains "$out" "spec.replicas: scaled to 3 by hand, but spec.autoscaling is set: the autoscaler decides the replica count and will override it" "inside the range: why"
assert_contains "$out" "modelservice.modelops.dev/auto scaled" "inside the range: allowed"
assert_eq "$(jp ms/auto '{.spec.replicas}' -n "$ns")" 3 "spec.replicas after the allowed scale"
# No autoscaling, no warning.
out="$(k -n "$ns" scale ms scaled --replicas=2 2>&1)" || fail "scale of scaled to 2 failed: $out"
assert_not_contains "$out" "Warning" "no warning without spec.autoscaling"

# ---- An autoscaling/v2 HorizontalPodAutoscaler on the ModelService is accepted.
out="$(hpa_yaml "$ns" scaled | k -n "$ns" apply -f - 2>&1)" || fail "HPA refused: $out"
assert_contains "$out" "horizontalpodautoscaler.autoscaling/scaled created" "HPA created"
k -n "$ns" delete hpa scaled --wait=false >/dev/null
k -n "$ns" delete ms scaled auto --wait=false >/dev/null
