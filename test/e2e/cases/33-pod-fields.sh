# Pod fields and hardened pods on a cluster that looks like a GPU cluster
# (issue 21): the GPU node kwok-gpu-1 is tainted
# nvidia.com/gpu=present:NoSchedule, as on GKE and EKS, and the namespace
# enforces the restricted Pod Security Standard.
#   - a gpus: 1 ModelService lands on the tainted GPU node (the controller
#     adds the toleration nvidia.com/gpu Exists NoSchedule); a CPU-only one
#     with 3 replicas never does;
#   - the namespace admits the pods (the API server's PodSecurity admission
#     refuses a plain pod there, so the check can fail);
#   - resources, env, args, tolerations, imagePullSecrets, nodeSelector,
#     priorityClassName (the API server's Priority admission gives the pod the
#     class's value), pod labels and annotations reach the pods; `kubectl
#     explain` shows spec.priorityClassName as the schema describes it;
#   - drift in owned fields of the Deployment's pod template is repaired, a
#     field the controller does not own survives, and once converged the
#     controller makes zero writes;
#   - a pod label that leaves the spec leaves the pods' template.
# timeout: 180
# logs: controller scheduler
need_full_cluster
ns=e2e-pod-fields
new_ns "$ns"
k label ns "$ns" pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/enforce-version=latest \
  --overwrite >/dev/null
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
# A PriorityClass for the GPU pods (preempting nothing: other cases share the cluster).
pclass=e2e-model-serving
trap 'k delete priorityclass "$pclass" --ignore-not-found >/dev/null 2>&1 || true' EXIT
k apply -f - >/dev/null <<EOF
{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "$pclass"},
 "value": 1000, "preemptionPolicy": "Never"}
EOF
gpu_pods() {
  k get pods -A -o json | jq '[.items[] | select(any(.spec.containers[]; .resources.limits["nvidia.com/gpu"] != null))] | length'
}
wait_output 60 "no GPU pods left from earlier cases" 0 gpu_pods
assert_eq "$(jp node/kwok-gpu-1 '{range .spec.taints[*]}{.key}={.value}:{.effect}{end}')" \
  "nvidia.com/gpu=present:NoSchedule" "the GPU node's taint"

# The namespace really enforces restricted: a plain pod is refused.
out="$(k -n "$ns" run plain --image=registry.local/serve:1.4 --restart=Never 2>&1)" && fail "a plain pod was admitted: $out"
assert_contains "$out" 'violates PodSecurity "restricted:latest"' "a plain pod in the restricted namespace"

{
  ms_yaml llm 'model: llama' 'version: "2"' 'image: registry.local/serve:1.4' 'gpus: 1' \
    'resources: {requests: {cpu: "0.5", memory: 1Gi}, limits: {memory: 2Gi}}' \
    'env: [{name: HF_HOME, value: /cache}, {name: TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token, optional: true}}}]' \
    'args: [--max-batch, "8"]' \
    'tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]' \
    'nodeSelector: {nvidia.com/gpu.present: "true"}' \
    'imagePullSecrets: [{name: regcred}]' "priorityClassName: $pclass" \
    'podLabels: {team: nlp}' 'podAnnotations: {prometheus.io/scrape: "true"}'
  echo ---
  ms_yaml cpu 'model: small' 'image: registry.local/serve:1.4' 'replicas: 3'
} | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment llm" exists "$ns" deployment llm
wait_ms_ready "$ns" 60 llm cpu

# ---- where the pods run
assert_eq "$(pods_of "$ns" llm '{range .items[*]}{.spec.nodeName}{"\n"}{end}')" kwok-gpu-1 "node of the gpus: 1 pod"
cpu_nodes="$(pods_of "$ns" cpu '{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort)"
assert_eq "$(grep -c . <<<"$cpu_nodes")" 3 "CPU-only pods scheduled"
assert_not_contains "$cpu_nodes" kwok-gpu "nodes of the CPU-only pods"
assert_eq "$(k -n "$ns" get events --field-selector reason=FailedCreate -o name | wc -l)" 0 "FailedCreate events (PodSecurity)"

# ---- what reached the pods
pod="$(k -n "$ns" get pods -l app.kubernetes.io/instance=llm -o json | jq -c '.items[0]')"
c="$(jq -c '.spec.containers[0]' <<<"$pod")"
# (the API server gives a pod the request of a limit without one: nvidia.com/gpu)
assert_eq "$(jq -cS .resources <<<"$c")" \
  '{"limits":{"memory":"2Gi","nvidia.com/gpu":"1"},"requests":{"cpu":"500m","memory":"1Gi","nvidia.com/gpu":"1"}}' \
  "pod resources"
assert_eq "$(jq -c '[.env[] | .name]' <<<"$c")" '["MODEL_NAME","MODEL_VERSION","HF_HOME","TOKEN"]' "pod env names"
assert_eq "$(jq -c '.env[2], .env[3].valueFrom' <<<"$c" | tr '\n' ' ')" \
  '{"name":"HF_HOME","value":"/cache"} {"secretKeyRef":{"key":"token","name":"hf","optional":true}} ' "pod env"
