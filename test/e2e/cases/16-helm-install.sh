# The install paths of docs/operator/install.md, on a cluster of their own
# (cluster.sh in E2E_WORK/install-cluster: the chart's cluster-scoped objects
# have the same names as the suite's local overlay, so they cannot share one).
# Its nodes are KWOK's, so the operator's Pods become Ready without running:
# this case checks objects, RBAC and what Helm does, not the programs.
#   1. `helm template | kubectl apply --dry-run=server`: every object of the
#      chart (modes self and provided) is accepted by the API server.
#   2. `kubectl apply -f dist/install.yaml` (the README's line): every object
#      created, the Deployment rolls out; applied again: nothing written, and
#      a caBundle set in between (set-ca-bundle.sh) is kept; the RBAC of
#      certificate mode self is narrowed to its objects; a user bound only to
#      the built-in edit role can list ModelServices and may create, scale
#      and delete them, one bound to view may only read them (aggregation of
#      modelservice-edit/-view). Deleted again: nothing left.
#   3. `helm install` (the README's line): the CRD lands, every object of the
#      release exists, the Deployment rolls out (--wait);
#      no ModelService gets past the unreachable webhook, not even in the
#      operator's own namespace; `helm upgrade` to mode provided, another log
#      level and failurePolicy Ignore: the caBundle and the policy reach both
#      webhook configurations, the log level the Deployment, and a
#      ModelService is admitted without the webhook;
#      `helm uninstall`: every object of the release is gone; what stays is
#      what docs/operator/install.md says: the CRD (crds.keep) and the
#      ModelServices, the namespace, the user's Secret; `helm install` again
#      takes the kept CRD over. With crds.keep=false
#      and crds.install=false the chart renders no resource policy, no CRD.
#   4. The previous chart (0.1.0, CRD in crds/: the tree of commit
#      $prev_chart_commit, its CRD without spec.runtimeClassName, as an older
#      CRD would lack a newer field) installed, a ModelService created; `helm
#      upgrade` to this chart refuses to take over the CRD Helm did not
#      manage until the CRD is labelled and annotated as install.md's
#      upgrade notes say; then (--reuse-values: none of the values added
#      since, their defaults apply) it upgrades the CRD (the field is there, the
#      release's labels and keep policy on it), the Deployment (its selector
#      unchanged) and leaves the ModelService as it was (same resourceVersion).
# timeout: 900
# logs: none
need_full_cluster
eval "$("$E2E_ROOT/test/e2e/build-helm.sh")"  # cached; a cold build takes minutes
chart="$E2E_ROOT/charts/modelservice-operator"
cdir="$E2E_WORK/install-cluster"
export HELM_CACHE_HOME="$E2E_WORK/helm/cache" HELM_CONFIG_HOME="$E2E_WORK/helm/config" HELM_DATA_HOME="$E2E_WORK/helm/data"
tmp="$(mktemp -d)"
trap '"$E2E_ROOT/test/e2e/cluster.sh" --dir "$cdir" down >/dev/null 2>&1 || true; rm -rf "$cdir/etcd-data" "$tmp"' EXIT
t0="$(now)"
kc="$(E2E_CLUSTER_MODE=full E2E_APISERVER_ARGS="" "$E2E_ROOT/test/e2e/cluster.sh" --dir "$cdir" up 2>"$tmp/up.log")" \
  || fail "cluster.sh up for the install tests:\n$(tail -n 20 "$tmp/up.log")"
t_up="$(elapsed "$t0")"
log "own cluster up in ${t_up}s"
hk() { "$KUBECTL" --kubeconfig "$kc" --request-timeout=30s "$@"; }
helm_() { "$HELM" --kubeconfig "$kc" "$@"; }
ns=modelservice-system
sa="system:serviceaccount:$ns:modelservice-controller"
objects() { grep -c '^kind: ' "$1"; }  # top-level objects of a YAML stream

