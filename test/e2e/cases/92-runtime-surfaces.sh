# The runtimes' conventions on the real node (issue 43): a ModelService per
# runtime - vLLM, TGI, Triton - whose pods run the example server presenting
# that server's surface (examples/model-server --runtime: its port, health
# paths and metric names; no GPU here), in a namespace that enforces the
# restricted Pod Security Standard. The pod template is the runtime preset's
# (args, variables, ports, probes, /dev/shm) and the kubelet runs its probes
# for real: each ModelService becomes Ready through its runtime's own
# readiness path; vLLM's pod takes 90 s to "load its model" and its startup
# probe holds it without a restart (the liveness probe waits for it); each
# server exports its queue gauge where the pod's metrics annotations say
# (Triton on its second port), and /dev/shm has the runtime's size.
# timeout: 300
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-runtimes
real_node_ns "$ns"
k label namespace "$ns" --overwrite pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null
env_of() { printf "env: [{name: MODEL_SERVER_RUNTIME, value: %s}%s]" "$1" "${2:+, $2}"; }
{
  real_node_ms llm 'runtime: vLLM' "$(env_of vLLM '{name: MODEL_SERVER_LOAD_SECONDS, value: "90"}')" 'sharedMemorySize: 256Mi'
  echo ---
  real_node_ms tgi 'runtime: TGI' "$(env_of TGI)"
  echo ---
  real_node_ms triton 'runtime: Triton' "$(env_of Triton)"
} | k -n "$ns" apply -f - >/dev/null
t0=$SECONDS
wait_ms_ready "$ns" 60 tgi triton
log "tgi and triton Ready after $(( SECONDS - t0 ))s"
assert_eq "$(pods_of "$ns" llm '{.items[0].status.containerStatuses[0].ready}')" false "llm's pod while its model loads"
wait_ms_ready "$ns" 150 llm
log "llm Ready after $(( SECONDS - t0 ))s (a 90 s load)"

# pod NAME: the one pod of ModelService NAME.
pod() { pods_of "$ns" "$1" '{.items[0].metadata.name}'; }
# proxy POD PORT PATH: GET through the API server's pod proxy.
proxy() { k get --raw "/api/v1/namespaces/$ns/pods/$1:$2/proxy$3"; }
for name in llm tgi triton; do
  p="$(pod "$name")"
  assert_eq "$(jp "pod/$p" '{.status.containerStatuses[0].ready} {.status.containerStatuses[0].restartCount}' -n "$ns")" \
    "true 0" "$name: ready, no restart"
done

# vLLM: --model=$(MODEL_NAME) --port=8000 expanded by the kubelet, GET /health,
# the startup probe that held the 90 s load.
p="$(pod llm)"
c="$(k -n "$ns" get pod "$p" -o json | jq -c '.spec.containers[0]')"
assert_eq "$(jq -c .args <<<"$c")" '["--model=$(MODEL_NAME)","--port=8000"]' "llm: args"
assert_eq "$(jq -c '[.ports[] | [.name, .containerPort]]' <<<"$c")" '[["http",8000]]' "llm: ports"
assert_eq "$(jq -c '[.startupProbe.httpGet.path, .startupProbe.failureThreshold, .readinessProbe.httpGet.path, .livenessProbe.httpGet.path]' <<<"$c")" \
  '["/health",180,"/health","/health"]' "llm: probes"
assert_contains "$(k -n "$ns" logs "$p" | head -n 1)" '"port":8000,"metricsPort":0,"runtime":"vLLM","loadSeconds":90,"concurrency":0,"drainSeconds":0,"model":"llm-model"' "llm: the server's first log line"
started="$(jp "pod/$p" '{.status.startTime}' -n "$ns")"
ready="$(k -n "$ns" get pod "$p" -o json | jq -r '.status.conditions[] | select(.type == "Ready") | .lastTransitionTime')"
loaded=$(( $(date -d "$ready" +%s) - $(date -d "$started" +%s) ))
(( loaded >= 90 )) || fail "llm: Ready ${loaded}s after its start, before the 90 s load was over"
log "ok: llm Ready ${loaded}s after its pod started, no restart"
assert_eq "$(proxy "$p" 8000 /health)" ok "llm: GET /health"
assert_contains "$(proxy "$p" 8000 /metrics)" $'\nvllm:num_requests_waiting{model_name="llm-model"} 0\n' "llm: vLLM's queue gauge"
assert_eq "$(proxy "$p" 8000 /statfs/dev/shm | jq -c '[.bytes, .readOnly]')" '[268435456,false]' "llm: /dev/shm of spec.sharedMemorySize (256Mi)"
assert_eq "$(jp "pod/$p" '{.metadata.annotations.modelops\.dev/metrics-port} {.metadata.annotations.modelops\.dev/metrics-path}' -n "$ns")" \
  "8000 /metrics" "llm: where its metrics are"

# TGI: MODEL_ID and PORT, GET /health, tgi_queue_size.
p="$(pod tgi)"
assert_eq "$(k -n "$ns" get pod "$p" -o json | jq -c '[.spec.containers[0].env[] | select(.name == "MODEL_ID" or .name == "PORT") | [.name, .value]]')" \
  '[["MODEL_ID","$(MODEL_NAME)"],["PORT","8080"]]' "tgi: the launcher's variables"
assert_eq "$(proxy "$p" 8080 /health)" ok "tgi: GET /health"
assert_contains "$(proxy "$p" 8080 /metrics)" $'\ntgi_queue_size 0\n' "tgi: TGI's queue gauge"
assert_eq "$(proxy "$p" 8080 /statfs/dev/shm | jq .bytes)" 1073741824 "tgi: /dev/shm of the runtime (1Gi)"

# Triton: tritonserver's arguments, the V2 health endpoints, metrics on 8002.
p="$(pod triton)"
assert_eq "$(k -n "$ns" get pod "$p" -o json | jq -c '.spec.containers[0].args')" \
  '["tritonserver","--model-repository=/models","--model-control-mode=explicit","--load-model=$(MODEL_NAME)","--http-port=8000"]' "triton: args"
assert_eq "$(proxy "$p" 8000 /v2/health/ready)" ok "triton: GET /v2/health/ready"
assert_eq "$(jp "pod/$p" '{.metadata.annotations.modelops\.dev/metrics-port}' -n "$ns")" 8002 "triton: metrics port annotation"
assert_contains "$(proxy "$p" 8002 /metrics)" $'\nnv_inference_pending_request_count{model="triton-model",version="1"} 0\n' "triton: Triton's queue gauge on 8002"

# Converged: nothing more is written.
assert_no_controller_writes 5 "once the three runtimes serve"
k -n "$ns" delete ms llm tgi triton --wait=false >/dev/null
log "vLLM, TGI and Triton surfaces served under their presets on the real node"
