# `kubectl apply -k manifests/monitoring/` against a cluster with the
# Prometheus Operator's CRDs (ServiceMonitor, PodMonitor, PrometheusRule; the CRD files of
# the Go module github.com/prometheus-operator/prometheus-operator, fetched
# and checked against its pinned go.sum hash by `go mod download`, cached in
# the Go module cache): the server accepts every object with strict field
# validation (no unknown or misplaced field, which a CRD would otherwise
# prune in silence), and stores what the files say (honorLabels on both
# endpoints, every rule, the dashboard ConfigMap with the sidecar label).
# The CRDs and objects are removed afterwards.
# timeout: 120
# logs: apiserver
po_module=github.com/prometheus-operator/prometheus-operator
po_version=v0.85.0
po_sum="h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s="
crds=(monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_prometheusrules.yaml)

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
if [[ ! -x "$GO" && ! -x "$(command -v "$GO" 2>/dev/null)" ]]; then
  echo "SKIP: no Go toolchain to fetch the Prometheus Operator's CRDs (GO=$GO)" >&2
  exit 77
fi
tmp="$(mktemp -d)"
cleanup() {
  if [[ -s "$tmp/monitoring.yaml" ]]; then k delete -f "$tmp/monitoring.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 || true; fi
  k delete crd servicemonitors.monitoring.coreos.com podmonitors.monitoring.coreos.com prometheusrules.monitoring.coreos.com --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Outside any go.mod: `go mod download` verifies the zip against the
# checksum database; the hash is pinned here as well.
info="$(cd "$tmp" && GOWORK=off GOFLAGS= "$GO" mod download -json "$po_module@$po_version")" \
  || fail "go mod download $po_module@$po_version: $info"
assert_eq "$(jq -r .Sum <<<"$info")" "$po_sum" "hash of $po_module@$po_version"
dir="$(jq -r .Dir <<<"$info")/example/prometheus-operator-crd"
for c in "${crds[@]}"; do
  [[ -s "$dir/$c" ]] || fail "no $c in $dir"
  k apply --server-side -f "$dir/$c" >/dev/null || fail "installing the CRD $c"
done
for r in servicemonitors podmonitors prometheusrules; do
  k wait --for condition=Established --timeout=60s "crd/$r.monitoring.coreos.com" >/dev/null
done
log "ok: CRDs of the Prometheus Operator $po_version established"

k kustomize "$E2E_ROOT/manifests/monitoring" >"$tmp/monitoring.yaml" || fail "kubectl kustomize manifests/monitoring"
out="$(k apply --dry-run=server --validate=strict -f "$tmp/monitoring.yaml" 2>&1)" \
  || fail "server dry run of manifests/monitoring (strict field validation):\n$out"
assert_eq "$(grep -c '(server dry run)$' <<<"$out")" 4 "objects accepted by the server dry run"
assert_not_contains "$out" "Warning" "warnings of the server dry run"
out="$(k apply --validate=strict -f "$tmp/monitoring.yaml" 2>&1)" || fail "kubectl apply of manifests/monitoring:\n$out"
log "$out"

# What the server stored.
sm="$(k -n modelservice-system get servicemonitor modelservice -o json)"
assert_eq "$(jq -c '[.spec.endpoints[] | [.port, .honorLabels]]' <<<"$sm")" \
  '[["webhook-metrics",true],["controller-metrics",true]]' "ServiceMonitor endpoints and honorLabels"
pm="$(k -n modelservice-system get podmonitor modelservice-models -o json)"
want="$(python3 - "$E2E_ROOT/manifests/monitoring/podmonitor.yaml" <<'EOF'
import json, sys, yaml
print(json.dumps(yaml.safe_load(open(sys.argv[1]))["spec"], sort_keys=True))
EOF
)"
assert_eq "$(jq -cS .spec <<<"$pm")" "$(jq -cS . <<<"$want")" "the PodMonitor's spec as stored (no field pruned)"
pr="$(k -n modelservice-system get prometheusrule modelservice -o json)"
want="$(python3 - "$E2E_ROOT/manifests/monitoring/prometheusrule.yaml" <<'EOF'
import json, sys, yaml
print(json.dumps(yaml.safe_load(open(sys.argv[1]))["spec"], sort_keys=True))
EOF
)"
assert_eq "$(jq -cS .spec <<<"$pr")" "$(jq -cS . <<<"$want")" "the PrometheusRule's spec as stored"
cm="$(k -n modelservice-system get configmap modelservice-dashboard -o json)"
assert_eq "$(jq -r '.metadata.labels.grafana_dashboard' <<<"$cm")" 1 "the dashboard ConfigMap's sidecar label"
jq -j '.data["modelservice.json"]' <<<"$cm" | cmp -s - "$E2E_ROOT/manifests/monitoring/dashboard/modelservice.json" \
  || fail "the stored dashboard differs from manifests/monitoring/dashboard/modelservice.json"
log "ok: the stored dashboard is the file"
