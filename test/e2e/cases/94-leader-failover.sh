# Leader election between the two operator Pods: one controller holds the
# Lease modelservice-system/modelservice-controller (its identity is its Pod's
# name); deleting that Pod (the kubelet sends SIGTERM, the controller
# releases the Lease) hands over to the other Pod's controller within 10 s
# (design: under 6 s from the SIGTERM, the standby's next jittered retry at
# most 2.4 s after the release; plus the kubelet's stopping of the Pod),
# which then reconciles (the audit log names its Pod), and only
# it reports leader_election_master_status 1. The Deployment replaces the
# deleted Pod, whose controller stands by.
# timeout: 180
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-failover
new_ns "$ns"

master() { pod_get "$1" 8082 /metrics | awk '$1 == "leader_election_master_status{name=\"modelservice-controller\"}" { print $2 }'; }
wait_for 60 "a leader among the operator Pods" leader_pod
leader="$(leader_pod)"
mapfile -t pods < <(operator_pods)
assert_eq "${#pods[@]}" 2 "operator Pods"
other="${pods[0]}"; [[ "$other" == "$leader" ]] && other="${pods[1]}"
assert_eq "$(master "$leader") $(master "$other")" "1 0" "leader_election_master_status of $leader (leader) and $other"

t0="$(now)"
k -n "$OPERATOR_NS" delete pod "$leader" --wait=false >/dev/null
new_leader_is_other() { [[ "$(leader_pod)" == "$other" ]]; }
wait_for 30 "the Lease held by $other" new_leader_is_other
took="$(elapsed "$t0")"
assert_le "$took" 10 "seconds from deleting the leader's Pod to the Lease's new holder"
echo "TIMING real-node leader handover (Pod deleted) ${took}s" >>"$E2E_WORK/timings.txt"
wait_output 15 "leader_election_master_status 1 in $other" 1 master "$other"

mark="$(audit_mark)"
ms_yaml after-failover | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $ns/after-failover" exists "$ns" deployment after-failover
by="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" 'select(.stage == "ResponseComplete" and .verb == "create"
  and .objectRef.resource == "deployments" and .objectRef.namespace == $ns and .responseStatus.code == 201)
  | .user.extra["authentication.kubernetes.io/pod-name"][0]')"
assert_eq "$by" "$other" "the Pod whose controller created the Deployment (audit log)"

# The Deployment brings back a second Pod; its controller stands by.
two_ready() { [[ "$(operator_ready_count)" == 2 ]]; }
wait_for 90 "two operator Pods Ready again" two_ready
mapfile -t pods < <(operator_pods)
for p in "${pods[@]}"; do
  [[ "$p" == "$other" ]] && continue
  wait_output 30 "leader_election_master_status 0 in the new Pod $p" 0 master "$p"
done
assert_eq "$(leader_pod)" "$other" "the Lease's holder"