assert_eq "$(jq -c .args <<<"$c")" '["--max-batch","8"]' "pod args"
assert_eq "$(jq -cS .securityContext <<<"$c")" '{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}' \
  "container securityContext"
assert_eq "$(jq -cS .spec.securityContext <<<"$pod")" '{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}' \
  "pod securityContext"
assert_eq "$(jq -c .spec.automountServiceAccountToken <<<"$pod")" false "automountServiceAccountToken"
assert_eq "$(jq -c '[.spec.volumes[]?] | length' <<<"$pod")" 0 "volumes (no service-account token)"
assert_eq "$(jq -c '[.spec.tolerations[] | select(.key == "dedicated" or .key == "nvidia.com/gpu")] | sort_by(.key)' <<<"$pod")" \
  '[{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"ml"},{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}]' \
  "pod tolerations (the user's and the GPU one)"
assert_eq "$(jq -c .spec.imagePullSecrets <<<"$pod")" '[{"name":"regcred"}]' "pod imagePullSecrets"
assert_eq "$(jq -c .spec.nodeSelector <<<"$pod")" '{"nvidia.com/gpu.present":"true"}' "pod nodeSelector"
assert_eq "$(jq -c '[.spec.priorityClassName, .spec.priority, .spec.preemptionPolicy]' <<<"$pod")" \
  "[\"$pclass\",1000,\"Never\"]" "pod priorityClassName and the priority the API server resolved from it"
assert_eq "$(jq -r '.metadata.labels.team' <<<"$pod")" nlp "pod label team"
assert_eq "$(jq -r '.metadata.annotations["prometheus.io/scrape"]' <<<"$pod")" true "pod annotation"
# The CPU-only pods have no GPU toleration (and are hardened too).
cpod="$(k -n "$ns" get pods -l app.kubernetes.io/instance=cpu -o json | jq -c '.items[0]')"
assert_eq "$(jq -c '[.spec.tolerations[]? | select(.key == "nvidia.com/gpu")] | length' <<<"$cpod")" 0 "GPU tolerations of a CPU-only pod"
assert_eq "$(jq -r .spec.securityContext.runAsNonRoot <<<"$cpod")" true "CPU-only pod runAsNonRoot"
assert_eq "$(jq -c '[.spec.priorityClassName, .spec.priority]' <<<"$cpod")" '[null,0]' "CPU-only pod priority"

# ---- kubectl explain shows the field as the schema describes it (kubectl wraps the text)
explained="$(k explain modelservice.spec.priorityClassName | tr -s ' \n' ' ')"
assert_contains "$explained" "FIELD: priorityClassName <string>" "kubectl explain modelservice.spec.priorityClassName"
assert_contains "$explained" \
  "$(jq -r .properties.spec.properties.priorityClassName.description "$E2E_ROOT/shared/api/schema/modelservice.schema.json")" \
  "kubectl explain modelservice.spec.priorityClassName: the description"

# ---- drift in owned fields is repaired; a field not owned stays
k -n "$ns" patch deployment llm --type=json -p '[
  {"op": "remove", "path": "/spec/template/spec/tolerations"},
  {"op": "replace", "path": "/spec/template/spec/containers/0/env/2/value", "value": "/tmp"},
  {"op": "replace", "path": "/spec/template/spec/containers/0/resources/limits/memory", "value": "4Gi"},
  {"op": "remove", "path": "/spec/template/spec/imagePullSecrets"},
  {"op": "remove", "path": "/spec/template/spec/priorityClassName"},
  {"op": "replace", "path": "/spec/template/spec/securityContext/runAsNonRoot", "value": false},
  {"op": "add", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 45},
  {"op": "add", "path": "/spec/template/spec/enableServiceLinks", "value": false}]' >/dev/null
template() { k -n "$ns" get deployment llm -o json | jq -c '.spec.template.spec | [
  (.tolerations | map(.key) | sort), .containers[0].env[2].value, .containers[0].resources.limits.memory,
  .imagePullSecrets, .priorityClassName, .securityContext.runAsNonRoot, .terminationGracePeriodSeconds, .enableServiceLinks]'; }
# terminationGracePeriodSeconds is the spec's since issue 43 (default 30, the
# API server's); enableServiceLinks is nobody's: it stays.
wait_output 20 "owned fields of the pod template put back, enableServiceLinks kept" \
  "[[\"dedicated\",\"nvidia.com/gpu\"],\"/cache\",\"2Gi\",[{\"name\":\"regcred\"}],\"$pclass\",true,30,false]" template
wait_ms_ready "$ns" 60 llm
assert_no_controller_writes 5 "once the repaired Deployment rolled out"

# ---- a pod label that leaves the spec leaves the template; a spec change rolls the pods
k -n "$ns" patch ms llm --type=json -p '[{"op": "remove", "path": "/spec/podLabels"}]' >/dev/null
template_team() { k -n "$ns" get deployment llm -o json | jq -c '.spec.template.metadata.labels.team'; }
wait_output 20 "label team gone from the pod template" null template_team
pods_team() { pods_of "$ns" llm '{range .items[*]}{.metadata.labels.team}-{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'; }
wait_output 60 "the pods rolled: one Ready pod without the label" "-True" pods_team
k -n "$ns" delete ms llm cpu --wait=false >/dev/null
