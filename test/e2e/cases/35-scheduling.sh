# spec.affinity and spec.topologySpreadConstraints (issue 21) on the local
# cluster's three nodes (kwok-cpu-1, kwok-cpu-2 and the tainted kwok-gpu-1):
#   - node affinity, pod anti-affinity and a spread constraint reach the
#     pods, and the scheduler obeys them: two replicas that must not share a
#     node run on the two CPU nodes, a third stays Pending (the GPU node's
#     taint is not tolerated) and the ModelService says so;
#   - a hand edit of the Deployment's affinity or spread constraints is
#     reverted, and once converged the controller makes zero writes (the
#     values it writes are compared as the API server returns them);
#   - each broken value is denied with the API server's own words: the same
#     value in a Deployment's pod template, sent with kubectl apply
#     --dry-run=server, gets the same messages on the Deployment's paths.
# timeout: 180
# logs: controller scheduler webhook
need_full_cluster
ns=e2e-scheduling
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"

affinity='{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [kwok-cpu-1, kwok-cpu-2, kwok-gpu-1]}]}]}}, podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app.kubernetes.io/instance: spread}}, topologyKey: kubernetes.io/hostname}]}}'
spread='[{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app.kubernetes.io/instance: spread}}}]'
ms_yaml spread 'model: m' 'image: registry.local/serve:1.4' 'replicas: 2' "affinity: $affinity" \
  "topologySpreadConstraints: $spread" | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 60 spread

# ---- where the pods run, and what they carry
nodes() { pods_of "$ns" spread '{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | paste -sd ' '; }
assert_eq "$(nodes)" "kwok-cpu-1 kwok-cpu-2" "nodes of the two replicas (one per node)"
pod="$(k -n "$ns" get pods -l app.kubernetes.io/instance=spread -o json | jq -c '.items[0].spec')"
assert_eq "$(jq -c '.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey' <<<"$pod")" \
  '"kubernetes.io/hostname"' "the pod's anti-affinity"
assert_eq "$(jq -c '.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values' <<<"$pod")" \
  '["kwok-cpu-1","kwok-cpu-2","kwok-gpu-1"]' "the pod's node affinity"
assert_eq "$(jq -c '.topologySpreadConstraints' <<<"$pod")" \
  '[{"labelSelector":{"matchLabels":{"app.kubernetes.io/instance":"spread"}},"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway"}]' \
  "the pod's spread constraints"

# ---- a third replica has no node left: Pending, and the status says why
k -n "$ns" patch ms spread --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
pending() { pods_of "$ns" spread '{range .items[*]}{.status.phase}{"\n"}{end}' | sort | paste -sd ' '; }
wait_output 60 "two Running replicas, one Pending" "Pending Running Running" pending
unsched() { k -n "$ns" get pods -l app.kubernetes.io/instance=spread -o json |
  jq -r '[.items[] | .status.conditions[]? | select(.type == "PodScheduled" and .status == "False") | .reason] | join(",")'; }
wait_output 30 "the scheduler's reason" Unschedulable unsched
k -n "$ns" patch ms spread --type=merge -p '{"spec":{"replicas":2}}' >/dev/null
wait_ms_ready "$ns" 60 spread

# ---- hand edits are reverted; then zero writes
k -n "$ns" patch deployment spread --type=json -p '[
  {"op": "remove", "path": "/spec/template/spec/affinity/podAntiAffinity"},
  {"op": "replace", "path": "/spec/template/spec/topologySpreadConstraints/0/maxSkew", "value": 3}]' >/dev/null
repaired() { k -n "$ns" get deployment spread -o json | jq -c '.spec.template.spec |
  [(.affinity.podAntiAffinity != null), .topologySpreadConstraints[0].maxSkew]'; }
wait_output 20 "anti-affinity and maxSkew put back" '[true,1]' repaired
wait_ms_ready "$ns" 60 spread
assert_no_controller_writes 5 "once the repaired Deployment rolled out"

# ---- broken values: the webhook's words are the API server's (for a Deployment)
# same NAME SPEC_MEMBER YAML: deny the ModelService; a Deployment with the
# same value in its pod template gets the same messages.
same() {
  local name="$1" member="$2" value="$3" ms_out dep_out want got
  ms_out="$(ms_yaml "$name" 'model: m' "$member: $value" | k -n "$ns" apply --dry-run=server -f - 2>&1)" &&
    fail "$name: the ModelService was admitted"
  got="${ms_out##*denied the request: }"
  cat >"$tmp/$name.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: c, image: registry.local/serve:1.4}]
      $member: $value
YAML
  dep_out="$(k -n "$ns" apply --dry-run=server -f "$tmp/$name.yaml" 2>&1)" && fail "$name: the Deployment was admitted"
  # "... is invalid: [a, b]" or "... is invalid: a", on spec.template.spec.
  want="$(sed -e 's/^.* is invalid: //' -e 's/^\[//' -e 's/\]$//' -e 's/, spec\.template\.spec\./; spec./g' \
    -e 's/^spec\.template\.spec\./spec./' <<<"$dep_out")"
  assert_eq "$got" "$want" "$name: the webhook's message (the API server's for a Deployment: $dep_out)"
}
same no-terms affinity '{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}'
same in-no-values affinity '{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In}]}]}}}'
same gt-two-values affinity '{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: [{key: mem, operator: Gt, values: ["1", "2"]}]}}]}}'
same exists-values affinity '{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchExpressions: [{key: app, operator: Exists, values: [a]}]}, topologyKey: zone}]}}'
same bad-topology-key affinity '{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {labelSelector: {matchLabels: {app: x}}, topologyKey: "a b"}}]}}'
same dotted-namespace affinity '{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, namespaces: [team.a]}]}}'
same zero-skew topologySpreadConstraints '[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]'
same min-domains-anyway topologySpreadConstraints '[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}]'
same duplicate-spread topologySpreadConstraints '[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]'
k -n "$ns" delete ms spread --wait=false >/dev/null
