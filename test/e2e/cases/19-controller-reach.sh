# The controller's reach (issue 41, finding 4).
#   1. The chart rendered with controller.watchNamespaces (two namespaces,
#      then one): a Role and a RoleBinding modelservice-controller in each
#      and nowhere else, no ClusterRoleBinding of the controller, no
#      ClusterRole that grants any write to Deployments, Services or
#      HorizontalPodAutoscalers, the controller's --namespace; the server
#      accepts every object (dry run). With the default values the
#      ClusterRole is there as before.
#   2. The rendered Role and RoleBinding of one namespace, bound to an
#      identity of this case's own (not in the suite's controller group: it
#      has no other right), and a controller run with that identity and
#      --namespace (the suite's controller stopped meanwhile): it syncs,
#      reconciles a ModelService of its namespace (finalizer, Deployment,
#      Service, status, an Event) with not one Forbidden answer (audit log,
#      by user) and leaves one of another namespace alone (no finalizer, no
#      status, no Deployment).
#   3. docs/operator/rbac.md's ValidatingAdmissionPolicy that pins
#      spec.serviceAccountName, applied as the page shows it: in a namespace
#      annotated modelops.dev/service-accounts=model-server, a ModelService
#      may run as model-server or without a ServiceAccount, another is denied
#      with the policy's message on create and when the field is changed,
#      and a ModelService made before the policy with another one still
#      takes a metadata-only update (its deletion is not blocked).
# timeout: 240
# logs: controller
need_full_cluster
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
eval "$("$E2E_ROOT/test/e2e/build-helm.sh")"  # cached
chart="$E2E_ROOT/charts/modelservice-operator"
tmp="$(mktemp -d)"
trap 'k delete validatingadmissionpolicybinding,validatingadmissionpolicy modelservice-service-account --ignore-not-found >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
ns_in=e2e-reach-in ns_out=e2e-reach-out ns_pin=e2e-reach-pin
# (--skip-tests: the helm test Pod, a hook, is not applied with the release;
# its ServiceAccount and Role are, and are counted below)
render() { "$HELM" template modelservice "$chart" -n modelservice-system --skip-tests "$@"; }

# ------------------------------------------------------------ 1. the chart
# summary FILE: what the rendered RBAC grants the controller, one fact a line.
summary() {
  python3 - "$1" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
owned = {("apps", "deployments"), ("", "services"), ("autoscaling", "horizontalpodautoscalers")}
writes = {"create", "update", "patch", "delete", "deletecollection", "*"}
bad = []
for d in docs:
    if d["kind"] != "ClusterRole":
        continue
    for r in d.get("rules", []):
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                if ((g, res) in owned or g == "*" or res == "*") and writes & set(r.get("verbs", [])):
                    bad.append(f'{d["metadata"]["name"]}:{g}/{res}')
users = {"modelservice-edit", "modelservice-view"}  # the users' aggregated roles: nothing of the controller's
def names(kind):
    return " ".join(sorted(f'{d["metadata"].get("namespace", "-")}/{d["metadata"]["name"]}'
                           for d in docs if d["kind"] == kind and d["metadata"]["name"] not in users))
print("clusterrole writes to owned kinds:", " ".join(bad) or "none")
print("roles:", names("Role"))
print("rolebindings:", names("RoleBinding"))
print("clusterroles:", names("ClusterRole"))
print("clusterrolebindings:", names("ClusterRoleBinding"))
dep = next(d for d in docs if d["kind"] == "Deployment")
c = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "controller")
print("args:", " ".join(a for a in c["args"] if a.startswith("--namespace")) or "none")
EOF
}
render --set "controller.watchNamespaces={team-a,team-b}" >"$tmp/two.yaml" || fail "helm template with two namespaces"
got="$(summary "$tmp/two.yaml")"
log "watchNamespaces={team-a,team-b}:"$'\n'"$got"
# (modelservice-test: the helm test Pod's Role, creates ModelServices in the release namespace only)
sys_roles="modelservice-system/modelservice-leader-election modelservice-system/modelservice-test modelservice-system/modelservice-webhook-certificate"
assert_eq "$got" "clusterrole writes to owned kinds: none
roles: $sys_roles team-a/modelservice-controller team-b/modelservice-controller
rolebindings: $sys_roles team-a/modelservice-controller team-b/modelservice-controller
clusterroles: -/modelservice-webhook-certificate
clusterrolebindings: -/modelservice-webhook-certificate
args: --namespace=team-a,team-b" "the controller's RBAC and flag with two watched namespaces"
render --set "controller.watchNamespace=team-a" >"$tmp/one.yaml" || fail "helm template with one namespace"
assert_contains "$(summary "$tmp/one.yaml")" "roles: $sys_roles team-a/modelservice-controller
rolebindings: $sys_roles team-a/modelservice-controller" "the Role with controller.watchNamespace"
render >"$tmp/all.yaml" || fail "helm template"
assert_contains "$(summary "$tmp/all.yaml")" "clusterrolebindings: -/modelservice-controller -/modelservice-webhook-certificate" \
  "the ClusterRoleBinding of the default values (all namespaces)"
