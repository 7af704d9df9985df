# Every manifest passes `kubectl apply --dry-run=server` against the API
# server: the full install (`kubectl kustomize manifests/`), the local overlay,
# and the valid samples. (manifests/monitoring/ needs the Prometheus
# Operator's CRDs, which this cluster does not have: not covered.)
# timeout: 120
# logs: apiserver
ns=e2e-manifests
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

for kz in manifests manifests/overlays/local manifests/crd manifests/rbac manifests/webhook manifests/networkpolicy; do
  k kustomize "$E2E_ROOT/$kz" >"$tmp/out.yaml" || fail "kubectl kustomize $kz failed"
  n="$(grep -c '^kind: ' "$tmp/out.yaml")"
  out="$(k apply --dry-run=server -f "$tmp/out.yaml" 2>&1)" || fail "kubectl apply --dry-run=server ($kz) failed:\n$out"
  ok="$(grep -c '(server dry run)$' <<<"$out")"
  assert_eq "$ok" "$n" "$kz: objects accepted by the server dry run"
done
# The full install has what the design says.
k kustomize "$E2E_ROOT/manifests" >"$tmp/all.yaml"
for kind in Namespace CustomResourceDefinition ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding \
            Deployment Service PodDisruptionBudget MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
  grep -q "^kind: $kind$" "$tmp/all.yaml" || fail "kubectl kustomize manifests/ has no $kind"
done
log "ok: manifests/ contains every expected kind"

for f in "$E2E_ROOT"/manifests/samples/*.yaml "$E2E_ROOT"/manifests/samples/runtimes/*.yaml; do
  out="$(k -n "$ns" apply --dry-run=server -f "$f" 2>&1)" || fail "dry-run of $f failed: $out"
  assert_contains "$out" "(server dry run)" "$(basename "$f")"
done
# The dry runs created nothing.
assert_eq "$(k -n "$ns" get ms -o name | wc -l)" 0 "ModelServices in $ns after dry runs"
