# The controller's readiness never takes the webhook out of its Service
# (design, issue 19). Both programs share one Pod, and a Pod is Ready only
# when all its containers are, so the controller container has no readiness
# probe (manifests/deployment.yaml says why). Here every operator Pod loses
# its way to the API server (10.0.0.1:443, the `kubernetes` Service, is
# dropped in the real node's network namespace; the kubelet keeps its own
# path): the leader cannot renew and exits at its renew deadline, its
# container restarts and its informers never sync. Meanwhile the Pods stay
# Ready, both stay in the webhook Service's endpoints, and every ModelService
# write still passes the webhooks (defaulted, allowed), while no Deployment
# appears (the controllers really are cut off). Once the path is back, the
# controller reconciles them.
# timeout: 240
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-partition
new_ns "$ns"
rule=(INPUT -s "$E2E_POD_CIDR" -d 10.0.0.1/32 -p tcp --dport 443 -j DROP)
unblock() { node_exec iptables -D "${rule[@]}" 2>/dev/null || true; }
trap unblock EXIT

two_ready() { [[ "$(operator_ready_count)" == 2 ]]; }
wait_for 60 "two operator Pods Ready" two_ready
wait_for 60 "a leader among the operator Pods" leader_pod
leader="$(leader_pod)"
ips="$(webhook_endpoints)"
assert_eq "$(wc -w <<<"$ips")" 2 "ready webhook endpoints before"
restarts_before="$(container_restarts "$leader" controller)"

node_exec iptables -I "${rule[@]}"
log "the operator Pods cannot reach the API server (iptables ${rule[*]} in the node's namespace)"
t0="$(now)"
restarted() { [[ "$(container_restarts "$leader" controller)" -gt "$restarts_before" ]]; }
wait_for 60 "the leader's controller exits (renew deadline) and restarts" restarted
log "the leader's controller restarted $(elapsed "$t0")s after the cut"

# For 20 s (four periods of the webhook's readiness probe), ModelService
# writes pass the webhooks, and the Pods stay Ready and in the endpoints.
i=0
deadline=$(( $(date +%s) + 20 ))
while (( $(date +%s) < deadline )); do
  i=$(( i + 1 ))
  out="$(ms_yaml "w-$i" "model: m-$i" | k -n "$ns" create -f - -o 'jsonpath={.spec.replicas} {.spec.strategy.type}' 2>&1)" \
    || fail "creating ModelService w-$i while the controllers are cut off: $out"
  assert_eq "$out" "1 RollingUpdate" "ModelService w-$i created and defaulted by the webhook"
  sleep 2
done
assert_eq "$(operator_ready_count)" 2 "operator Pods Ready after 20 s without the API server"
assert_eq "$(webhook_endpoints)" "$ips" "ready webhook endpoints after 20 s without the API server"
for (( j = 1; j <= i; j++ )); do
  gone "$ns" deployment "w-$j" || fail "Deployment w-$j exists: the controllers were not cut off"
done
log "ok: $i ModelServices admitted while no controller reached the API server; no Deployment made"

unblock
log "the path to the API server is back"
for (( j = 1; j <= i; j++ )); do
  wait_for 90 "Deployment $ns/w-$j (the controller reconciles again)" exists "$ns" deployment "w-$j"
done
