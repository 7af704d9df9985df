# The Helm chart and kustomize install the same objects. manifests/ is
# rendered from the chart (tools/gen-manifests.py, checked by scripts/test.sh),
# but its kustomization.yaml files, the components' patches and
# manifests/monitoring/ are written by hand: for each variant, the chart's
# render and `kubectl kustomize` of the matching overlay are compared as sets
# of objects (both normalised by kustomize: sorted, no comments):
#   default values (+ namespace.create)     manifests/
#   certificates.mode=cert-manager          + components/cert-manager
#   certificates.mode=provided              + components/provided (the chart's
#                                             caBundle aside: kustomize users
#                                             set it with set-ca-bundle.sh)
#   networkPolicy.webhook.from (an ipBlock) + components/webhook-from-apiserver
#   monitoring.* enabled (for each kind in manifests/monitoring/)
#                                             manifests/monitoring/ alone
# and dist/install.yaml is the first one. The chart renders with
# helmLabels=false, crds.keep=false and tests.enabled=false, as
# tools/gen-manifests.py does for manifests/ (applied without Helm: no
# release labels, no resource policy, no helm test).
# Then every kustomization of manifests/ (the default install, each
# component over it, monitoring/, overlays/local/) renders byte for byte the
# same with kustomize 5.4, 5.5 and 5.6 (built from Go modules:
# test/e2e/kustomize-tools/) as with kubectl's (1.34: kustomize 5.7): what
# kubectl 1.30-1.33 runs for `kubectl kustomize` and `apply -k` is before 5.7,
# and panicked on the components' former patch files.
# timeout: 420
# logs: none
eval "$("$E2E_ROOT/test/e2e/build-helm.sh")"
chart="$E2E_ROOT/charts/modelservice-operator"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
export HELM_CACHE_HOME="$tmp/helm" HELM_CONFIG_HOME="$tmp/helm" HELM_DATA_HOME="$tmp/helm"

# normalise NAME FILE: FILE's objects through kustomize, in $tmp/NAME.yaml.
normalise() {
  mkdir -p "$tmp/n-$1"
  cp "$2" "$tmp/n-$1/objects.yaml"
  printf 'resources: [objects.yaml]\n' >"$tmp/n-$1/kustomization.yaml"
  k kustomize "$tmp/n-$1" >"$tmp/$1.yaml" || fail "kubectl kustomize of $2"
}
# overlay NAME COMPONENT: kubectl kustomize of manifests/ + the component, in $tmp/NAME.yaml.
overlay() {
  local d="$tmp/o-$1" rel
  mkdir -p "$d"
  rel="$(realpath --relative-to="$d" "$E2E_ROOT/manifests")"
  printf 'resources: [%s]\ncomponents: [%s/components/%s]\n' "$rel" "$rel" "$2" >"$d/kustomization.yaml"
  k kustomize "$d" >"$tmp/$1.yaml" || fail "kubectl kustomize manifests/ + components/$2"
}
# same WHAT A B: the two normalised renders are the same objects.
same() {
  local d
  d="$(diff "$tmp/$2.yaml" "$tmp/$3.yaml")" || fail "$1: the chart and kustomize differ (< chart, > kustomize):\n$d"
  log "ok: $1: the chart and kustomize render the same $(grep -c '^kind: ' "$tmp/$2.yaml") objects"
}
render() {  # render NAME HELM_ARGS...: helm template into $tmp/NAME.raw.yaml
  local name="$1"; shift
  "$HELM" template modelservice "$chart" -n modelservice-system --skip-tests --set namespace.create=true \
    --set helmLabels=false --set crds.keep=false --set tests.enabled=false "$@" \
    >"$tmp/$name.raw.yaml" || fail "helm template $*"
}

render chart-default
normalise chart-default "$tmp/chart-default.raw.yaml"
k kustomize "$E2E_ROOT/manifests" >"$tmp/kustomize-default.yaml" || fail "kubectl kustomize manifests/"
same "default install" chart-default kustomize-default
normalise dist "$E2E_ROOT/dist/install.yaml"
same "dist/install.yaml" chart-default dist

render chart-cm --set certificates.mode=cert-manager
normalise chart-cm "$tmp/chart-cm.raw.yaml"
overlay kustomize-cm cert-manager
same "certificates.mode=cert-manager" chart-cm kustomize-cm

