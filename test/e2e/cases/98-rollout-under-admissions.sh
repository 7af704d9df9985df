# Rolling the operator's Deployment while users write ModelServices: no
# admission fails. Two `kubectl rollout restart`s replace both Pods twice
# (maxSurge 1, maxUnavailable 0: a new Pod is Ready before an old one is
# deleted) while three loops send server-side dry-run creates through the
# API server without pause. An old Pod's webhook gets SIGTERM as its endpoint
# is being taken out of the Service; until the API server has seen that, it
# may still send admissions there. With the chart's --shutdown-delay (10 s)
# the webhook goes on answering them, not ready, and each answer closes its
# connection; it then stops (its log says so, and that it stopped cleanly).
# Without the delay this case fails (webhook.shutdownDelaySeconds=0: 1 of
# 128 and 1 of 124 admissions failed, "failed calling webhook ... Post
# .../mutate?timeout=5s": EOF, a request sent on a connection the stopping
# webhook closed).
# The API server's audit log agrees: every dry-run create the loops sent got
# 201, none another code.
# timeout: 300
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-rollout
new_ns "$ns"
tmp="$(mktemp -d)"
trap 'touch "$tmp/stop"; wait; rm -rf "$tmp"' EXIT
mark="$(audit_mark)"

# Admissions in three loops without pause until $tmp/stop, each loop's
# "sent failed" in $tmp/result.N.
for i in 1 2 3; do admission_loop "$ns" "l$i" "$tmp/stop" "$tmp/result.$i" & done

# follow POD: POD's webhook log into $tmp/POD.log until the container ends
# (in the background; its PID appended to followers).
declare -a followers=()
follow() { k -n "$OPERATOR_NS" logs -f "$1" -c webhook >"$tmp/$1.log" 2>&1 & followers+=($!); }
two_new() { [[ "$(operator_ready_count)" == 2 && "$(operator_pods | grep -c .)" == 2 ]]; }
declare -a old=()
t0="$(now)"
for round in 1 2; do
  mapfile -t pods < <(operator_pods)
  assert_eq "${#pods[@]}" 2 "operator Pods before rollout $round"
  for p in "${pods[@]}"; do follow "$p"; old+=("$p"); done
  k -n "$OPERATOR_NS" rollout restart deployment/modelservice >/dev/null
  k -n "$OPERATOR_NS" rollout status deployment/modelservice --timeout=150s >/dev/null || fail "rollout $round did not finish"
  wait_for 60 "two operator Pods of rollout $round Ready, the old ones gone" two_new
done
took="$(elapsed "$t0")"
echo "TIMING real-node two rollouts of the operator under admissions ${took}s" >>"$E2E_WORK/timings.txt"

touch "$tmp/stop"
for i in 1 2 3; do wait_for 30 "admission loop $i to end" test -s "$tmp/result.$i"; done
wait "${followers[@]}"  # the old Pods are gone: their logs have ended
read -r n failed < <(cat "$tmp"/result.* | awk '{ n += $1; f += $2 } END { print n, f }')
log "$n admissions during two rollouts (${took}s), $failed failed"
assert_gt "$n" 100 "admissions sent during the two rollouts"
assert_eq "$failed" 0 "admissions that failed during the two rollouts (of $n)"

# The API server's view: every dry-run create of the loops, and only 201s.
codes() {
  tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" '
    select(.stage == "ResponseComplete" and .verb == "create" and .objectRef.resource == "modelservices"
           and .objectRef.namespace == $ns) | .responseStatus.code' | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }'
}
wait_output 10 "the audit log's codes of the dry-run creates" "201:$n " codes

# Each old Pod's webhook: SIGTERM, the delay, then a clean stop.
for p in "${old[@]}"; do
  msgs="$(jq -R -r 'fromjson? | .msg // empty' "$tmp/$p.log")"
  assert_eq "$(grep -E -x 'received signal 15: not ready; serving admission for 10s more \(--shutdown-delay\)|shutdown delay over: finishing requests in flight and shutting down|stopped' <<<"$msgs")" \
    "received signal 15: not ready; serving admission for 10s more (--shutdown-delay)
shutdown delay over: finishing requests in flight and shutting down
stopped" "$p's webhook: its last log lines (all: $(tail -n 5 "$tmp/$p.log"))"
done
