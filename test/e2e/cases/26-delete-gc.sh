# Deletion with the real garbage collector and namespace controller
# (kube-controller-manager), for ModelServices whose pods are Ready:
# 1. kubectl delete ms: the finalizer orders it - the Deployment and the
#    Service are gone before the ModelService is; the garbage collector
#    removes what the controller never touches (ReplicaSets, pods,
#    EndpointSlices).
# 2. kubectl delete ms --cascade=foreground: the garbage collector itself
#    deletes the Deployment and Service through their ownerReferences
#    (blockOwnerDeletion) while the ModelService waits with both finalizers
#    (foregroundDeletion, modelops.dev/cleanup); then everything is gone.
# 3. The ownerReferences alone: with the controller stopped and the finalizer
#    taken off by hand, deleting the ModelService leaves the garbage collector
#    to delete the Deployment, Service, ReplicaSet and pods.
# 4. kubectl delete namespace with a Ready ModelService in it completes (the
#    namespace is gone, not stuck Terminating).
# timeout: 180
# logs: controller controller-manager
need_full_cluster
ns=e2e-gc
new_ns "$ns"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"; proc_alive controller || start_controller controller' EXIT

owned_left() {  # owned_left NAME: the kinds still present for that instance
  local out
  out="$(k -n "$ns" get deployments,services,rs,pods,endpointslices -l "app.kubernetes.io/instance=$1" -o name)"
  out+="$(k -n "$ns" get endpointslices -l "kubernetes.io/service-name=$1" -o name)"
  sed 's#/.*##' <<<"$out" | sort -u | tr '\n' ' '
}
nothing_of() { [[ -z "$(owned_left "$1" | tr -d ' ')" ]]; }

for n in gc-bg gc-fg gc-orphan; do ms_yaml "$n" 'model: m' 'image: registry.local/serve:1.4' 'replicas: 2'; echo ---; done \
  | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 60 gc-bg gc-fg gc-orphan
for n in gc-bg gc-fg gc-orphan; do
  wait_output 30 "$n has a Deployment, Service, ReplicaSet, pods, an EndpointSlice" \
    "deployment.apps endpointslice.discovery.k8s.io pod replicaset.apps service " owned_left "$n"
done

# 1. Background deletion: finalizer first.
api_watch "/apis/modelops.dev/v1/namespaces/$ns/modelservices" "$tmp/ms.watch"
k -n "$ns" delete ms gc-bg --wait=false >/dev/null
wait_for 30 "gc-bg gone" gone "$ns" ms gc-bg
gone "$ns" deployment gc-bg || fail "Deployment gc-bg outlived its ModelService"
gone "$ns" service gc-bg || fail "Service gc-bg outlived its ModelService"
wait_for 30 "gc-bg's ReplicaSet, pods and EndpointSlice garbage-collected" nothing_of gc-bg
log "ok: Deployment and Service deleted before the ModelService (finalizer), the rest by the garbage collector"

# 2. Foreground deletion: the garbage collector deletes the dependents first.
k -n "$ns" delete ms gc-fg --cascade=foreground --wait=false >/dev/null
wait_for 30 "gc-fg gone" gone "$ns" ms gc-fg
fins="$(jq -R -r 'fromjson? | select(.object.metadata.name == "gc-fg" and .object.metadata.deletionTimestamp != null) | .object.metadata.finalizers // [] | join(",")' "$tmp/ms.watch" | sort -u | tr '\n' ' ')"
log "finalizers of gc-fg while it was being deleted: $fins"
assert_contains "$fins" "foregroundDeletion" "gc-fg waited for the garbage collector"
wait_for 30 "gc-fg's objects all gone" nothing_of gc-fg

# 3. ownerReferences alone (no controller, no finalizer).
proc_stop controller TERM 15
k -n "$ns" patch ms gc-orphan --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
k -n "$ns" delete ms gc-orphan --wait=false >/dev/null
wait_for 30 "gc-orphan gone" gone "$ns" ms gc-orphan
wait_for 60 "the garbage collector deleted gc-orphan's Deployment, Service, ReplicaSet, pods, EndpointSlice" nothing_of gc-orphan
start_controller controller
wait_for 30 "controller leads again" is_leader controller

# 4. Namespace deletion completes.
ns2=e2e-gc-ns
new_ns "$ns2"
ms_yaml doomed 'model: m' 'image: registry.local/serve:1.4' 'replicas: 2' | k -n "$ns2" apply -f - >/dev/null
wait_ms_ready "$ns2" 60 doomed
k delete ns "$ns2" --wait=false >/dev/null
ns_gone() { local out; out="$(k get ns "$ns2" 2>&1)" && return 1; [[ "$out" == *NotFound* || "$out" == *"not found"* ]]; }
wait_for 90 "namespace $ns2 deleted (not stuck Terminating)" ns_gone
