# Leader election: two controllers with --leader-elect; exactly one reports
# leader_election_master_status 1. kill -9 of the leader: the other takes over
# (reconciles a new object) within 25 s. The killed one restarts as standby;
# SIGTERM to the leader: it releases the Lease and the standby, which
# watches the Lease, takes it within a second of the release (audit log) and
# reconciles within 4 s of the SIGTERM. Prints the takeover times.
# timeout: 150
# alone: true
# logs: controller controller-b
ns=e2e-failover
new_ns "$ns"
# The suite's controller leads (after a previous case it may have been restarted).
wait_for 30 "controller is the leader" is_leader controller
start_controller controller-b
sleep 3
is_leader controller-b && fail "controller-b leads while controller holds the Lease"
is_leader controller || fail "controller lost the lead when controller-b started"
log "ok: exactly one leader (controller); controller-b standby: $(metric "http://127.0.0.1:$CONTROLLER_B_METRICS_PORT/metrics" 'leader_election_master_status{name="modelservice-controller"}')"
holder="$(k -n modelservice-system get lease modelservice-controller -o 'jsonpath={.spec.holderIdentity}')"
log "Lease holder: $holder"

# 1. kill -9 the leader: takeover once the Lease has expired by the standby's
# own clock. The standby sees the last renewal up to one jittered retry late
# (2 s x 1.2) and then retries every 2.4 s at most, so it acquires at most
# 15 + 2.4 + 2.4 = 19.8 s after the kill; then its workers start and the
# reconcile and this case's polling add a second or two on a loaded machine.
# 25 s bounds the design's worst case (a 20 s bound failed at 20.9 s under
# load 10).
t0="$(now)"
proc_stop controller KILL 5
ms_yaml fo-1 'model: m' | k -n "$ns" apply -f - >/dev/null
wait_for 30 "controller-b reconciles fo-1 after the leader was killed" exists "$ns" deployment fo-1
t_kill="$(elapsed "$t0")"
is_leader controller-b || fail "controller-b reconciles but does not report leader_election_master_status 1"
assert_le "$t_kill" 25 "takeover after kill -9 (s)"
holder2="$(k -n modelservice-system get lease modelservice-controller -o 'jsonpath={.spec.holderIdentity}')"
[[ "$holder2" != "$holder" ]] || fail "Lease holder unchanged ($holder) after takeover"

# 2. restart the killed one (standby), SIGTERM the leader: release + takeover.
# The leader drains and releases the Lease (empty holder) as it exits, about
# 0.5 s; the standby watches the Lease (fieldSelector metadata.name) and tries
# as soon as it sees it released, not at its next jittered retry (2-4.4 s
# later); then the reconcile. The leader's exit may wait up to 2 s more for
# its last Events; 4 s bounds the whole on a loaded machine (with the
# retries alone it took up to 5 s).
start_controller controller
sleep 3
is_leader controller && fail "restarted controller leads while controller-b holds the Lease"
mark="$(audit_mark)"
t0="$(now)"
proc_stop controller-b TERM 10
log "controller-b exited $(elapsed "$t0")s after SIGTERM"
ms_yaml fo-2 'model: m' | k -n "$ns" apply -f - >/dev/null
wait_for 10 "controller reconciles fo-2 after the leader got SIGTERM" exists "$ns" deployment fo-2
t_term="$(elapsed "$t0")"
is_leader controller || fail "controller reconciles but does not report leader_election_master_status 1"
# The Lease's writes since the SIGTERM, "RECEIVED HOLDER": the release (no
# holder), then the standby's acquire, received less than a second later.
lease_writes="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r "$AUDIT_JQ_DEFS"'
  select(.stage == "ResponseComplete" and write and .objectRef.resource == "leases"
         and .objectRef.name == "modelservice-controller" and .responseStatus.code < 300)
  | "\(.requestReceivedTimestamp | ts) \(.requestObject.spec.holderIdentity // "")"')"
handover="$(awk 'NF == 1 && !r { r = $1; next } r && NF == 2 { printf "%.3f", $1 - r; exit }' <<<"$lease_writes")"
[[ -n "$handover" ]] || fail "no release followed by an acquire of the Lease in the audit log: $lease_writes"
awk -v h="$handover" 'BEGIN { exit !(h < 1.0) }' \
  || fail "the standby took the released Lease ${handover}s after the release (watching it: under 1 s)"
watches="$(jq -r 'select(.verb == "watch" and .objectRef.resource == "leases" and .objectRef.namespace == "modelservice-system")
  | .requestURI' "$E2E_AUDIT_LOG" | grep -cE 'fieldSelector=metadata.name(%3D|=)modelservice-controller' || true)"
[[ "$watches" -ge 1 ]] || fail "no watch of the Lease by field selector in the audit log"
assert_le "$t_term" 4 "takeover after SIGTERM (s)"
echo "TIMING failover: kill -9 -> new leader reconciled in ${t_kill}s; SIGTERM -> ${t_term}s (Lease taken ${handover}s after its release)" | tee -a "$E2E_WORK/timings.txt" >&2
k -n "$ns" delete ms fo-1 fo-2 --wait=false >/dev/null