"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$tmp/certs" >/dev/null 2>&1 || fail "gen-certs.sh"
render chart-provided --set certificates.mode=provided --set-file certificates.provided.caBundle="$tmp/certs/ca.crt"
assert_eq "$(grep -c "^      caBundle: $(base64 -w0 "$tmp/certs/ca.crt")$" "$tmp/chart-provided.raw.yaml")" 2 \
  "caBundle lines in the chart's render of mode provided"
grep -v '^      caBundle: ' "$tmp/chart-provided.raw.yaml" >"$tmp/chart-provided.nocab.yaml"
normalise chart-provided "$tmp/chart-provided.nocab.yaml"
overlay kustomize-provided provided
same "certificates.mode=provided" chart-provided kustomize-provided

render chart-np --set 'networkPolicy.webhook.from[0].ipBlock.cidr=192.0.2.10/32'
normalise chart-np "$tmp/chart-np.raw.yaml"
overlay kustomize-np webhook-from-apiserver
same "networkPolicy.webhook.from" chart-np kustomize-np

# Monitoring: the kinds manifests/monitoring/ has are the ones the chart can enable.
k kustomize "$E2E_ROOT/manifests/monitoring" >"$tmp/kustomize-mon.yaml" || fail "kubectl kustomize manifests/monitoring/"
args=()
grep -q '^kind: ServiceMonitor$' "$tmp/kustomize-mon.yaml" && args+=(--set monitoring.serviceMonitor.enabled=true)
grep -q '^kind: PodMonitor$' "$tmp/kustomize-mon.yaml" && args+=(--set monitoring.podMonitor.enabled=true)
grep -q '^kind: PrometheusRule$' "$tmp/kustomize-mon.yaml" && args+=(--set monitoring.prometheusRule.enabled=true)
grep -q '^kind: ConfigMap$' "$tmp/kustomize-mon.yaml" && args+=(--set monitoring.dashboard.enabled=true)
(( ${#args[@]} )) || fail "manifests/monitoring/ has no ServiceMonitor, PodMonitor, PrometheusRule or ConfigMap"
"$HELM" template modelservice "$chart" -n modelservice-system --set helmLabels=false "${args[@]}" --show-only templates/monitoring/monitoring.yaml \
  >"$tmp/chart-mon.raw.yaml" || fail "helm template ${args[*]}"
normalise chart-mon "$tmp/chart-mon.raw.yaml"
normalise kustomize-mon "$tmp/kustomize-mon.yaml"
same "monitoring (${args[*]})" chart-mon kustomize-mon

# ------------------------------------------------------------ kustomize 5.4, 5.5, 5.6 and 5.7
# Each built once from Go modules and cached (about 40 s each cold).
kustomizations=(default:"$E2E_ROOT/manifests" monitoring:"$E2E_ROOT/manifests/monitoring" local:"$E2E_ROOT/manifests/overlays/local")
for c in "$E2E_ROOT"/manifests/components/*/; do
  c="$(basename "$c")"
  overlay "kz-$c" "$c"
  kustomizations+=("component $c:$tmp/o-kz-$c")
done
for i in "${!kustomizations[@]}"; do
  dir="${kustomizations[$i]#*:}"
  k kustomize "$dir" >"$tmp/kz-$i.yaml" || fail "kubectl kustomize $dir"
done
for mod in "$E2E_ROOT"/test/e2e/kustomize-tools/v*/; do
  bin="$("$E2E_ROOT/test/e2e/build-go-tool.sh" "$mod" sigs.k8s.io/kustomize/kustomize/v5 kustomize 2>"$tmp/build.log")" \
    || fail "building kustomize of $mod:\n$(tail -n 20 "$tmp/build.log")"
  version="$(basename "$(dirname "$bin")")"  # kustomize-vX.Y.Z (the binary says "(devel)")
  for i in "${!kustomizations[@]}"; do
    what="${kustomizations[$i]%%:*}" dir="${kustomizations[$i]#*:}"
    "$bin" build "$dir" >"$tmp/kz-old.yaml" 2>"$tmp/kz-old.err" \
      || fail "$version build of $what ($dir):\n$(head -n 20 "$tmp/kz-old.err")"
    d="$(diff "$tmp/kz-$i.yaml" "$tmp/kz-old.yaml")" \
      || fail "$what: kubectl kustomize and $version differ (< kubectl, > $version):\n$d"
  done
  log "ok: $version renders the ${#kustomizations[@]} kustomizations (${kustomizations[*]%%:*}) as kubectl kustomize does"
done
