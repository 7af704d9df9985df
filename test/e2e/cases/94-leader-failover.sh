# Leader election between the two operator Pods: one controller holds the
# Lease modelservice-system/modelservice-controller (its identity is its Pod's
# name); deleting that Pod (the kubelet sends SIGTERM, the controller
# releases the Lease) hands over to the other Pod's controller within 10 s
# (design: the standby watches the Lease, its watch allowed by the chart's
# Role, and takes it as soon as it is released; plus the kubelet's stopping
# of the Pod),
# which then reconciles (the audit log names its Pod), and only
# it reports leader_election_master_status 1. The Deployment replaces the
# deleted Pod, whose controller stands by. The new leader keeps the
# webhook's certificates (certificate mode self): the same CA in the Secret
# and in both caBundles, and it issued no CA of its own.
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

ca_before="$(operator_secret ca-current.crt | fingerprint)"
bundle_before="$(ca_bundle validatingwebhookconfiguration modelservice-validating | fingerprint)"
[[ -n "$ca_before" && "$bundle_before" == "$ca_before" ]] || fail "the Secret's CA ($ca_before) and the caBundle ($bundle_before) before the failover"

t0="$(now)"
k -n "$OPERATOR_NS" delete pod "$leader" --wait=false >/dev/null
# new_leader: the Lease is held by a Pod other than the deleted one that
# exists and is not being deleted.
new_leader() {
  local l; l="$(leader_pod)" || return 1
  [[ "$l" != "$leader" && "$(jp "pod/$l" '{.metadata.name}{.metadata.deletionTimestamp}' -n "$OPERATOR_NS" 2>/dev/null)" == "$l" ]]
}
wait_for 30 "the Lease held by a live Pod other than $leader" new_leader
took="$(elapsed "$t0")"
next="$(leader_pod)"
log "the Lease's holder: $next ($([[ "$next" == "$other" ]] && echo the standby || echo the Pod that replaced $leader))"
assert_le "$took" 10 "seconds from deleting the leader's Pod to the Lease's new holder"
# The standby watched the Lease under the chart's Role (list/watch by
# resourceNames): its watch was answered 200, none refused.
lease_watches="$(jq -r --arg ns "$OPERATOR_NS" 'select(.stage == "ResponseStarted" or .stage == "ResponseComplete")
  | select(.verb == "watch" and .objectRef.resource == "leases" and .objectRef.namespace == $ns
           and (.user.username | startswith("system:serviceaccount:" + $ns + ":")))
  | .responseStatus.code' "$E2E_AUDIT_LOG" | sort | uniq -c | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }')"
[[ "$lease_watches" =~ ^200:[0-9]+$ ]] || fail "the operator Pods' watches of the Lease by response code: '$lease_watches' (expected only 200)"
echo "TIMING real-node leader handover (Pod deleted) ${took}s" >>"$E2E_WORK/timings.txt"
wait_output 15 "leader_election_master_status 1 in $next" 1 master "$next"

mark="$(audit_mark)"
ms_yaml after-failover | k -n "$ns" apply -f - >/dev/null
wait_for 30 "Deployment $ns/after-failover" exists "$ns" deployment after-failover
by="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" 'select(.stage == "ResponseComplete" and .verb == "create"
  and .objectRef.resource == "deployments" and .objectRef.namespace == $ns and .responseStatus.code == 201)
  | .user.extra["authentication.kubernetes.io/pod-name"][0]')"
assert_eq "$by" "$next" "the Pod whose controller created the Deployment (audit log)"

# Two Pods again, one leader.
two_ready() { [[ "$(operator_ready_count)" == 2 && "$(operator_pods | grep -c .)" == 2 ]]; }
wait_for 90 "two operator Pods Ready, the deleted one gone" two_ready
statuses="$(for p in $(operator_pods); do echo "$([[ "$p" == "$next" ]] && echo leader || echo standby)=$(master "$p")"; done | sort | tr '\n' ' ')"
assert_eq "$statuses" "leader=1 standby=0 " "leader_election_master_status of the two Pods"
assert_eq "$(leader_pod)" "$next" "the Lease's holder"

# The new leader kept the certificates: no new CA.
assert_eq "$(operator_secret ca-current.crt | fingerprint)" "$ca_before" "the Secret's CA after the failover"
for w in "validatingwebhookconfiguration modelservice-validating" "mutatingwebhookconfiguration modelservice-mutating"; do
  # shellcheck disable=SC2086
  assert_eq "$(ca_bundle $w | fingerprint)" "$ca_before" "caBundle of $w after the failover"
done
assert_eq "$(pod_get "$next" 8082 /metrics | awk '$1 == "modelservice_webhook_certificates_issued_total{certificate=\"ca\"}" { v = $2 } END { print v + 0 }')" 0 \
  "CAs issued by the new leader $next (modelservice_webhook_certificates_issued_total)"