# ------------------------------------------------------------ 1. template | apply --dry-run=server
t0="$(now)"
hk create namespace "$ns" >/dev/null  # namespaced objects need it, even in a dry run
"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$tmp/certs" --namespace "$ns" >/dev/null 2>&1 || fail "gen-certs.sh"
for values in "" "--set certificates.mode=provided --set-file certificates.provided.caBundle=$tmp/certs/ca.crt"; do
  # shellcheck disable=SC2086
  helm_ template modelservice "$chart" -n "$ns" --skip-tests $values >"$tmp/render.yaml" || fail "helm template $values"
  out="$(hk apply --dry-run=server -f "$tmp/render.yaml" 2>&1)" || fail "kubectl apply --dry-run=server of helm template $values:\n$out"
  assert_eq "$(grep -c '(server dry run)$' <<<"$out")" "$(objects "$tmp/render.yaml")" \
    "objects of helm template ${values:-(default values)} accepted by the server dry run"
done
# The alerts' runbook links follow monitoring.prometheusRule.runbookBaseURL.
helm_ template modelservice "$chart" -n "$ns" --set monitoring.prometheusRule.enabled=true \
  --set monitoring.prometheusRule.runbookBaseURL=https://wiki.example.com/ops/modelservice/ >"$tmp/rules.yaml" \
  || fail "helm template with a runbookBaseURL"
urls="$(grep -o 'runbook_url: .*' "$tmp/rules.yaml" | sort -u)"
assert_eq "$(grep -c . <<<"$urls")" "$(grep -o 'alert: [A-Za-z]*' "$tmp/rules.yaml" | sort -u | wc -l)" \
  "one runbook_url per alert name"
assert_eq "$(grep -vc '^runbook_url: https://wiki.example.com/ops/modelservice/ModelService[A-Za-z]*\.md$' <<<"$urls" || true)" 0 \
  "runbook_urls outside https://wiki.example.com/ops/modelservice/ ($urls)"
# The webhook's shutdown delay and the Pod's grace period, also when the value
# is absent (null removes it, as `helm upgrade --reuse-values` from a release
# older than the value does: the older release's values, not the chart's).
delay() {
  # shellcheck disable=SC2068
  helm_ template modelservice "$chart" -n "$ns" $@ | python3 -c '
import sys, yaml
d = next(d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "Deployment")["spec"]["template"]["spec"]
w = next(c for c in d["containers"] if c["name"] == "webhook")
print(d["terminationGracePeriodSeconds"], *[a for a in w["args"] if a.startswith("--shutdown-delay")])' \
    2>/dev/null || echo "helm template $*: failed"
}
assert_eq "$(delay)" "30 --shutdown-delay=10s" "grace period and shutdown delay by default"
assert_eq "$(delay --set webhook.shutdownDelaySeconds=null)" "30 --shutdown-delay=10s" "... with the value absent"
assert_eq "$(delay --set webhook.shutdownDelaySeconds=0)" "20 --shutdown-delay=0s" "... with 0"
assert_eq "$(delay --set webhook.shutdownDelaySeconds=45)" "65 --shutdown-delay=45s" "... with 45"
hk delete namespace "$ns" --wait --timeout=60s >/dev/null
t_template="$(elapsed "$t0")"

# ------------------------------------------------------------ 2. dist/install.yaml
t0="$(now)"
dist="$E2E_ROOT/dist/install.yaml"
out="$(hk apply -f "$dist" 2>&1)" || fail "kubectl apply -f dist/install.yaml:\n$out"
assert_eq "$(grep -c ' created$' <<<"$out")" "$(objects "$dist")" "objects created by kubectl apply -f dist/install.yaml"
hk wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >/dev/null
hk -n "$ns" rollout status deployment/modelservice --timeout=90s >/dev/null || fail "dist/install.yaml: the Deployment did not roll out"
assert_eq "$(hk -n "$ns" get deployment modelservice -o 'jsonpath={.spec.template.metadata.annotations.kubectl\.kubernetes\.io/default-container}')" \
  controller "the Pods' default container"
assert_eq "$(hk get mutatingwebhookconfiguration modelservice-mutating -o 'jsonpath={.webhooks[0].clientConfig.caBundle}')" "" \
  "caBundle of the default install (mode self: set by the controller, not by the manifests)"
KUBECTL="$KUBECTL" KUBECONFIG="$kc" "$E2E_ROOT/manifests/overlays/local/set-ca-bundle.sh" "$tmp/certs/ca.crt" >/dev/null \
  || fail "set-ca-bundle.sh"
