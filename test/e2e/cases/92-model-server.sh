# The controller Pod reconciles, and a ModelService really serves: a
# ModelService whose pods run the example model server (examples/model-server,
# its image imported into the real node) on the real node (its namespace's
# annotations send its Pods there, lib.sh's real_node_ns). The operator's
# controller (in its Pod, as its ServiceAccount) creates the Deployment and
# the Service; kube-scheduler binds the pods to the real node; the kubelet
# runs them and their readiness probe (GET /healthz on the port named http)
# really passes, so the ModelService is Ready with READY 2. The server
# answers, through the API server's service and pod proxies, with the model
# name and version the controller put in its environment, and exports
# modelservice_queue_length.
# timeout: 180
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-serve
real_node_ns "$ns"
mark="$(audit_mark)"

real_node_ms bert-qa 'version: "3"' 'replicas: 2' | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 90 bert-qa
assert_eq "$(ms_row "$ns" bert-qa)" "bert-qa bert-qa-model 2/2 Ready" "kubectl get ms bert-qa"

sa=system:serviceaccount:$OPERATOR_NS:modelservice-controller
creators="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" 'select(.stage == "ResponseComplete" and .verb == "create"
  and .objectRef.namespace == $ns and (.objectRef.resource == "deployments" or .objectRef.resource == "services")
  and .responseStatus.code == 201) | "\(.objectRef.resource) \(.user.username)"' | sort -u | tr '\n' ';')"
assert_eq "$creators" "deployments $sa;services $sa;" "who created the Deployment and the Service (audit log)"

mapfile -t pods < <(pods_of "$ns" bert-qa '{range .items[*]}{.metadata.name}{"\n"}{end}')
assert_eq "${#pods[@]}" 2 "model server pods"
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.spec.nodeName} {.status.containerStatuses[0].image} {.status.containerStatuses[0].ready} {.status.containerStatuses[0].restartCount}' -n "$ns")" \
    "$E2E_REAL_NODE localhost/model-server:dev true 0" "$p: node, image, ready, restarts"
  out="$(k get --raw "/api/v1/namespaces/$ns/pods/$p:8080/proxy/")"
  assert_eq "$out" "{\"model\":\"bert-qa-model\",\"version\":\"3\",\"pod\":\"$p\"}" "GET / of pod $p (pod proxy)"
done

# The Service the controller made, through the API server's service proxy.
port="$(jp svc/bert-qa '{.spec.ports[0].port}' -n "$ns")"
out="$(k create --raw "/api/v1/namespaces/$ns/services/bert-qa:$port/proxy/v1/predict" -f <(echo '{"input":"hello"}'))"
assert_contains "$out" '"model":"bert-qa-model","version":"3"' "POST /v1/predict through Service bert-qa"
assert_contains "$out" '"output":"ok"' "POST /v1/predict answer"
metrics="$(k get --raw "/api/v1/namespaces/$ns/services/bert-qa:$port/proxy/metrics")"
assert_contains "$metrics" $'\nmodelservice_queue_length 0\n' "/metrics through Service bert-qa"

# Scale down: a real container gets SIGTERM and the pod goes away.
k -n "$ns" scale ms bert-qa --replicas=1 >/dev/null
model_pods() { pods_of "$ns" bert-qa | grep -c . || true; }
wait_output 60 "one model server pod left" 1 model_pods
wait_ms_ready "$ns" 60 bert-qa
log "examples/model-server serves on the real node"

# --concurrency N queues the other predictions in arrival order, as a model
# server's request queue does (the autoscaling loop's requests must not wait
# past their turn): the binary the image holds, on loopback, one worker of
# 500 ms, six requests each sent once the one before it has arrived (queued,
# running or answered).
bin="$E2E_REAL_DIR/operator/model-server/model-server"
fport="$(free_port)"
proc_start fifo-model-server "$bin" --port "$fport" --delay-ms 500 --concurrency 1
wait_for 10 "the loopback model server answers" http_ok "http://127.0.0.1:$fport/healthz"
fifo="$E2E_WORK/92-model-server.fifo"
: >"$fifo"
arrived() { echo $(( $(metric "http://127.0.0.1:$fport/metrics" modelservice_queue_length) + $(grep -c . "$fifo") )); }
for i in 1 2 3 4 5 6; do
  { curl -fsS --max-time 20 -X POST -o /dev/null "http://127.0.0.1:$fport/v1/predict" && echo "$i" >>"$fifo"; } &
  wait_output 10 "prediction $i arrived" "$i" arrived
done
wait_output 20 "all six answered" 6 eval 'grep -c . "$fifo"'
assert_eq "$(tr '\n' ' ' <"$fifo")" "1 2 3 4 5 6 " "the order the predictions were answered in (arrival order)"
proc_stop fifo-model-server
