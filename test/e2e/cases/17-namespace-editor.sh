# A namespace editor uses ModelServices with nothing but the built-in roles:
# alice is bound to the ClusterRole edit in one namespace, bob to view. The
# ClusterRoles modelservice-edit / modelservice-view of manifests/rbac (the
# suite installs them with the local overlay) aggregate into edit and view
# (kube-controller-manager's clusterrole-aggregation controller), so:
#   - alice creates a ModelService through the real webhooks (the defaults
#     appear), lists it, scales it, is denied an invalid one by the webhook
#     (not by RBAC), and deletes it (the controller finishes the delete);
#   - bob lists it and reads it, but may not create, scale or delete one;
#   - neither may touch ModelServices in another namespace.
# timeout: 120
need_full_cluster
ns=e2e-editor
new_ns "$ns"
new_ns e2e-editor-other
k -n "$ns" create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null 2>&1 || true
k -n "$ns" create rolebinding bob-view --clusterrole=view --user=bob >/dev/null 2>&1 || true
wait_output 60 "edit has ModelServices (aggregated)" yes k auth can-i create modelservices.modelops.dev -n "$ns" --as alice
wait_output 60 "view has ModelServices (aggregated)" yes k auth can-i watch modelservices.modelops.dev -n "$ns" --as bob
alice() { k --as alice -n "$ns" "$@"; }
bob() { k --as bob -n "$ns" "$@"; }

out="$(alice apply -f "$E2E_ROOT/manifests/samples/minimal.yaml" 2>&1)" || fail "alice: kubectl apply minimal.yaml: $out"
assert_eq "$out" "modelservice.modelops.dev/minimal created" "alice creates a ModelService"
assert_eq "$(alice get ms minimal -o 'jsonpath={.spec.replicas} {.spec.port} {.spec.strategy.type}')" "1 8080 RollingUpdate" \
  "the defaults the mutating webhook added to alice's ModelService"
assert_eq "$(alice get ms -o name)" "modelservice.modelops.dev/minimal" "kubectl get ms as alice"
out="$(alice scale ms/minimal --replicas=2 2>&1)" || fail "alice: kubectl scale: $out"
assert_eq "$(alice get ms minimal -o 'jsonpath={.spec.replicas}')" 2 "spec.replicas after alice's kubectl scale"
out="$(alice apply -f "$E2E_ROOT/manifests/samples/invalid/surge-and-unavailable-zero.yaml" 2>&1 || true)"
assert_contains "$out" 'admission webhook "validate.modelservices.modelops.dev" denied the request: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0' \
  "alice's invalid ModelService (denied by the validating webhook, past RBAC)"

out="$(bob get ms 2>&1)" || fail "bob: kubectl get ms: $out"
assert_contains "$out" "minimal" "kubectl get ms as bob"
assert_eq "$(bob get ms minimal -o 'jsonpath={.spec.model}')" distilbert-base-uncased "bob reads alice's ModelService"
for what in "create:$(ms_yaml by-bob 'model: m' | bob create -f - 2>&1 || true)" \
            "scale:$(bob scale ms/minimal --replicas=3 2>&1 || true)" \
            "delete:$(bob delete ms minimal --wait=false 2>&1 || true)"; do
  assert_contains "${what#*:}" "Error from server (Forbidden)" "bob (view) tries to ${what%%:*}"
done
out="$(k --as alice -n e2e-editor-other get ms 2>&1 || true)"
assert_contains "$out" "Error from server (Forbidden)" "alice lists ModelServices in a namespace where she is no editor"

out="$(alice delete ms minimal --timeout=60s 2>&1)" || fail "alice: kubectl delete: $out"
assert_eq "$out" 'modelservice.modelops.dev "minimal" deleted from e2e-editor namespace' "alice deletes her ModelService"
assert_eq "$(alice get ms -o name)" "" "ModelServices left in $ns"