out="$(hk diff -f "$dist" 2>&1)" || fail "kubectl diff -f dist/install.yaml after the install and set-ca-bundle.sh:\n$out"
log "ok: kubectl diff -f dist/install.yaml shows no difference"
rv="$(hk get -f "$dist" -o 'jsonpath={range .items[*]}{.metadata.resourceVersion} {end}')"
out="$(hk apply -f "$dist" 2>&1)" || fail "kubectl apply -f dist/install.yaml (again):\n$out"
# (kubectl reports some no-op patches as "configured"; the objects say what changed.)
assert_eq "$(hk get -f "$dist" -o 'jsonpath={range .items[*]}{.metadata.resourceVersion} {end}')" "$rv" \
  "resourceVersions of every object after a second apply (nothing written)"
for w in mutatingwebhookconfiguration/modelservice-mutating validatingwebhookconfiguration/modelservice-validating; do
  assert_eq "$(hk get "$w" -o 'jsonpath={.webhooks[0].clientConfig.caBundle}')" "$(base64 -w0 "$tmp/certs/ca.crt")" \
    "$w: the caBundle set by set-ca-bundle.sh after the re-apply"
done
# Mode self's RBAC: the one Secret and the two configurations, nothing else.
can() { hk auth can-i "$@" 2>/dev/null || true; }
assert_eq "$(can update secrets/modelservice-webhook-tls -n "$ns" --as "$sa")" yes "the controller may update its Secret"
assert_eq "$(can get secrets/other -n "$ns" --as "$sa")" no "the controller may not read another Secret"
assert_eq "$(can create secrets -n default --as "$sa")" no "the controller may not create Secrets outside $ns"
assert_eq "$(can patch mutatingwebhookconfigurations/modelservice-mutating --as "$sa")" yes "the controller may patch its mutating configuration"
assert_eq "$(can patch validatingwebhookconfigurations/other --as "$sa")" no "the controller may not patch another configuration"
# Namespace editors and viewers, bound only to the built-in roles.
hk create namespace team-a >/dev/null
hk -n team-a create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null
hk -n team-a create rolebinding bob-view --clusterrole=view --user=bob >/dev/null
wait_output 60 "the built-in edit role has ModelServices (aggregated by kube-controller-manager)" yes \
  hk auth can-i create modelservices.modelops.dev -n team-a --as alice
for verb in "get modelservices" "list modelservices" "delete modelservices" "patch modelservices" \
            "update modelservices --subresource=scale" "get modelservices --subresource=status"; do
  # shellcheck disable=SC2086
  assert_eq "$(can $verb -n team-a --as alice)" yes "alice (edit) may $verb"
done
assert_eq "$(can update modelservices --subresource=status -n team-a --as alice)" no "alice (edit) may not update the status"
assert_eq "$(can create modelservices -n team-b --as alice)" no "alice (edit in team-a) may not create in team-b"
wait_output 60 "the built-in view role has ModelServices" yes hk auth can-i list modelservices.modelops.dev -n team-a --as bob
assert_eq "$(can create modelservices -n team-a --as bob)" no "bob (view) may not create"
assert_eq "$(can update modelservices --subresource=scale -n team-a --as bob)" no "bob (view) may not scale"
for who in alice bob; do
  out="$(hk -n team-a get ms --as "$who" 2>&1)" || fail "kubectl get ms as $who: $out"
  assert_eq "$out" "No resources found in team-a namespace." "kubectl get ms as $who"
done
out="$(hk delete -f "$dist" --wait --timeout=90s 2>&1)" || fail "kubectl delete -f dist/install.yaml:\n$out"
assert_eq "$(hk get -f "$dist" --ignore-not-found -o name 2>&1 | wc -l)" 0 "objects of dist/install.yaml left after kubectl delete"
t_dist="$(elapsed "$t0")"

# ------------------------------------------------------------ 3. helm install, upgrade, uninstall
t0="$(now)"
helm_ install modelservice "$chart" -n "$ns" --create-namespace --wait --timeout 90s >"$tmp/install.out" 2>&1 \
  || fail "helm install:\n$(cat "$tmp/install.out")"
