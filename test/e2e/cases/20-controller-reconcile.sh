# The controller turns a ModelService into a Deployment and a Service with the
# contract's fields, adds its finalizer, reports Ready once the Deployment's
# pods were scheduled and became Ready (kube-controller-manager, kube-scheduler
# and KWOK's fake GPU node: nobody patches a status by hand), follows
# spec.replicas, reverts hand edits of owned fields, keeps fields it does not
# own, and on delete removes the Deployment and the Service before the
# ModelService goes away (the garbage collector then removes the ReplicaSets
# and pods).
# timeout: 180
# logs: controller
need_full_cluster
ns=e2e-ctrl
new_ns "$ns"
name=bert
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# Every status the controller writes, in order (the phases it goes through).
api_watch "/apis/modelops.dev/v1/namespaces/$ns/modelservices" "$tmp/ms.watch"
ms_yaml "$name" 'model: bert-base-uncased' 'version: "3"' 'image: registry.local/serve:1.4' 'replicas: 2' \
  'port: 8081' 'gpus: 1' 'strategy:' '  type: RollingUpdate' '  rollingUpdate: {maxSurge: 1, maxUnavailable: 0}' \
  | k -n "$ns" apply -f - >/dev/null
uid="$(jp "ms/$name" '{.metadata.uid}' -n "$ns")"

wait_for 30 "Deployment $ns/$name created" exists "$ns" deployment "$name"
wait_for 30 "Service $ns/$name created" exists "$ns" service "$name"

# ---- Deployment fields
d="$(k -n "$ns" get deployment "$name" -o json)"
labels='{"app.kubernetes.io/instance":"bert","app.kubernetes.io/managed-by":"modelservice-controller","app.kubernetes.io/name":"modelservice"}'
owner="[{\"apiVersion\":\"modelops.dev/v1\",\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"ModelService\",\"name\":\"bert\",\"uid\":\"$uid\"}]"
assert_eq "$(jq -cS .metadata.labels <<<"$d")" "$labels" "Deployment labels"
assert_eq "$(jq -cS .metadata.ownerReferences <<<"$d")" "$owner" "Deployment ownerReferences"
assert_eq "$(jq -r .spec.replicas <<<"$d")" 2 "Deployment replicas"
assert_eq "$(jq -cS .spec.strategy <<<"$d")" '{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0},"type":"RollingUpdate"}' "Deployment strategy"
sel="$(jq -cS .spec.selector.matchLabels <<<"$d")"
[[ -n "$sel" && "$sel" != null ]] || fail "Deployment has no selector"
assert_eq "$(jq -c --argjson s "$sel" '.spec.template.metadata.labels | contains($s)' <<<"$d")" true "template labels match the selector"
assert_eq "$(jq -c '.spec.template.metadata.labels["app.kubernetes.io/instance"]' <<<"$d")" '"bert"' "template instance label"
assert_eq "$(jq -r '.spec.template.spec.containers | length' <<<"$d")" 1 "number of containers"
c="$(jq -c '.spec.template.spec.containers[0]' <<<"$d")"
assert_eq "$(jq -r .name <<<"$c")" model "container name"
assert_eq "$(jq -r .image <<<"$c")" registry.local/serve:1.4 "container image"
assert_eq "$(jq -cS '[.env[] | select(.name == "MODEL_NAME" or .name == "MODEL_VERSION")] | sort_by(.name)' <<<"$c")" \
  '[{"name":"MODEL_NAME","value":"bert-base-uncased"},{"name":"MODEL_VERSION","value":"3"}]' "container env"
assert_eq "$(jq -cS '[.ports[] | {name, containerPort}]' <<<"$c")" '[{"containerPort":8081,"name":"http"}]' "container ports"
assert_eq "$(jq -r '.resources.limits["nvidia.com/gpu"]' <<<"$c")" 1 "nvidia.com/gpu limit"
assert_eq "$(jq -cS '.readinessProbe.httpGet | {path, port}' <<<"$c")" '{"path":"/healthz","port":"http"}' "readiness probe"

# ---- Service fields
s="$(k -n "$ns" get service "$name" -o json)"
assert_eq "$(jq -cS .metadata.labels <<<"$s")" "$labels" "Service labels"
assert_eq "$(jq -cS .metadata.ownerReferences <<<"$s")" "$owner" "Service ownerReferences"
assert_eq "$(jq -r .spec.type <<<"$s")" ClusterIP "Service type"
assert_eq "$(jq -cS '[.spec.ports[] | {port, targetPort}]' <<<"$s")" '[{"port":8081,"targetPort":"http"}]' "Service ports"
assert_eq "$(jq -cS .spec.selector <<<"$s")" "$sel" "Service selector = Deployment selector"

