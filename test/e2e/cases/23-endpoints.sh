# A ModelService's Service gets EndpointSlices for its Ready pods (the real
# EndpointSlice controller): 3 replicas -> the slice labelled
# kubernetes.io/service-name=NAME lists exactly the 3 pods' IPs, ready, port
# "http" 8081; scaled to 1 -> one endpoint. A ModelService on an image whose
# pods never become ready -> its endpoints are listed but not ready, and
# `kubectl get ms` shows READY 0, PHASE Progressing.
# timeout: 120
# logs: controller controller-manager kwok
need_full_cluster
ns=e2e-endpoints
new_ns "$ns"
ms_yaml web 'model: m' 'image: registry.local/serve:1.4' 'replicas: 3' 'port: 8081' | k -n "$ns" apply -f - >/dev/null
ms_yaml broken 'model: m' 'image: registry.local/serve:never-ready' 'replicas: 2' | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 60 web

# slice NAME: "IP ready=BOOL" per endpoint of the Service's slices, sorted, then the ports.
slice() {
  k -n "$ns" get endpointslices -l "kubernetes.io/service-name=$1" -o json | jq -r '
    ([.items[].endpoints[]? | "\(.addresses[0]) ready=\(.conditions.ready)"] | sort | join(",")) + " ports=" +
    ([.items[].ports[]? | "\(.name)/\(.port)/\(.protocol)"] | unique | join(","))'
}
pod_ips() {  # pod_ips NAME: "IP ready=true" for each Ready pod, as slice prints them
  pods_of "$ns" "$1" '{range .items[*]}{.status.podIP} ready={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
    | sed 's/ready=True/ready=true/; s/ready=False/ready=false/' | sort | paste -sd, -
}
ips="$(pod_ips web)"
[[ "$(tr ',' '\n' <<<"$ips" | grep -c 'ready=true')" == 3 ]] || fail "expected 3 Ready pods with IPs, got: $ips"
wait_output 30 "EndpointSlice of web lists the 3 Ready pods" "$ips ports=http/8081/TCP" slice web
log "web's EndpointSlice: $(slice web)"
assert_eq "$(k -n "$ns" get endpointslices -l kubernetes.io/service-name=web -o jsonpath='{.items[*].metadata.ownerReferences[0].kind}/{.items[*].metadata.ownerReferences[0].name}')" \
  "Service/web" "EndpointSlice owner"

# Scale down: the slice follows.
k -n "$ns" patch ms web --type=merge -p '{"spec":{"replicas":1}}' >/dev/null
wait_for 30 "one pod left" bash -c "[[ \$('$KUBECTL' -n '$ns' get pods -l app.kubernetes.io/instance=web -o name | wc -l) == 1 ]]"
ips="$(pod_ips web)"
wait_output 30 "EndpointSlice of web lists the one remaining pod" "$ips ports=http/8081/TCP" slice web

# Never-ready pods: listed, not ready; the ModelService is not Ready.
wait_output 30 "broken's 2 pods Running, not Ready" "Running/False Running/False " pods_of "$ns" broken '{range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status} {end}'
ips="$(pod_ips broken)"
wait_output 30 "EndpointSlice of broken lists 2 endpoints, not ready" "$ips ports=http/8080/TCP" slice broken
assert_eq "$(tr ',' '\n' <<<"$ips" | grep -c 'ready=false')" 2 "not-ready endpoints of broken"
assert_eq "$(ms_row "$ns" broken)" "broken m 0/2 Progressing" "kubectl get ms broken"
health_stage 01-created "$ns" broken
k -n "$ns" delete ms web broken --wait=false >/dev/null