assert_contains "$(cat "$tmp/install.out")" "The controller's leader creates Secret modelservice-webhook-tls" "helm install's NOTES"
cert_args() {  # the controller's --cert-* arguments in the Deployment
  hk -n "$ns" get deployment modelservice -o json \
    | jq -r '[.spec.template.spec.containers[] | select(.name == "controller") | .args[] | select(startswith("--cert-"))] | join(" ")'
}
assert_eq "$(cert_args)" '--cert-mode=self --cert-secret-name=modelservice-webhook-tls --cert-secret-namespace=$(POD_NAMESPACE)' \
  "the controller's certificate flags in mode self"
assert_eq "$(hk get crd modelservices.modelops.dev -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}')" True \
  "the CRD (templates/crds/) landed"
crd_meta() {
  hk get crd modelservices.modelops.dev -o json | jq -r '[.metadata.annotations["helm.sh/resource-policy"],
    .metadata.annotations["meta.helm.sh/release-name"], .metadata.labels["app.kubernetes.io/managed-by"],
    .metadata.labels["app.kubernetes.io/instance"], .metadata.labels["helm.sh/chart"]] | join(" ")'
}
assert_eq "$(crd_meta)" "keep modelservice Helm modelservice modelservice-operator-$(awk '$1 == "version:" { print $2 }' "$chart/Chart.yaml")" \
  "the CRD's resource policy, release and labels"
helm_ get manifest modelservice -n "$ns" >"$tmp/release.yaml"
n="$(objects "$tmp/release.yaml")"
assert_eq "$(hk get -f "$tmp/release.yaml" -o name | wc -l)" "$n" "objects of the release that exist"
assert_eq "$n" "$(( $(objects "$dist") - 1 + 3 ))" \
  "objects of the release (dist/install.yaml without the Namespace, with helm test's ServiceAccount, Role and RoleBinding)"