out="$(render --set controller.watchNamespace=a --set 'controller.watchNamespaces={b}' 2>&1 || true)"
assert_contains "$out" "set controller.watchNamespaces (a list) or controller.watchNamespace (one), not both" "both values set"
for n in team-a team-b; do new_ns "$n"; done
out="$(k apply --dry-run=server -f "$tmp/two.yaml" 2>&1)" || fail "server dry run of the chart with two namespaces:\n$out"

# ------------------------------------------------------------ 2. a controller with that Role only
for n in "$ns_in" "$ns_out"; do new_ns "$n"; done
user=e2e:reach-controller
# A client certificate of that user, in a group of its own (the suite's
# controllers' group is bound to the ClusterRole).
kc="$tmp/reach.kubeconfig"
openssl req -newkey rsa:2048 -nodes -keyout "$tmp/reach.key" -out "$tmp/reach.csr" -subj "/O=e2e:reach/CN=$user" 2>/dev/null \
  || fail "openssl req"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$tmp/reach.ext"
openssl x509 -req -in "$tmp/reach.csr" -CA "$E2E_CA_CERT" -CAkey "$E2E_CA_KEY" -CAcreateserial -CAserial "$tmp/ca.srl" \
  -days 1 -extfile "$tmp/reach.ext" -out "$tmp/reach.crt" 2>/dev/null || fail "signing the client certificate"
"$KUBECTL" config --kubeconfig="$kc" set-cluster e2e --server="$E2E_API_SERVER" --certificate-authority="$E2E_CA_CERT" \
  --embed-certs=true >/dev/null
"$KUBECTL" config --kubeconfig="$kc" set-credentials reach --client-certificate="$tmp/reach.crt" \
  --client-key="$tmp/reach.key" --embed-certs=true >/dev/null
"$KUBECTL" config --kubeconfig="$kc" set-context e2e --cluster=e2e --user=reach >/dev/null
"$KUBECTL" config --kubeconfig="$kc" use-context e2e >/dev/null
# The chart's Role and RoleBinding for $ns_in, the binding's subject that user.
render --set "controller.watchNamespaces={$ns_in}" -s templates/rbac/cluster_role.yaml \
  -s templates/rbac/cluster_role_binding.yaml | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    if d["kind"] == "RoleBinding":
        d["metadata"]["name"] = "e2e-reach-controller"
        d["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": sys.argv[1]}]
print(yaml.safe_dump_all(docs))' "$user" >"$tmp/reach-rbac.yaml"
assert_eq "$(grep -c '^kind: ' "$tmp/reach-rbac.yaml")" 2 "objects rendered for one namespace (a Role, a RoleBinding)"
k apply -f "$tmp/reach-rbac.yaml" >/dev/null || fail "applying the rendered Role and RoleBinding"
assert_eq "$(k auth can-i create deployments -n "$ns_in" --as "$user" 2>/dev/null || true)" yes "$user may create Deployments in $ns_in"
assert_eq "$(k auth can-i create deployments -n "$ns_out" --as "$user" 2>/dev/null || true)" no "$user may not create Deployments in $ns_out"
assert_eq "$(k auth can-i list deployments -A --as "$user" 2>/dev/null || true)" no "$user may not list Deployments cluster-wide"

# Only this controller reconciles meanwhile.
proc_stop controller TERM 10
mport="$(free_port)" pport="$(free_port)"
mark="$(audit_mark)"
proc_start reach-controller "$CONTROLLER_BIN" --kubeconfig "$kc" --namespace "$ns_in" --cert-mode provided \
  --default-image registry.local/model-server:e2e --prometheus-url "http://127.0.0.1:$PROM_PORT" \
  --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$pport" --log-format text
