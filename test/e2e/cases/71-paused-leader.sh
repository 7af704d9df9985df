# A paused leader writes nothing after it lost the Lease (issue 13 §1).
# Two controllers with --leader-elect, each with its own client certificate
# (user e2e:controller and e2e:controller-b in the audit log). `kill -STOP`
# the leader for 25 s (> the 15 s lease) while ModelServices change: the
# standby takes over and reconciles the changes; `kill -CONT` the old leader:
# its informers deliver the watch events buffered meanwhile, yet it must send
# no write (its writes stop at its renew deadline, by the monotonic clock) and
# exit 1. From the audit log: the old leader's writes received after its
# renew deadline (last successful renew + 10 s), after the standby's takeover
# and after SIGCONT are all 0; every change is reconciled, each Deployment and
# Service created exactly once.
# timeout: 240
# alone: true
# logs: controller controller-b
ns=e2e-paused
new_ns "$ns"
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
a=controller b=controller-b
ua="$(controller_user "$a")" ub="$(controller_user "$b")"
wait_for 30 "$a is the leader" is_leader "$a"
start_controller "$b"
mark="$(audit_mark)"

# Objects the leader reconciles before the pause.
for i in 1 2 3 4; do ms_yaml "p-$i" 'model: m' 'replicas: 1'; echo ---; done | k -n "$ns" apply -f - >/dev/null
for i in 1 2 3 4; do wait_for 30 "Deployment p-$i (by $a)" exists "$ns" deployment "p-$i"; done

pid="$(proc_pid "$a")" || fail "$a is not running"
trap 'kill -CONT "$pid" 2>/dev/null || true' EXIT
kill -STOP "$pid"
t_stop="$(now)"
log "SIGSTOP $a (pid $pid)"
# Changes while it is paused: its watch streams keep them in its sockets.
for i in 1 2 3 4; do k -n "$ns" patch ms "p-$i" --type=merge -p '{"spec":{"replicas":3}}' >/dev/null; done
for i in 5 6 7 8; do ms_yaml "p-$i" 'model: m' 'replicas: 2'; echo ---; done | k -n "$ns" apply -f - >/dev/null
# A spec the paused leader has not observed (generation 2, observedGeneration 1).
health_stage 02-spec-not-observed "$ns" p-1

wait_for 40 "$b takes over the Lease" is_leader "$b"
t_takeover="$(elapsed "$t_stop")"
for i in 1 2 3 4; do wait_for 30 "p-$i scaled to 3 (by $b)" deploy_replicas_is "$ns" "p-$i" 3; done
for i in 5 6 7 8; do wait_for 30 "Deployment p-$i (by $b)" deploy_replicas_is "$ns" "p-$i" 2; done
# One more change just before the old leader resumes.
k -n "$ns" patch ms p-1 --type=merge -p '{"spec":{"replicas":4}}' >/dev/null
rest="$(awk -v a="$t_stop" -v b="$(now)" 'BEGIN { d = 25 - (b - a); print (d > 0 ? d : 0) }')"
sleep "$rest"
t_cont="$(now)"
kill -CONT "$pid"
trap - EXIT
log "SIGCONT $a after $(awk -v a="$t_stop" -v b="$t_cont" 'BEGIN { printf "%.1f", b - a }')s (takeover after ${t_takeover}s)"
wait_for 20 "$a exits after resuming" bash -c "! kill -0 $pid 2>/dev/null"
grep -q "leadership lost" "$E2E_WORK/logs/$a.log" || fail "$a did not log the loss of leadership"
tail -n 5 "$E2E_WORK/logs/$a.log" | grep -q "stopped (exit code 1)" || fail "$a did not stop with exit code 1: $(tail -n 5 "$E2E_WORK/logs/$a.log")"
log "ok: $a exited with code 1"
wait_for 30 "p-1 scaled to 4 (by $b)" deploy_replicas_is "$ns" p-1 4
sleep 2  # let the audit log catch up with the last requests

# The audit log.
# Its last renewal before the pause (it may predate the mark: every 2 s).
last_renew="$(audit_lease_writes "$ua" 0 | awk -v s="$t_stop" '$1 <= s' | tail -n 1)"
[[ -n "$last_renew" ]] || fail "no Lease renewal by $ua in the audit log"
loss="$(awk -v r="$last_renew" 'BEGIN { printf "%.6f", r + 10 }')"
takeover="$(audit_lease_writes "$ub" "$mark" | head -n 1)"
[[ -n "$takeover" ]] || fail "no Lease write by $ub in the audit log"
log "audit: $ua last renewed at $last_renew (loss at the latest $loss); $ub took the Lease at $takeover"
assert_gt "$takeover" "$loss" "the takeover comes after the old leader's renew deadline"
after_loss="$(audit_writes_by "$ua" "$mark" "$loss")"
after_takeover="$(audit_writes_by "$ua" "$mark" "$takeover")"
after_cont="$(audit_writes_by "$ua" "$mark" "$t_cont")"
n_loss="$(grep -c . <<<"$after_loss" || true)"
n_takeover="$(grep -c . <<<"$after_takeover" || true)"
n_cont="$(grep -c . <<<"$after_cont" || true)"
[[ "$n_loss" == 0 ]] || echo "$ua writes after its loss:"$'\n'"$after_loss" >&2
before="$(audit_writes_by "$ua" "$mark" | grep -vc ' leases ' || true)"
log "audit: $ua wrote $before times (Lease excluded) before the loss"
assert_gt "$before" 0 "writes by $ua seen in the audit log (the user filter works)"
assert_eq "$n_loss" 0 "writes by $ua received after its renew deadline"
assert_eq "$n_takeover" 0 "writes by $ua received after $ub took over"
assert_eq "$n_cont" 0 "writes by $ua received after SIGCONT"

# Nothing lost: every object converged; nothing duplicated: one create each.
for i in 1 2 3 4 5 6 7 8; do
  gen="$(k -n "$ns" get ms "p-$i" -o 'jsonpath={.metadata.generation}')"
  wait_for 30 "p-$i status.observedGeneration = $gen" \
    bash -c "[[ \"\$($KUBECTL -n $ns get ms p-$i -o 'jsonpath={.status.observedGeneration}')\" == $gen ]]"
done
for r in deployments services; do
  creates="$(audit_creates "$ns" "$r" "$mark")"
  assert_eq "$(awk '{print $1}' <<<"$creates" | sort | tr '\n' ' ')" "p-1 p-2 p-3 p-4 p-5 p-6 p-7 p-8 " "$r created"
  assert_eq "$(awk '$2 != 1' <<<"$creates")" "" "$r created more than once"
done
echo "AUDIT paused-leader: writes by the old leader after its loss: $n_loss, after the takeover: $n_takeover, after SIGCONT: $n_cont (before the loss: $before); takeover ${t_takeover}s after SIGSTOP" \
  | tee -a "$E2E_WORK/timings.txt" >&2
proc_stop "$b" TERM 10
k -n "$ns" delete ms p-1 p-2 p-3 p-4 p-5 p-6 p-7 p-8 --wait=false >/dev/null
