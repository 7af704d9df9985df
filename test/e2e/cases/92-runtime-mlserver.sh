# A real model server doing real inference on the real node (issue 43):
# MLServer 1.7.1 with its scikit-learn runtime (examples/mlserver: an iris
# classifier trained when the image is built, with buildah, cached by its
# inputs), whose image's last USER is root, as a ModelService with
# `runtime: MLServer` and `securityContext.runAsUser: 1000` in a namespace
# that enforces the restricted Pod Security Standard. It becomes Ready through
# MLServer's own readiness endpoint (the kubelet's probe of the preset); a V2
# inference request through the Service answers the right class; its
# metrics are on the port the pod's annotation names (8082), with the gauge
# the MLServer queue query reads, and a real Prometheus scraping the pod
# answers that query.
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
assert_eq "$(ms_row "$ns" iris)" "iris iris 1/1 Ready" "kubectl get ms iris"
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

# A real Prometheus scrapes it and the controller's MLServer query reads it.
# Prometheus runs on the host, where the node's Pod IPs cannot be reached
# (they live in the node's network namespace), so its target is the pod
# through the API server's pod proxy (the admin client certificate), with the
# labels the PodMonitor would give it.
pdir="$E2E_REAL_DIR/mlserver-prometheus"
mkdir -p "$pdir"
kc="$(k config view --raw -o json)"
jq -r '.users[0].user["client-certificate-data"]' <<<"$kc" | base64 -d >"$pdir/client.crt"
jq -r '.users[0].user["client-key-data"]' <<<"$kc" | base64 -d >"$pdir/client.key"
jq -r '.clusters[0].cluster["certificate-authority-data"]' <<<"$kc" | base64 -d >"$pdir/ca.crt"
pport="$(python3 "$E2E_ROOT/test/e2e/free-port.py")"
cat >"$pdir/prometheus.yml" <<YAML
global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
  - job_name: modelservice-models
    scheme: https
    metrics_path: /api/v1/namespaces/$ns/pods/$p:8082/proxy/metrics
    tls_config: {ca_file: $pdir/ca.crt, cert_file: $pdir/client.crt, key_file: $pdir/client.key}
    static_configs:
      - targets: ["127.0.0.1:$E2E_API_PORT"]
        labels: {namespace: $ns, modelservice: iris, pod: $p}
YAML
proc_start mlserver-prometheus "$PROMETHEUS_BIN" --config.file "$pdir/prometheus.yml" \
  --storage.tsdb.path "$pdir/data" --web.listen-address "127.0.0.1:$pport" --log.level warn
trap 'proc_stop mlserver-prometheus TERM 5 || true' EXIT
# The controller's default MLServer query (--prometheus-query-mlserver), for this object.
query='sum(rest_server_requests_in_progress{namespace="'"$ns"'",modelservice="iris"})'
promq() { curl -fsS --max-time 3 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" | jq -c '[.data.result[].value[1]]'; }
wait_output 60 "Prometheus: the MLServer queue query over the scraped pod" '["0"]' promq "$query"
assert_eq "$(promq 'up{job="modelservice-models",modelservice="iris"}')" '["1"]' "Prometheus: the pod's target is up"
assert_no_controller_writes 5 "once MLServer serves"
k -n "$ns" delete ms iris --wait=false >/dev/null
log "MLServer serves the iris model on the real node as uid 1000"