wait_for 30 "the namespaced controller's caches synced (/readyz)" http_ok "http://127.0.0.1:$pport/readyz"
ms_yaml w-in 'model: m' | k -n "$ns_in" apply -f - >/dev/null
ms_yaml w-out 'model: m' | k -n "$ns_out" apply -f - >/dev/null
wait_for 30 "w-in's Deployment" exists "$ns_in" deployment w-in
wait_for 30 "w-in's Service" exists "$ns_in" service w-in
in_status() { [[ -n "$(jp ms/w-in '{.status.phase}' -n "$ns_in")" ]]; }
wait_for 30 "w-in's status" in_status
in_event() { [[ "$(k -n "$ns_in" get events --field-selector involvedObject.name=w-in,reason=Created -o name | wc -l)" -ge 1 ]]; }
wait_for 30 "w-in's Created Event" in_event
sleep 3  # w-out has had time too
assert_eq "$(jp ms/w-out '{.metadata.finalizers} {.status}' -n "$ns_out")" " " "w-out's finalizers and status (not reconciled)"
gone "$ns_out" deployment w-out || fail "w-out has a Deployment"
forbidden="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg u "$user" \
  'select(.stage == "ResponseComplete" and .user.username == $u and .responseStatus.code == 403)
   | "\(.verb) \(.requestURI)"' | sort | uniq -c)"
[[ -z "$forbidden" ]] || echo "Forbidden answers to $user:"$'\n'"$forbidden" >&2
assert_eq "$(grep -c . <<<"$forbidden" || true)" 0 "Forbidden answers to the namespaced controller"
assert_gt "$(audit_writes_by "$user" "$mark" | grep -c " $ns_in/" || true)" 0 "writes of the namespaced controller in $ns_in"
assert_not_contains "$(cat "$E2E_WORK/logs/reach-controller.log")" "Forbidden" "the namespaced controller's log"
proc_stop reach-controller TERM 10
start_controller controller
k -n "$ns_in" delete ms w-in --wait=false >/dev/null
k -n "$ns_out" delete ms w-out --wait=false >/dev/null

# ------------------------------------------------------------ 3. docs/operator/rbac.md's policy
new_ns "$ns_pin"
k annotate namespace "$ns_pin" modelops.dev/service-accounts=model-server --overwrite >/dev/null
for sa in model-server deployer; do k -n "$ns_pin" create serviceaccount "$sa" >/dev/null 2>&1 || true; done
# Made before the policy: runs as deployer.
ms_yaml p-old 'model: m' 'serviceAccountName: deployer' | k -n "$ns_pin" apply -f - >/dev/null
awk '/<!-- e2e 19-controller-reach applies the next block as it is -->/ { want = 1; next }
     want && /^```yaml$/ { on = 1; next } on && /^```$/ { exit } on { print }' \
  "$E2E_ROOT/docs/operator/rbac.md" >"$tmp/policy.yaml"
assert_eq "$(grep -c '^kind: ' "$tmp/policy.yaml")" 2 "objects of rbac.md's policy block"
k apply -f "$tmp/policy.yaml" >/dev/null || fail "applying rbac.md's ValidatingAdmissionPolicy:\n$(cat "$tmp/policy.yaml")"
denied='ModelServices in namespace e2e-reach-pin may not run as ServiceAccount deployer (allowed: the namespace annotation modelops.dev/service-accounts, or none)'
create_denied() {
  [[ "$(ms_yaml p-bad 'model: m' 'serviceAccountName: deployer' | k -n "$ns_pin" create --dry-run=server -f - 2>&1)" == *"$denied"* ]]
}
wait_for 30 "a ModelService running as deployer denied by the policy" create_denied
out="$(ms_yaml p-good 'model: m' 'serviceAccountName: model-server' | k -n "$ns_pin" create -f - 2>&1)" \
  || fail "a ModelService running as model-server:\n$out"
out="$(ms_yaml p-none 'model: m' | k -n "$ns_pin" create -f - 2>&1)" || fail "a ModelService without a ServiceAccount:\n$out"
out="$(k -n "$ns_pin" patch ms p-good --type merge -p '{"spec":{"serviceAccountName":"deployer"}}' 2>&1 || true)"
assert_contains "$out" "$denied" "changing spec.serviceAccountName to deployer"
out="$(k -n "$ns_pin" label ms p-old team=ml 2>&1)" || fail "a metadata-only update of a ModelService made before the policy:\n$out"
out="$(k -n "$ns_pin" patch ms p-old --type merge -p '{"spec":{"replicas":3}}' 2>&1 || true)"
assert_contains "$out" "$denied" "a spec update of a ModelService made before the policy"
k delete -f "$tmp/policy.yaml" >/dev/null
k -n "$ns_pin" delete ms p-old p-good p-none --wait=false >/dev/null
