# The pod contract on the real node (issue 43), in a namespace that enforces
# the restricted Pod Security Standard: an image whose last USER is root
# (the example server built with --user 0:0, as many published model-server
# images are) fails as the kubelet says ("image will run as root") until
# spec.securityContext.runAsUser gives it a user, then serves; a model cache
# on a PersistentVolume (hostPath on the node, claimed by a PVC) is mounted
# read-only at the path asked, from the sub-path asked; /dev/shm has the
# size asked and a scratch emptyDir is writable (the server reports each
# mount's size and mode: GET /statfs/PATH). Hand edits of the new parts of
# the pod template are put back, and once converged the controller writes
# nothing.
# timeout: 300
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-volumes
real_node_ns "$ns"
k label namespace "$ns" --overwrite pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null
tmp="$(mktemp -d)"
cache="$E2E_REAL_DIR/model-cache.$$"
cleanup() {
  k -n "$ns" delete ms cache --ignore-not-found --wait=false >/dev/null 2>&1 || true
  k -n "$ns" delete pvc model-cache --ignore-not-found --wait=false >/dev/null 2>&1 || true
  k delete pv "e2e-model-cache-$$" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp" "$cache"
}
trap cleanup EXIT

# The root image: the example server's binary, USER 0.
bin="$E2E_REAL_DIR/operator/model-server/model-server"
[[ -x "$bin" ]] || fail "no example server binary at $bin (test/e2e/operator/install.sh builds it)"
python3 "$E2E_ROOT/test/e2e/node/oci-image.py" --out "$tmp/root.tar" --name localhost/model-server-root:dev \
  --entrypoint /model-server --user 0:0 --port 8080 "$bin:/model-server" 2>/dev/null
"$E2E_ROOT/test/e2e/node/node.sh" import "$E2E_REAL_DIR" "$tmp/root.tar" 2>/dev/null || fail "importing the root image"

# The model cache: a directory of the node, a PersistentVolume, a claim.
mkdir -p "$cache/llama-3"
echo weights >"$cache/llama-3/model.safetensors"
chmod -R a+rX "$cache"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-model-cache-$$}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadOnlyMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: $cache, type: Directory}
  claimRef: {namespace: $ns, name: model-cache}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: model-cache, namespace: $ns}
spec:
  accessModes: [ReadOnlyMany]
  storageClassName: ""
  volumeName: e2e-model-cache-$$
  resources: {requests: {storage: 1Gi}}
YAML

real_node_ms cache 'image: localhost/model-server-root:dev' 'sharedMemorySize: 128Mi' \
  'volumes: [{name: models, mountPath: /models, subPath: llama-3, readOnly: true, persistentVolumeClaim: {claimName: model-cache}},
             {name: scratch, mountPath: /scratch, emptyDir: {sizeLimit: 64Mi}}]' | sed 's/  model: cache-model/  model: llama-3/' |
  k -n "$ns" apply -f - >/dev/null
why_not_running() { pods_of "$ns" cache '{.items[0].status.containerStatuses[0].state.waiting.message}'; }
wait_for 60 "the kubelet refuses the root image" eval '[[ "$(why_not_running)" == *"image will run as root"* ]]'
log "ok: $(why_not_running)"
assert_eq "$(jp ms/cache '{.status.readyReplicas}' -n "$ns")" 0 "cache: ready replicas with a root image"

k -n "$ns" patch ms cache --type merge -p '{"spec":{"securityContext":{"runAsUser":1000,"runAsGroup":1000}}}' >/dev/null
t0=$SECONDS
wait_ms_ready "$ns" 90 cache
log "cache Ready $(( SECONDS - t0 ))s after runAsUser was set"
model_pods() { pods_of "$ns" cache | grep -c . || true; }
wait_output 60 "the pod of the root image without a user gone" 1 model_pods
p="$(pods_of "$ns" cache '{.items[0].metadata.name}')"
assert_eq "$(k -n "$ns" get pod "$p" -o json | jq -c '.spec.securityContext')" \
  '{"runAsGroup":1000,"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}}' "the pod's securityContext"
proxy() { k get --raw "/api/v1/namespaces/$ns/pods/$p:8080/proxy$1"; }
assert_eq "$(proxy /statfs/models | jq -c '[.path, .readOnly]')" '["/models",true]' "/models: the claim, read-only"
assert_eq "$(proxy /statfs/models/model.safetensors | jq -r .path)" /models/model.safetensors "/models holds the sub-path llama-3"
assert_eq "$(proxy /statfs/dev/shm | jq -c '[.bytes, .readOnly]')" '[134217728,false]' "/dev/shm: 128Mi"
assert_eq "$(proxy /statfs/scratch | jq .readOnly)" false "/scratch: writable"

# Hand edits of the new parts are put back.
k -n "$ns" patch deployment cache --type json -p '[
  {"op": "replace", "path": "/spec/template/spec/containers/0/readinessProbe/httpGet/path", "value": "/x"},
  {"op": "remove", "path": "/spec/template/spec/containers/0/volumeMounts/0"},
  {"op": "replace", "path": "/spec/template/spec/securityContext/runAsUser", "value": 2000},
  {"op": "replace", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 5},
  {"op": "add", "path": "/spec/template/spec/runtimeClassName", "value": "gvisor"}]' >/dev/null
template() { k -n "$ns" get deployment cache -o json | jq -c '.spec.template.spec | [.containers[0].readinessProbe.httpGet.path,
  [.containers[0].volumeMounts[] | [.name, .mountPath, .subPath, .readOnly]], .securityContext.runAsUser,
  .terminationGracePeriodSeconds, .runtimeClassName]'; }
wait_output 20 "the pod template's new parts put back" \
  '["/healthz",[["models","/models","llama-3",true],["scratch","/scratch",null,null],["dshm","/dev/shm",null,null]],1000,30,null]' template
wait_ms_ready "$ns" 90 cache
assert_no_controller_writes 5 "once the repaired Deployment rolled out"
log "a root image under runAsUser, a read-only model cache, /dev/shm and scratch on the real node"
