# Reconciling unchanged objects issues zero write requests: after convergence
# (every pod scheduled and Ready), the controller's create/update/patch/delete
# requests (by user agent, from the API server's audit log; Lease renewals
# excluded) over a 20 s quiet period must be 0 - with periodic autoscaler
# evaluations (every 2 s) running for an autoscaled object whose queue length
# is steady, and the node heartbeats, Lease renewals and resyncs of the rest of
# the cluster going on.
# timeout: 150
# logs: controller
need_full_cluster
ns=e2e-quiet
new_ns "$ns"
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
set_queue "$ns" q-auto 10
{
  ms_yaml q-min 'model: m1'
  echo ---
  ms_yaml q-gpu 'model: m2' 'image: registry.local/serve:1.4' 'gpus: 1' 'replicas: 2' 'strategy: {type: Recreate}'
  echo ---
  ms_yaml q-auto 'model: m3' 'image: registry.local/serve:1.4' 'autoscaling: {minReplicas: 1, maxReplicas: 10, targetQueueLength: 5}'
} | k -n "$ns" apply -f - >/dev/null
for n in q-min q-gpu q-auto; do wait_for 30 "Deployment $n" exists "$ns" deployment "$n"; done
wait_for 30 "autoscaled Deployment at ceil(10/5) = 2 replicas" deploy_replicas_is "$ns" q-auto 2
wait_ms_ready "$ns" 60 q-min q-gpu q-auto

assert_no_controller_writes 20 "with nothing changed"
# Sanity: the audit log does record this controller's requests (reads at least).
reads="$(tail -n "+$(( quiet_mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r 'select((.userAgent // "") | startswith("modelservice-controller")) | .verb' | wc -l)"
log "controller requests of any kind in the quiet period (lease renewals, watches): $reads"
assert_gt "$reads" 0 "controller requests seen in the audit log (the user-agent filter works)"

k -n "$ns" delete ms q-min q-gpu q-auto --wait=false >/dev/null
