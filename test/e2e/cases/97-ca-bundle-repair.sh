# A `kubectl apply` that blanks caBundle (manifests or a GitOps sync that
# still carry `caBundle: ""`) is repaired by the controller Pod within 5 s
# (certificate mode self: the leader watches both webhook configurations,
# with the RBAC the chart gives it), and the next ModelService write passes
# the webhook. The bundle written back is the Secret's ca.crt, the same CA.
# timeout: 90
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-cabundle
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
operator_secret ca.crt >"$tmp/ca.crt"
[[ -s "$tmp/ca.crt" ]] || fail "no ca.crt in Secret $OPERATOR_SECRET"
leader="$(leader_pod)" || fail "no leader among the operator Pods"
injections() {
  pod_get "$leader" 8082 /metrics | awk '$1 ~ /^modelservice_webhook_ca_bundle_injections_total\{/ { s += $2 } END { print s + 0 }'
}
before="$(injections)"

# Both configurations as they are, with every caBundle "" (what old manifests carry).
for w in validatingwebhookconfiguration/modelservice-validating mutatingwebhookconfiguration/modelservice-mutating; do
  k get "$w" -o json | jq '{apiVersion, kind, metadata: {name: .metadata.name, labels: .metadata.labels}, webhooks: [.webhooks[] | .clientConfig.caBundle = ""]}'
done | jq -s '{apiVersion: "v1", kind: "List", items: .}' >"$tmp/blank.json"
assert_eq "$(jq '[.items[].webhooks[].clientConfig.caBundle] | unique' -c "$tmp/blank.json")" '[""]' "the caBundles of the applied configurations"
k apply -f "$tmp/blank.json" >"$tmp/apply.out" 2>&1 || fail "kubectl apply of the blanked configurations: $(cat "$tmp/apply.out")"
t0="$(now)"
assert_eq "$(grep -c 'configured$' "$tmp/apply.out")" 2 "configurations written by kubectl apply"
repaired() {
  local w
  for w in "validatingwebhookconfiguration modelservice-validating" "mutatingwebhookconfiguration modelservice-mutating"; do
    # shellcheck disable=SC2086
    [[ "$(ca_bundle $w)" == "$(cat "$tmp/ca.crt")" ]] || return 1
  done
}
wait_for 5 "both caBundles repaired" repaired
took="$(elapsed "$t0")"
assert_le "$took" 5 "seconds from kubectl apply to both caBundles repaired"
echo "TIMING real-node caBundle repaired ${took}s after kubectl apply" >>"$E2E_WORK/timings.txt"
assert_eq "$(( $(injections) - before ))" 2 "caBundle writes by the leader $leader (one per configuration)"
out="$(ms_yaml after-repair 'model: m' | k -n "$ns" create -f - -o 'jsonpath={.spec.port}' 2>&1)" || fail "a ModelService after the repair: $out"
assert_eq "$out" 8080 "a ModelService after the repair, defaulted by the webhook"
