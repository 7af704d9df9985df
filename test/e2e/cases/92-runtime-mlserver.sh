# A real model server doing real inference on the real node (issue 43):
# MLServer 1.7.1 with its scikit-learn runtime (examples/mlserver: an iris
# classifier trained when the image is built, with buildah, cached by its
# inputs), whose image's last USER is root, as a ModelService with
# `runtime: MLServer` and `securityContext.runAsUser: 1000` in a namespace
# that enforces the restricted Pod Security Standard. It becomes Ready through
# MLServer's own readiness endpoint (the kubelet's probe of the preset); a V2
# inference request through the Service answers the right class; its
# metrics are on the port the pod's annotation names (8082), with the gauge
# the MLServer queue query reads.
# timeout: 300
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-mlserver
real_node_ns "$ns"
k label namespace "$ns" --overwrite pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null
t0=$SECONDS
archive="$("$E2E_ROOT/examples/mlserver/build.sh" --out "$E2E_REAL_DIR/mlserver" 2>"$E2E_REAL_DIR/mlserver-build.log")" \
  || fail "examples/mlserver/build.sh: $(tail -n 5 "$E2E_REAL_DIR/mlserver-build.log")"
log "MLServer image archive $(du -h "$archive" | cut -f1) in $(( SECONDS - t0 ))s"
t0=$SECONDS
"$E2E_ROOT/test/e2e/node/node.sh" import "$E2E_REAL_DIR" "$archive" 2>/dev/null || fail "importing $archive into the node"
log "imported into the node's containerd in $(( SECONDS - t0 ))s"

ms_yaml iris 'model: iris' 'version: "1"' 'image: localhost/mlserver-iris:dev' 'runtime: MLServer' \
  'securityContext: {runAsUser: 1000, runAsGroup: 1000}' | k -n "$ns" apply -f - >/dev/null
t0=$SECONDS
wait_ms_ready "$ns" 120 iris
log "iris Ready $(( SECONDS - t0 ))s after the apply"
assert_eq "$(ms_row "$ns" iris)" "iris iris 1 1 Ready" "kubectl get ms iris"
p="$(pods_of "$ns" iris '{.items[0].metadata.name}')"
c="$(k -n "$ns" get pod "$p" -o json | jq -c '.spec.containers[0]')"
assert_eq "$(jq -c '[.ports[] | [.name, .containerPort]]' <<<"$c")" '[["http",8080],["metrics",8082]]' "iris: ports"
assert_eq "$(jq -c '[.readinessProbe.httpGet.path, .startupProbe.httpGet.path, .livenessProbe.httpGet.path]' <<<"$c")" \
  '["/v2/health/ready","/v2/health/ready","/v2/health/live"]' "iris: probes"
assert_eq "$(jq -c '[.env[] | select(.name | startswith("MLSERVER_")) | [.name, .value]]' <<<"$c")" \
  '[["MLSERVER_MODEL_NAME","$(MODEL_NAME)"],["MLSERVER_MODEL_VERSION","$(MODEL_VERSION)"],["MLSERVER_METRICS_PORT","8082"],["MLSERVER_HTTP_PORT","8080"]]' \
  "iris: MLServer's variables"
assert_eq "$(jp "pod/$p" '{.status.containerStatuses[0].restartCount}' -n "$ns")" 0 "iris: restarts"

# V2 inference through the Service the controller made.
infer() {
  k create --raw "/api/v1/namespaces/$ns/services/iris:8080/proxy/v2/models/iris/infer" -f <(printf \
    '{"inputs":[{"name":"input-0","shape":[1,4],"datatype":"FP64","data":[[%s]]}]}' "$1")
}
out="$(infer 5.1,3.5,1.4,0.2)"
assert_eq "$(jq -c '[.model_name, .model_version, .outputs[0].name, .outputs[0].data]' <<<"$out")" '["iris","1","predict",[0]]' "setosa sample -> class 0"
assert_eq "$(infer 6.7,3.0,5.2,2.3 | jq -c .outputs[0].data)" '[2]' "virginica sample -> class 2"

# The metrics, where the pod's annotations say.
assert_eq "$(jp "pod/$p" '{.metadata.annotations.modelops\.dev/metrics-port} {.metadata.annotations.modelops\.dev/metrics-path}' -n "$ns")" \
  "8082 /metrics" "iris: where its metrics are"
metrics="$(k get --raw "/api/v1/namespaces/$ns/pods/$p:8082/proxy/metrics")"
assert_contains "$metrics" '# TYPE rest_server_requests_in_progress gauge' "iris: the queue gauge MLServer's query reads"
assert_contains "$metrics" 'model_infer_request_success_total{model="iris"' "iris: inferences counted"
assert_no_controller_writes 5 "once MLServer serves"
k -n "$ns" delete ms iris --wait=false >/dev/null
log "MLServer serves the iris model on the real node as uid 1000"
