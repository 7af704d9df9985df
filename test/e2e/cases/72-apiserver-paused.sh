# The API server stops answering for longer than the lease, in the middle of
# a burst of ModelService changes (issue 13 §1): SIGSTOP on kube-apiserver for
# 22 s, then SIGCONT. The leader cannot renew: each renew attempt ends at its
# renew deadline, its writes stop there, it aborts what is in flight and exits
# 1 without draining its queue. The standby (its own client certificate)
# takes over once the API server is back and reconciles everything. From the
# audit log: no write by the old leader received after the standby's
# takeover; what it had sent before its renew deadline and aborted there may
# sit in the paused server's sockets and be read at SIGCONT (the API server
# then races its own cancellation: such a write may fail with 504 or succeed,
# which is safe, since it was sent while the Lease was still the old
# leader's and is applied before the standby can take over): those are
# reported, must all be read at SIGCONT, and a Lease renewal among them must
# carry a renewTime from before the renew deadline (it was sent before the
# loss); every ModelService converges, each Deployment and Service created
# exactly once.
# timeout: 300
# alone: true
# logs: controller controller-b apiserver
ns=e2e-apipause
new_ns "$ns"
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
api_pid="$(<"$E2E_DIR/kube-apiserver.pid")"
kill -0 "$api_pid" 2>/dev/null || fail "kube-apiserver (pid $api_pid) is not running"
a=controller b=controller-b
ua="$(controller_user "$a")" ub="$(controller_user "$b")"
wait_for 30 "$a is the leader" is_leader "$a"
start_controller "$b"
a_pid="$(proc_pid "$a")" || fail "$a is not running"
mark="$(audit_mark)"
n=30

# The burst: creations then scale changes, from the background, while the API
# server is paused in its middle (kubectl waits; --request-timeout 30 s).
burst() {
  local i
  for (( i = 1; i <= n; i++ )); do ms_yaml "b-$i" 'model: m' 'replicas: 1' | k -n "$ns" apply -f - >/dev/null || true; done
  for (( i = 1; i <= n; i++ )); do k -n "$ns" patch ms "b-$i" --type=merge -p '{"spec":{"replicas":2}}' >/dev/null || true; done
}
burst &
burst_pid=$!
wait_for 30 "the burst under way (5 Deployments)" bash -c "(( \$($KUBECTL -n $ns get deploy -o name 2>/dev/null | wc -l) >= 5 ))"

trap 'kill -CONT "$api_pid" 2>/dev/null || true' EXIT
kill -STOP "$api_pid"
t_stop="$(now)"
log "SIGSTOP kube-apiserver (pid $api_pid)"
# The leader gives up at its renew deadline, while the API server is still paused.
wait_for 20 "$a exits while the API server is paused" bash -c "! kill -0 $a_pid 2>/dev/null"
t_exit="$(elapsed "$t_stop")"
sleep "$(awk -v a="$t_stop" -v b="$(now)" 'BEGIN { d = 22 - (b - a); print (d > 0 ? d : 0) }')"
kill -CONT "$api_pid"
trap - EXIT
t_cont="$(now)"
log "SIGCONT kube-apiserver after $(awk -v a="$t_stop" -v b="$t_cont" 'BEGIN { printf "%.1f", b - a }')s; $a exited ${t_exit}s after SIGSTOP"
tail -n 5 "$E2E_WORK/logs/$a.log" | grep -q "stopped (exit code 1)" || fail "$a did not stop with exit code 1: $(tail -n 5 "$E2E_WORK/logs/$a.log")"
log "ok: $a exited with code 1"

wait_for 60 "$b takes over" is_leader "$b"
wait "$burst_pid" || true
# Every change converges (the burst's patches may have been cut by the pause:
# apply the final state again, as a user would, before checking).
for (( i = 1; i <= n; i++ )); do ms_yaml "b-$i" 'model: m' 'replicas: 2'; echo ---; done | k -n "$ns" apply -f - >/dev/null
for (( i = 1; i <= n; i++ )); do wait_for 60 "b-$i at 2 replicas" deploy_replicas_is "$ns" "b-$i" 2; done
for (( i = 1; i <= n; i++ )); do
  gen="$(k -n "$ns" get ms "b-$i" -o 'jsonpath={.metadata.generation}')"
  wait_for 30 "b-$i status.observedGeneration = $gen" \
    bash -c "[[ \"\$($KUBECTL -n $ns get ms b-$i -o 'jsonpath={.status.observedGeneration}')\" == $gen ]]"
