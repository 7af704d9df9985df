# Autoscaling by queue length (design.md §3, issue 5). The controller runs with
# --prometheus-url (our Prometheus), --autoscale-interval 2s and
# --scale-down-stabilization 10s; the queue exporter's value L reaches
# Prometheus within ~1 s. With minReplicas 1, maxReplicas 10, target 5:
#   L=23 -> 5 replicas (ceil(23/5)) promptly;
#   L=0  -> still 5 during the 10 s window, then 1;
#   L=12 -> 3; Prometheus stopped -> replicas stay 3 and the ModelService's
#   Degraded condition is True with reason MetricsUnavailable; Prometheus back
#   -> Degraded False again.
# timeout: 180
# logs: controller prometheus queue-exporter
ns=e2e-autoscale
name=chat
new_ns "$ns"
trap 'proc_alive prometheus || start_prometheus' EXIT
set_queue "$ns" "$name" 0
ms_yaml "$name" 'model: gpt2' 'image: registry.local/serve:1.4' 'replicas: 1' \
  'autoscaling: {minReplicas: 1, maxReplicas: 10, targetQueueLength: 5}' | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $name" exists "$ns" deployment "$name"
wait_for 15 "Deployment at 1 replica with L=0" deploy_replicas_is "$ns" "$name" 1

degraded() {  # degraded STATUS [REASON]
  local c
  c="$(k -n "$ns" get ms "$name" -o json | jq -c '.status.conditions[]? | select(.type == "Degraded")')"
  [[ "$(jq -r .status <<<"$c")" == "$1" ]] || return 1
  [[ -z "${2:-}" || "$(jq -r .reason <<<"$c")" == "$2" ]]
}

# Scale up: L=23 -> ceil(23/5) = 5.
t0="$(now)"
set_queue "$ns" "$name" 23
wait_for 15 "L=23: Deployment scaled to 5" deploy_replicas_is "$ns" "$name" 5
log "scale-up took $(elapsed "$t0")s"
assert_eq "$(jp "ms/$name" '{.status.desiredReplicas}' -n "$ns")" 5 "status.desiredReplicas"
if [[ "${E2E_CLUSTER_MODE:-full}" == full ]]; then wait_ms_ready "$ns" 60 "$name"; fi

# Scale down waits for the stabilization window (10 s), then goes to 1.
t0="$(now)"
set_queue "$ns" "$name" 0
while awk -v e="$(elapsed "$t0")" 'BEGIN { exit !(e < 8) }'; do
  r="$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")"
  [[ "$r" == 5 ]] || fail "L=0: replicas changed to $r only $(elapsed "$t0")s after the drop (stabilization window 10s)"
  sleep 0.5
done
log "ok: still 5 replicas 8 s after L dropped to 0"
wait_for 20 "L=0: Deployment scaled down to 1 after the window" deploy_replicas_is "$ns" "$name" 1
dt="$(elapsed "$t0")"
log "scale-down happened ${dt}s after L dropped"
assert_gt "$dt" 8 "scale-down not before the 10 s window (minus up to 2 s of scrape/evaluation lag)"

# Metrics unavailable: replicas stay, Degraded says why.
set_queue "$ns" "$name" 12
wait_for 15 "L=12: Deployment scaled to 3" deploy_replicas_is "$ns" "$name" 3
if [[ "${E2E_CLUSTER_MODE:-full}" == full ]]; then wait_ms_ready "$ns" 60 "$name"; fi
wait_for 15 "Degraded False while metrics are readable" degraded False
proc_stop prometheus TERM 10
t0="$(now)"
wait_for 20 "Degraded True with reason MetricsUnavailable" degraded True MetricsUnavailable
log "Degraded after $(elapsed "$t0")s; message: $(k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .message')"
sleep 5
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 3 "replicas while Prometheus is down"
assert_eq "$(jp "ms/$name" '{.status.phase}' -n "$ns")" Degraded "phase while metrics are unavailable"
start_prometheus
wait_for 30 "Degraded False again once Prometheus is back" degraded False
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 3 "replicas after Prometheus is back"

# A hand scale of an autoscaled Deployment is put back to the autoscaler's value.
k -n "$ns" scale deployment "$name" --replicas=8 >/dev/null
wait_for 15 "hand-scaled autoscaled Deployment put back to 3" deploy_replicas_is "$ns" "$name" 3
k -n "$ns" delete ms "$name" --wait=false >/dev/null
