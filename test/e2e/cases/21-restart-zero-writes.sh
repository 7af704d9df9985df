# A restart and a leader change cost no writes (issue 41, finding 8), here
# over the objects whose status depends on what the new process has not read
# yet: an autoscaled ModelService and one with GPUs, both converged while
# Prometheus is down (connection refused, the poller's circuit breaker open),
# and a plain one. (1) The controller is restarted (SIGTERM, started again:
# it leads again at once, the Lease released), (2) then it hands over to a
# standby (controller-b, caches warm, SIGTERM to the leader). Each time the
# new leader lists everything, reconciles every object while its poller has
# no answer yet, then again at each failed query, the breaker opening and
# its probe; over 10 s (5 autoscale intervals) it must write nothing in the
# namespace: no status, no Event (audit log, by user), and the
# ModelServices' resourceVersions stay. Before the fix each autoscaled
# object cost a status write when the first look (no answer yet) cleared
# Degraded, another when the first failure set it again, with a new
# MetricsUnavailable Warning, and one more when the breaker opened (its
# state was in the message).
# timeout: 180
# logs: controller controller-b prometheus
need_full_cluster
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
ns=e2e-restart
new_ns "$ns"
names=(r-plain r-auto r-gpu)
set_queue "$ns" r-auto 6
{
  ms_yaml r-plain 'model: m1'
  echo ---
  ms_yaml r-auto 'model: m2' 'autoscaling: {minReplicas: 1, maxReplicas: 3, targetQueueLength: 5}'
  echo ---
  ms_yaml r-gpu 'model: m3' 'image: registry.local/serve:1.4' 'gpus: 1'
} | k -n "$ns" apply -f - >/dev/null
wait_for 60 "r-auto scaled to 2 (L=6, T=5)" deploy_replicas_is "$ns" r-auto 2
wait_ms_ready "$ns" 60 "${names[@]}"

breaker_open() {  # breaker_open CONTROLLER: its modelservice_autoscaler_circuit_breaker_open is 1
  [[ "$(metric "http://127.0.0.1:$(controller_ports "$1" | awk '{print $1}')/metrics" \
    modelservice_autoscaler_circuit_breaker_open)" == 1 ]]
}
degraded() { k -n "$ns" get ms "$1" -o json | jq -r '.status.conditions[]? | select(.type == "Degraded") | "\(.status) \(.reason)"'; }
gpu_message() { k -n "$ns" get ms r-gpu -o 'jsonpath={.status.gpuUtilizationMessage}'; }
versions() { k -n "$ns" get ms -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'; }
# writes_in_ns USER MARK: the write requests of USER in $ns after audit line MARK.
writes_in_ns() { audit_writes_by "$(controller_user "$1")" "$2" | awk -v ns="$ns/" 'index($4, ns) == 1 { $1 = ""; print }'; }

# Prometheus down: connection refused on its port.
proc_stop prometheus TERM 10
metrics_unavailable() { [[ "$(degraded r-auto)" == "True MetricsUnavailable" ]]; }
gpu_unreadable() { [[ -n "$(gpu_message)" ]]; }
wait_for 30 "r-auto Degraded / MetricsUnavailable (no value for 3 intervals)" metrics_unavailable
wait_for 30 "r-gpu says why its GPU utilization cannot be read" gpu_unreadable
wait_for 30 "the circuit breaker open" breaker_open controller
sleep 4  # two intervals: the probe fails, nothing changes
log "before: r-auto $(degraded r-auto): $(k -n "$ns" get ms r-auto -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .message')"
log "before: r-gpu: $(gpu_message)"
before="$(versions)"

# assert_quiet WHO MARK WHAT: WHO, leading since MARK, made no write in $ns.
assert_quiet() {
  local who="$1" mark="$2" what="$3" writes n
  wait_for 30 "$who's circuit breaker open (its poller ran its queries)" breaker_open "$who"
  sleep 10  # 5 autoscale intervals: resyncs, the breaker's probe and back-off
  writes="$(writes_in_ns "$who" "$mark")"
  n="$(grep -c . <<<"$writes" || true)"
  (( n == 0 )) || echo "writes of $who in $ns after $what:"$'\n'"$(sort <<<"$writes" | uniq -c)" >&2
  assert_eq "$n" 0 "write requests of $who in $ns after $what"
  assert_eq "$(versions)" "$before" "the ModelServices' resourceVersions after $what"
}

# 1. A restart.
mark="$(audit_mark)"
proc_stop controller TERM 10
start_controller controller
wait_for 30 "the restarted controller leads" is_leader controller
assert_quiet controller "$mark" "a restart"
log "r-auto after the restart: $(degraded r-auto); r-gpu: $(gpu_message)"

# 2. A leader change: a standby with warm caches takes over.
start_controller controller-b
wait_for 30 "controller-b's caches synced" http_ok "http://127.0.0.1:$CONTROLLER_B_PROBE_PORT/readyz"
mark="$(audit_mark)"
proc_stop controller TERM 10
wait_for 15 "controller-b leads" is_leader controller-b
assert_quiet controller-b "$mark" "a leader change"
assert_eq "$(degraded r-auto)" "True MetricsUnavailable" "r-auto's Degraded condition"

# The suite's controller leads again; Prometheus back.
start_controller controller
proc_stop controller-b TERM 10
wait_for 15 "controller leads again" is_leader controller
start_prometheus
k -n "$ns" delete ms "${names[@]}" --wait=false >/dev/null