# ---- finalizer, status
assert_contains "$(jp "ms/$name" '{.metadata.finalizers}' -n "$ns")" "modelops.dev/cleanup" "finalizers"
wait_output 20 "status.observedGeneration = 1" 1 jp "ms/$name" '{.status.observedGeneration}' -n "$ns"
assert_eq "$(jp "ms/$name" '{.status.url}' -n "$ns")" "http://bert.e2e-ctrl.svc:8081" "status.url"
assert_eq "$(jp "ms/$name" '{.status.desiredReplicas}' -n "$ns")" 2 "status.desiredReplicas"

wait_ms_ready "$ns" 60 "$name"
# The first status of generation 1 was written before any pod was Ready.
first="$(ms_states "$tmp/ms.watch" "$name" | awk '$3 == 1 { print $4; exit }')"
[[ "$first" == Pending || "$first" == Progressing ]] || fail "first phase of generation 1: expected Pending or Progressing, got '$first'"
log "ok: phases of generation 1: $(ms_states "$tmp/ms.watch" "$name" | awk '$3 == 1 { print $4 "/" $5 }' | uniq | tr '\n' ' ')"
# Two pods, scheduled on the GPU node (gpus: 1), Running and Ready.
assert_eq "$(pods_of "$ns" "$name" '{range .items[*]}{.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort | uniq -c | awk '{$1=$1; print}')" \
  "2 kwok-gpu-1 Running True" "pods (count node phase Ready)"
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r .status.readyReplicas <<<"$st")" 2 "status.readyReplicas"
assert_eq "$(jq -r .status.replicas <<<"$st")" 2 "status.replicas"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$st")" True "Ready condition"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .status' <<<"$st")" False "Degraded condition"
for t in Ready Progressing Degraded; do
  cond="$(jq -c --arg t "$t" '.status.conditions[] | select(.type == $t)' <<<"$st")"
  [[ -n "$cond" ]] || fail "no $t condition"
  for fld in status reason lastTransitionTime observedGeneration; do
    [[ "$(jq -r --arg f "$fld" '.[$f] // empty' <<<"$cond")" != "" ]] || fail "$t condition has no $fld: $cond"
  done
done
log "ok: conditions Ready/Progressing/Degraded carry status, reason, lastTransitionTime, observedGeneration"
# kstatus' abnormal-true conditions are absent once converged (status.md, "Health").
assert_eq "$(jq -r '[.status.conditions[] | select(.type == "Reconciling" or .type == "Stalled")] | length' <<<"$st")" 0 \
  "no Reconciling or Stalled condition once Ready"
health_verdict 04-ready <<<"$st"
row="$(k -n "$ns" get ms "$name" --no-headers | awk '{print $1, $2, $3, $4}')"
assert_eq "$row" "bert bert-base-uncased 2/2 Ready" "kubectl get ms row (NAME MODEL READY PHASE)"

# Events about the ModelService.
wait_for 15 "an Event about ModelService $name" bash -c \
  "'$KUBECTL' -n '$ns' get events -o json | jq -e '[.items[] | select(.involvedObject.kind == \"ModelService\" and .involvedObject.name == \"$name\")] | length > 0'"