# Every object carries the standard labels; no selector has the version or the chart.
assert_eq "$(python3 -c '
import sys, yaml
bad = [d["kind"] + "/" + d["metadata"]["name"] for d in yaml.safe_load_all(open(sys.argv[1])) if d
       and not {"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                "app.kubernetes.io/managed-by", "helm.sh/chart"} <= set(d["metadata"].get("labels", {}))]
print(" ".join(bad) or "none")' "$tmp/release.yaml")" none "objects of the release without the standard labels"
assert_eq "$(hk -n "$ns" get deployment modelservice -o 'jsonpath={.spec.selector.matchLabels}')" \
  '{"app.kubernetes.io/component":"operator","app.kubernetes.io/name":"modelservice-operator"}' "the Deployment's selector"
gen1="$(hk -n "$ns" get deployment modelservice -o 'jsonpath={.metadata.generation}')"
# The user's Secret, as the NOTES of mode self tell; then the upgrade.
hk -n "$ns" create secret tls modelservice-webhook-tls --cert "$tmp/certs/tls.crt" --key "$tmp/certs/tls.key" >/dev/null
out="$(ms_yaml early 'model: m' | hk -n "$ns" create -f - 2>&1 || true)"
assert_contains "$out" 'failed calling webhook "mutate.modelservices.modelops.dev"' \
  "a ModelService in the operator's own namespace while no webhook answers (failurePolicy Fail, no namespace spared)"
helm_ upgrade modelservice "$chart" -n "$ns" --reuse-values --wait --timeout 90s \
  --set certificates.mode=provided --set-file certificates.provided.caBundle="$tmp/certs/ca.crt" \
  --set logging.level=debug --set webhook.failurePolicy=Ignore --set webhook.timeoutSeconds=2 \
  >"$tmp/upgrade.out" 2>&1 || fail "helm upgrade:\n$(cat "$tmp/upgrade.out")"
assert_eq "$(helm_ status modelservice -n "$ns" -o json | jq -r '"\(.version) \(.info.status)"')" "2 deployed" "release after the upgrade"
for w in mutatingwebhookconfiguration/modelservice-mutating validatingwebhookconfiguration/modelservice-validating; do
  assert_eq "$(hk get "$w" -o 'jsonpath={.webhooks[0].clientConfig.caBundle} {.webhooks[0].failurePolicy} {.webhooks[0].timeoutSeconds}')" \
    "$(base64 -w0 "$tmp/certs/ca.crt") Ignore 2" "$w: caBundle, failurePolicy and timeout after helm upgrade"
done
# failurePolicy Ignore: admitted without the (unreachable) webhook; then what uninstall keeps.
ms_yaml kept 'model: kept' | hk -n "$ns" create -f - >/dev/null || fail "creating a ModelService with failurePolicy Ignore"
d="$(hk -n "$ns" get deployment modelservice -o json)"
assert_eq "$(jq -r '[.spec.template.spec.containers[].args[] | select(startswith("--log-level="))] | join(" ")' <<<"$d")" \
  "--log-level=debug --log-level=debug" "the log level of both containers after helm upgrade"
assert_eq "$(jq -r '.spec.template.spec.volumes[] | select(.name == "webhook-tls") | .secret.optional // false' <<<"$d")" false \
  "the Secret volume in mode provided (the Pod waits for it)"
assert_gt "$(jq -r .metadata.generation <<<"$d")" "$gen1" "the Deployment's generation after helm upgrade"
assert_eq "$(cert_args)" --cert-mode=provided "the controller's certificate flags in mode provided"
assert_eq "$(can create secrets -n "$ns" --as "$sa")" no "the controller's Secret rights in mode provided (mode self's RBAC removed)"
helm_ uninstall modelservice -n "$ns" --wait --timeout 90s >"$tmp/uninstall.out" 2>&1 \
  || fail "helm uninstall:\n$(cat "$tmp/uninstall.out")"
assert_eq "$(hk get -f "$tmp/release.yaml" --ignore-not-found -o name 2>&1)" customresourcedefinition.apiextensions.k8s.io/modelservices.modelops.dev \
  "objects of the release left after helm uninstall (the CRD: crds.keep)"
assert_eq "$(hk -n "$ns" get ms kept -o name)" modelservice.modelops.dev/kept "a ModelService after helm uninstall"
assert_eq "$(hk -n "$ns" get secret modelservice-webhook-tls -o name)" secret/modelservice-webhook-tls "the user's Secret after helm uninstall"
assert_eq "$(hk get namespace "$ns" -o 'jsonpath={.status.phase}')" Active "the namespace after helm uninstall (--create-namespace: not the release's)"
# The kept CRD still names the release: the same release installs again over it.
helm_ install modelservice "$chart" -n "$ns" --wait --timeout 90s --set webhook.failurePolicy=Ignore >"$tmp/install.out" 2>&1 \
  || fail "helm install again over the kept CRD:\n$(cat "$tmp/install.out")"
assert_eq "$(hk -n "$ns" get ms kept -o name)" modelservice.modelops.dev/kept "a ModelService after the second helm install"
helm_ uninstall modelservice -n "$ns" --wait --timeout 90s >"$tmp/uninstall.out" 2>&1 \
  || fail "helm uninstall (second):\n$(cat "$tmp/uninstall.out")"
for values in "--set crds.keep=false" "--set crds.install=false"; do
  # shellcheck disable=SC2086
  helm_ template modelservice "$chart" -n "$ns" $values >"$tmp/render.yaml" || fail "helm template $values"
  assert_eq "$(grep -c 'helm.sh/resource-policy' "$tmp/render.yaml")" 0 "resource policies rendered with $values"
done
assert_eq "$(grep -c '^kind: CustomResourceDefinition$' "$tmp/render.yaml")" 0 "CRDs rendered with crds.install=false"
t_helm="$(elapsed "$t0")"

# ------------------------------------------------------------ 4. upgrade from the previous chart
t0="$(now)"
prev_chart_commit=d9521e436a877f602664b3a34a510f03b720c7bd  # chart 0.1.0, the CRD in crds/
hk delete ms kept -n "$ns" --wait --timeout=60s >/dev/null
hk delete crd modelservices.modelops.dev --wait --timeout=60s >/dev/null
mkdir -p "$tmp/prev"
git -C "$E2E_ROOT" archive "$prev_chart_commit" charts/modelservice-operator | tar -x -C "$tmp/prev" \
  || fail "the previous chart (commit $prev_chart_commit) from git: this case needs the repository's history"
prev="$tmp/prev/charts/modelservice-operator"
python3 - "$prev/crds/modelservices.modelops.dev.yaml" <<'PY' || fail "removing a field from the previous chart's CRD"
import sys, yaml
path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
props = docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
del props["runtimeClassName"]
yaml.safe_dump_all(docs, open(path, "w"), sort_keys=False)
PY
field() {  # field: whether the stored CRD has spec.runtimeClassName
  hk get crd modelservices.modelops.dev -o json \
    | jq -r '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties | has("runtimeClassName")'
}
helm_ install modelservice "$prev" -n "$ns" --wait --timeout 90s --set webhook.failurePolicy=Ignore >"$tmp/install.out" 2>&1 \
  || fail "helm install of the previous chart:\n$(cat "$tmp/install.out")"
assert_eq "$(field)" false "spec.runtimeClassName in the previous chart's CRD"
ms_yaml before 'model: before' 'replicas: 2' | hk -n "$ns" create -f - >/dev/null || fail "creating a ModelService with the previous chart"
before="$(hk -n "$ns" get ms before -o json | jq -c '{rv: .metadata.resourceVersion, spec}')"
helm_ upgrade modelservice "$chart" -n "$ns" --wait --timeout 90s --set webhook.failurePolicy=Ignore >"$tmp/upgrade.out" 2>&1 \
  && fail "helm upgrade took over the CRD of crds/ without its ownership labels"
assert_contains "$(cat "$tmp/upgrade.out")" "invalid ownership metadata" "helm upgrade before the CRD is labelled and annotated"
# docs/operator/install.md, "Upgrade": once, from a chart with the CRD in crds/.
hk label crd modelservices.modelops.dev app.kubernetes.io/managed-by=Helm >/dev/null
hk annotate crd modelservices.modelops.dev meta.helm.sh/release-name=modelservice meta.helm.sh/release-namespace="$ns" >/dev/null
# --reuse-values: the previous release's values, without any value added
# since (crds, podSecurityContext, securityContext, tests, ...): their
# defaults must apply all the same.
helm_ upgrade modelservice "$chart" -n "$ns" --wait --timeout 90s --reuse-values >"$tmp/upgrade.out" 2>&1 \
  || fail "helm upgrade --reuse-values from the previous chart:\n$(cat "$tmp/upgrade.out")"
assert_eq "$(hk -n "$ns" get deployment modelservice -o json | jq -c '[.spec.template.spec.securityContext.runAsNonRoot,
  [.spec.template.spec.containers[].securityContext.readOnlyRootFilesystem]]')" '[true,[true,true]]' \
  "the security contexts after helm upgrade --reuse-values from the previous chart"
assert_eq "$(hk -n "$ns" get serviceaccount modelservice-test -o name)" serviceaccount/modelservice-test \
  "helm test's ServiceAccount after helm upgrade --reuse-values from the previous chart"
assert_eq "$(helm_ status modelservice -n "$ns" -o json | jq -r '"\(.version) \(.info.status)"')" "2 deployed" "release after the upgrade from the previous chart"
assert_eq "$(field)" true "spec.runtimeClassName in the CRD after helm upgrade"
assert_eq "$(crd_meta)" "keep modelservice Helm modelservice modelservice-operator-$(awk '$1 == "version:" { print $2 }' "$chart/Chart.yaml")" \
  "the CRD's resource policy, release and labels after the upgrade"
assert_eq "$(hk -n "$ns" get ms before -o json | jq -c '{rv: .metadata.resourceVersion, spec}')" "$before" \
  "the ModelService of the previous chart after the upgrade (resourceVersion and spec)"
hk -n "$ns" rollout status deployment/modelservice --timeout=90s >/dev/null || fail "the Deployment did not roll out after the upgrade"
helm_ uninstall modelservice -n "$ns" --wait --timeout 90s >"$tmp/uninstall.out" 2>&1 \
  || fail "helm uninstall:\n$(cat "$tmp/uninstall.out")"
assert_eq "$(hk -n "$ns" get ms before -o name)" modelservice.modelops.dev/before "the ModelService after helm uninstall (the CRD kept)"
t_upgrade="$(elapsed "$t0")"
echo "TIMING install paths: own cluster up ${t_up}s; helm template dry runs ${t_template}s; dist/install.yaml ${t_dist}s; helm install/upgrade/uninstall ${t_helm}s; upgrade from the previous chart ${t_upgrade}s" \
  | tee -a "$E2E_WORK/timings.txt" >&2
