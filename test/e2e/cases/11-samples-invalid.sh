# Every invalid sample in manifests/samples/invalid/ is rejected by
# `kubectl apply` with the exact message: the six single-field violations by
# the CRD's OpenAPI schema (API server wording), the three cross-field rules,
# the six pod-field rules and the GPU target's rule by the validating webhook (design.md wording,
# `admission webhook "..." denied the request` prefix); nothing is created.
# The same seventeen files posted as
# AdmissionReviews straight to the webhook's /validate give the `# expect:`
# text of each file, 422 Invalid, and echo the uid.
# timeout: 120
# logs: webhook
ns=e2e-invalid
new_ns "$ns"
dir="$E2E_ROOT/manifests/samples/invalid"
WEBHOOK_PREFIX='admission webhook "validate.modelservices.modelops.dev" denied the request: '

# file -> where it is rejected | exact message substring through the API server
declare -A via msg
via[replicas-0]=schema;   msg[replicas-0]='spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1'
via[replicas-101]=schema; msg[replicas-101]='spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100'
via[port-0]=schema;       msg[port-0]='spec.port: Invalid value: 0: spec.port in body should be greater than or equal to 1'
via[port-65536]=schema;   msg[port-65536]='spec.port: Invalid value: 65536: spec.port in body should be less than or equal to 65535'
via[no-model]=schema;     msg[no-model]='spec.model: Required value'
via[empty-model]=schema;  msg[empty-model]='spec.model: Invalid value: "": spec.model in body should be at least 1 chars long'
via[recreate-with-rolling-update]=webhook
via[min-greater-than-max]=webhook
via[surge-and-unavailable-zero]=webhook
via[gpu-in-resources]=webhook
via[request-above-limit]=webhook
via[env-model-name]=webhook
via[pod-label-selector]=webhook
via[affinity-no-terms]=webhook
via[spread-duplicate]=webhook
via[priority-class-upper]=webhook
via[gpu-target-without-gpus]=webhook

files=("$dir"/*.yaml)
assert_eq "${#files[@]}" 17 "number of invalid samples"
for f in "${files[@]}"; do
  base="$(basename "$f" .yaml)"
  [[ -n "${via[$base]:-}" ]] || fail "invalid sample $base is not in this case's table: add it"
  expect="$(sed -n 's/^# expect: //p' "$f" | head -n 1)"
  [[ -n "$expect" ]] || fail "$f has no '# expect:' line"
  name="$(k create --dry-run=client -f "$f" -o 'jsonpath={.metadata.name}')"
  if out="$(k -n "$ns" apply -f "$f" 2>&1)"; then
    fail "$base was accepted: $out"
  fi
  if [[ "${via[$base]}" == webhook ]]; then
    assert_contains "$out" "$WEBHOOK_PREFIX$expect" "$base (webhook)"
  else
    assert_contains "$out" "The ModelService \"$name\" is invalid: ${msg[$base]}" "$base (CRD schema)"
    assert_not_contains "$out" "admission webhook" "$base (rejected before the validating webhook)"
  fi
  gone "$ns" ms "$name" || fail "$name exists although it was rejected"

  # Directly to the webhook: the design.md wording for all seventeen.
  obj="$(k create --dry-run=client -f "$f" -o json | jq -c --arg ns "$ns" '.metadata.namespace = $ns')"
  uid="e2e-$(date +%s%N)"
  review="$(jq -cn --argjson obj "$obj" --arg uid "$uid" --arg ns "$ns" --arg name "$name" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: $uid, kind: {group: "modelops.dev", version: "v1", kind: "ModelService"},
              resource: {group: "modelops.dev", version: "v1", resource: "modelservices"},
              requestKind: {group: "modelops.dev", version: "v1", kind: "ModelService"},
              requestResource: {group: "modelops.dev", version: "v1", resource: "modelservices"},
              name: $name, namespace: $ns, operation: "CREATE",
              userInfo: {username: "e2e"}, object: $obj, oldObject: null, dryRun: false,
              options: {apiVersion: "meta.k8s.io/v1", kind: "CreateOptions"}}}')"
  resp="$(webhook_curl -sS --max-time 5 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' \
          --data-binary "$review" "https://127.0.0.1:$WEBHOOK_PORT/validate")" || fail "POST /validate failed"
  assert_eq "$(jq -r '.response.uid' <<<"$resp")" "$uid" "$base: response.uid"
  assert_eq "$(jq -r '.response.allowed' <<<"$resp")" false "$base: response.allowed"
  assert_eq "$(jq -r '.response.status.code' <<<"$resp")" 422 "$base: response.status.code"
  assert_eq "$(jq -r '.response.status.reason' <<<"$resp")" Invalid "$base: response.status.reason"
  assert_contains "$(jq -r '.response.status.message' <<<"$resp")" "$expect" "$base: /validate message"
done

# A denial lists every error, joined with "; " (two cross-field errors at once).
out="$(ms_yaml two-errors 'model: m' 'replicas: 3' 'strategy:' '  type: RollingUpdate' '  rollingUpdate: {maxSurge: 0, maxUnavailable: 0}' \
       'autoscaling: {minReplicas: 5, maxReplicas: 3, targetQueueLength: 5}' | k -n "$ns" apply -f - 2>&1 || true)"
assert_contains "$out" "$WEBHOOK_PREFIX" "two errors: denied by the webhook"
assert_contains "$out" 'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0' "two errors: surge/unavailable"
assert_contains "$out" 'spec.autoscaling.minReplicas: Invalid value: 5: must be less than or equal to maxReplicas (3)' "two errors: min/max"
assert_contains "$out" '; ' "two errors: joined with '; '"

# An update that breaks a cross-field rule is denied too, and the object is unchanged.
ms_yaml upd 'model: m' | k -n "$ns" apply -f - >/dev/null
out="$(k -n "$ns" patch ms upd --type=merge -p '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":{"maxSurge":1}}}}' 2>&1 || true)"
assert_contains "$out" "${WEBHOOK_PREFIX}spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy type is 'Recreate'" "update denied"
assert_eq "$(jp ms/upd '{.spec.strategy.type}' -n "$ns")" RollingUpdate "strategy after denied update"
k -n "$ns" delete ms upd --wait=false >/dev/null