# ---- scale up and down (3 x 1 GPU: the fleet has one node with 4)
k -n "$ns" patch ms "$name" --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
wait_for 20 "Deployment replicas follow spec.replicas=3" deploy_replicas_is "$ns" "$name" 3
wait_ms_ready "$ns" 60 "$name"
assert_eq "$(jp "ms/$name" '{.status.readyReplicas} {.status.desiredReplicas} {.status.observedGeneration}' -n "$ns")" "3 3 2" "readyReplicas desiredReplicas observedGeneration after scale-up"
# Generation 2 was first reported with 2 ready replicas, not Ready.
first="$(ms_states "$tmp/ms.watch" "$name" | awk '$3 == 2 { print $4 "/" $5; exit }')"
[[ "$first" != Ready/* ]] || fail "phase Ready right after scaling to 3 (first status of generation 2: $first)"
log "ok: phases of generation 2: $(ms_states "$tmp/ms.watch" "$name" | awk '$3 == 2 { print $4 "/" $5 }' | uniq | tr '\n' ' ')"
assert_eq "$(ms_row "$ns" "$name")" "bert bert-base-uncased 3/3 Ready" "kubectl get ms row after scale-up"
k -n "$ns" patch ms "$name" --type=merge -p '{"spec":{"replicas":1}}' >/dev/null
wait_for 20 "Deployment replicas follow spec.replicas=1" deploy_replicas_is "$ns" "$name" 1
wait_for 30 "one pod left" bash -c "[[ \$('$KUBECTL' -n '$ns' get pods -l app.kubernetes.io/instance=$name -o name | wc -l) == 1 ]]"
wait_ms_ready "$ns" 30 "$name"
assert_eq "$(jp "ms/$name" '{.status.replicas} {.status.readyReplicas}' -n "$ns")" "1 1" "status.replicas and readyReplicas at 1 replica"

# ---- hand edits: owned fields reverted, foreign fields kept
k -n "$ns" annotate deployment "$name" e2e.modelops.dev/note=keep-me >/dev/null
k -n "$ns" label deployment "$name" e2e.modelops.dev/team=qa >/dev/null
k -n "$ns" patch deployment "$name" --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil.example/hijack:1"}]' >/dev/null
wait_for 20 "hand-edited Deployment image put back" bash -c \
  "[[ \"\$('$KUBECTL' -n '$ns' get deployment '$name' -o 'jsonpath={.spec.template.spec.containers[0].image}')\" == registry.local/serve:1.4 ]]"
k -n "$ns" scale deployment "$name" --replicas=7 >/dev/null
wait_for 20 "hand-scaled Deployment put back to 1" deploy_replicas_is "$ns" "$name" 1
k -n "$ns" patch service "$name" --type=json -p '[{"op":"replace","path":"/spec/ports/0/port","value":9999}]' >/dev/null
wait_for 20 "hand-edited Service port put back" bash -c \
  "[[ \"\$('$KUBECTL' -n '$ns' get service '$name' -o 'jsonpath={.spec.ports[0].port}')\" == 8081 ]]"
sleep 2
assert_eq "$(jp "deployment/$name" '{.metadata.annotations.e2e\.modelops\.dev/note}' -n "$ns")" keep-me "hand-added annotation kept"
assert_eq "$(jp "deployment/$name" '{.metadata.labels.e2e\.modelops\.dev/team}' -n "$ns")" qa "hand-added label kept"
assert_eq "$(jp "deployment/$name" '{.spec.template.spec.containers[0].image}' -n "$ns")" registry.local/serve:1.4 "image still the desired one"

# ---- a spec change rolls into the Deployment
k -n "$ns" patch ms "$name" --type=merge -p '{"spec":{"image":"registry.local/serve:1.5","version":"4"}}' >/dev/null
wait_for 20 "new image in the Deployment" bash -c \
  "[[ \"\$('$KUBECTL' -n '$ns' get deployment '$name' -o 'jsonpath={.spec.template.spec.containers[0].image}')\" == registry.local/serve:1.5 ]]"
assert_eq "$(k -n "$ns" get deployment "$name" -o json | jq -r '.spec.template.spec.containers[0].env[] | select(.name == "MODEL_VERSION") | .value')" 4 "MODEL_VERSION after update"
wait_for 60 "rolled out: one Ready pod, on the new image" bash -c \
  "[[ \"\$('$KUBECTL' -n '$ns' get pods -l app.kubernetes.io/instance=$name -o 'jsonpath={range .items[*]}{.spec.containers[0].image} {.status.conditions[?(@.type==\"Ready\")].status};{end}')\" == 'registry.local/serve:1.5 True;' ]]"
wait_ms_ready "$ns" 30 "$name"
rs="$(k -n "$ns" get rs -l "app.kubernetes.io/instance=$name" -o name | sort)"
[[ -n "$rs" ]] || fail "no ReplicaSets for $name"

# ---- delete: owned objects go first, then the ModelService (held here,
# by a finalizer of the case's, to see what the tools say of a ModelService
# being deleted, then let go)
k -n "$ns" patch ms "$name" --type=json -p '[{"op":"add","path":"/metadata/finalizers/-","value":"e2e.modelops.dev/hold"}]' >/dev/null
k -n "$ns" delete ms "$name" --wait=false >/dev/null
wait_output 30 "the controller's cleanup done: only the case's finalizer left" e2e.modelops.dev/hold \
  jp "ms/$name" '{.metadata.finalizers[*]}' -n "$ns"
health_stage 10-being-deleted "$ns" "$name"
k -n "$ns" patch ms "$name" --type=json -p '[{"op":"remove","path":"/metadata/finalizers/0"}]' >/dev/null
wait_for 30 "ModelService $name gone" gone "$ns" ms "$name"
gone "$ns" deployment "$name" || fail "Deployment $name still exists after its ModelService is gone (no GC runs here: the finalizer flow must delete it)"
gone "$ns" service "$name" || fail "Service $name still exists after its ModelService is gone"
log "ok: Deployment and Service deleted before the ModelService disappeared"
# The controller deletes only what it owns; the garbage collector removes the
# ReplicaSets (owned by the Deployment) and their pods.
nothing_left() {
  [[ -z "$(k -n "$ns" get rs,pods,endpointslices -l "app.kubernetes.io/instance=$name" -o name)" ]] &&
    [[ -z "$(k -n "$ns" get endpointslices -l "kubernetes.io/service-name=$name" -o name)" ]]
}
wait_for 30 "ReplicaSets ($(tr '\n' ' ' <<<"$rs")), pods and EndpointSlices garbage-collected" nothing_left
