# The API server calls the webhook Pods through their Service (the webhook
# configurations name the Service, not a URL; with no kube-proxy,
# kube-apiserver's --enable-aggregator-routing resolves it to the ready
# endpoints and its egress selector reaches them inside the real node's
# network namespace): `kubectl apply` of a ModelService is defaulted by the
# mutating webhook and a cross-field rule is denied by the validating one,
# in the same words as ever, and the webhook Pods count those requests.
# A namespace editor bound only to the built-in `edit` role (the chart's
# modelservice-edit aggregates into it) creates a ModelService through the
# webhook Pods and lists it with `kubectl get ms`.
# timeout: 120
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-webhook
new_ns "$ns"

for w in mutatingwebhookconfiguration/modelservice-mutating validatingwebhookconfiguration/modelservice-validating; do
  assert_eq "$(jp "$w" '{.webhooks[0].clientConfig.service.namespace}/{.webhooks[0].clientConfig.service.name}:{.webhooks[0].clientConfig.service.port} url={.webhooks[0].clientConfig.url}')" \
    "modelservice-system/modelservice-webhook:443 url=" "$w clientConfig"
done
ips="$(k -n "$OPERATOR_NS" get pods -l app.kubernetes.io/name=modelservice-operator,app.kubernetes.io/component=operator -o 'jsonpath={.items[*].status.podIP}' | tr ' ' '\n' | sort | tr '\n' ' ')"
assert_eq "$(webhook_endpoints) " "$ips" "ready endpoints of Service modelservice-webhook (the operator Pods' IPs)"

# requests counted by the webhook Pods (their /metrics through the pod proxy)
webhook_requests() {
  local p sum=0 v
  for p in $(operator_pods); do
    v="$(pod_get "$p" 8080 /metrics | awk '/^controller_runtime_webhook_requests_total\{/ { s += $2 } END { print s + 0 }')"
    sum=$(( sum + v ))
  done
  echo "$sum"
}
before="$(webhook_requests)"

out="$(ms_yaml defaults-1 'model: bert-base-uncased' | k -n "$ns" apply -f - 2>&1)"
assert_eq "$out" "modelservice.modelops.dev/defaults-1 created" "kubectl apply"
assert_eq "$(jp ms/defaults-1 '{.spec.replicas} {.spec.port} {.spec.gpus} {.spec.strategy.type} {.spec.strategy.rollingUpdate.maxSurge} {.spec.strategy.rollingUpdate.maxUnavailable} {.spec.rollout.timeoutSeconds} {.spec.rollout.rollback}' -n "$ns")" \
  "1 8080 0 RollingUpdate 25% 0 600 Manual" "the defaults the mutating webhook added"

f="$E2E_ROOT/manifests/samples/invalid/surge-and-unavailable-zero.yaml"
out="$(cd "$E2E_ROOT" && k -n "$ns" apply -f manifests/samples/invalid/surge-and-unavailable-zero.yaml 2>&1 || true)"
assert_eq "$out" 'The request is invalid: error when creating "manifests/samples/invalid/surge-and-unavailable-zero.yaml": admission webhook "validate.modelservices.modelops.dev" denied the request: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0' \
  "kubectl apply -f $f"
gone "$ns" ms "$(k create --dry-run=client -f "$f" -o 'jsonpath={.metadata.name}')" || fail "the denied ModelService exists"

after="$(webhook_requests)"
assert_le 3 "$(( after - before ))" "webhook requests the Pods served for one create (mutate, validate) and one denial (mutate, validate)"

# A namespace editor, with nothing but the built-in edit role.
k -n "$ns" create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null
wait_output 60 "the built-in edit role has ModelServices (aggregated)" yes k auth can-i create modelservices.modelops.dev -n "$ns" --as alice
out="$(ms_yaml by-alice 'model: m' | k --as alice -n "$ns" apply -f - 2>&1)" || fail "alice: kubectl apply: $out"
assert_eq "$out" "modelservice.modelops.dev/by-alice created" "alice (edit) creates a ModelService"
assert_eq "$(k --as alice -n "$ns" get ms by-alice -o 'jsonpath={.spec.replicas} {.spec.strategy.type}')" "1 RollingUpdate" \
  "alice's ModelService, defaulted by the webhook Pods"
assert_eq "$(k --as alice -n "$ns" get ms --no-headers -o custom-columns=NAME:.metadata.name | tr '\n' ' ')" "by-alice defaults-1 " \
  "kubectl get ms as alice"
out="$(k --as alice -n default get ms 2>&1 || true)"
assert_contains "$out" "Error from server (Forbidden)" "alice lists ModelServices where she is no editor"