done
sleep 2

# Its last renewal before the pause (it may predate the mark: every 2 s).
last_renew="$(audit_lease_writes "$ua" 0 | awk -v s="$t_stop" '$1 <= s' | tail -n 1)"
[[ -n "$last_renew" ]] || fail "no Lease renewal by $ua in the audit log"
loss="$(awk -v r="$last_renew" 'BEGIN { printf "%.6f", r + 10 }')"
takeover="$(audit_lease_writes "$ub" "$mark" | head -n 1)"
[[ -n "$takeover" ]] || fail "no Lease write by $ub in the audit log"
log "audit: $ua last renewed at $last_renew (loss at the latest $loss); SIGSTOP at $t_stop, SIGCONT at $t_cont; $ub took the Lease at $takeover"
after_takeover="$(audit_writes_by "$ua" "$mark" "$takeover")"
n_takeover="$(grep -c . <<<"$after_takeover" || true)"
[[ "$n_takeover" == 0 ]] || echo "$ua writes after the takeover:"$'\n'"$after_takeover" >&2
# Received after the loss: only requests sent before it that the paused
# server read from its sockets at SIGCONT. The old leader aborted them at its
# renew deadline; the API server answers one whose client has gone with 504
# (context canceled) unless it finished first.
after_loss="$(audit_writes_by "$ua" "$mark" "$loss")"
n_loss="$(grep -c . <<<"$after_loss" || true)"
[[ "$n_loss" == 0 ]] || echo "$ua writes received after its renew deadline (sent before it, read at SIGCONT):"$'\n'"$after_loss" >&2
late="$(awk -v c="$t_cont" '$1 > c + 2' <<<"$after_loss")"
renewals="$(audit_lease_renewals "$ua" "$mark" "$loss")"
[[ -z "$renewals" ]] || echo "$ua Lease writes received after its renew deadline (received, renewTime, code):"$'\n'"$renewals" >&2
stamped_late="$(awk -v l="$loss" '$2 == "-" || $2 > l' <<<"$renewals")"
codes="$(awk '{print $NF}' <<<"$after_loss" | sort | uniq -c | awk '{printf "%s%s x%s", sep, $2, $1; sep = ", "}')"
before="$(audit_writes_by "$ua" "$mark" | grep -vc ' leases ' || true)"
assert_gt "$before" 0 "writes by $ua seen in the audit log (the user filter works)"
assert_eq "$n_takeover" 0 "writes by $ua received after $ub took over"
assert_eq "$late" "" "writes by $ua received later than what the paused server had buffered at SIGCONT"
assert_eq "$stamped_late" "" "Lease writes by $ua received after its renew deadline and stamped after it"
# Nothing lost, nothing duplicated: every object exists, and none was
# created twice. A create the old leader sent before its deadline may have
# been applied although the audit log says 504: read at SIGCONT, or read
# before SIGSTOP and stuck mid-write in the paused server (its timeout
# answers 504 at SIGCONT while the handler finishes the write: the
# server's "post-timeout activity"). Such an object is there, and the new
# leader found it instead of creating it. Its receipt time says nothing
# about it, so every create of the old leader answered 504 is in doubt.
for r in deployments services; do
  creates="$(audit_creates "$ns" "$r" "$mark")"
  assert_eq "$(awk '$2 != 1' <<<"$creates")" "" "$r created more than once"
  in_doubt="$(audit_writes_by "$ua" "$mark" | awk -v r="$r" '$2 == "create" && $3 == r && $NF == 504' | wc -l | tr -d ' ')"
  assert_eq "$(k -n "$ns" get "$r" -o name | grep -c '/b-' || true)" "$n" "$r that exist"
  assert_le "$n" "$(( $(grep -c . <<<"$creates" || true) + in_doubt ))" "$r created (successful creates + the old leader's creates answered 504)"
done
echo "AUDIT apiserver-paused: writes by the old leader after the takeover: $n_takeover; received after its renew deadline: $n_loss, all read at SIGCONT (${codes:-none}); before: $before; old leader exited ${t_exit}s after SIGSTOP" \
  | tee -a "$E2E_WORK/timings.txt" >&2
proc_stop "$b" TERM 10
k -n "$ns" delete ms $(for (( i = 1; i <= n; i++ )); do printf 'b-%d ' "$i"; done) --wait=false >/dev/null
