# `kubectl logs` of both containers of every operator Pod (the API server
# reaches the kubelet of the real node, which reads the containers' log files
# under its own /var/log/pods): one JSON object a line (--log-format=json in
# manifests/deployment.yaml), each with ts, level, logger and msg; the webhook
# logs the denial of an invalid ModelService with its fields as keys
# (webhook, uid, kind, namespace, name, operation, allowed, code, latency),
# the controller its start-up against the in-cluster API server address.
# timeout: 90
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-logs
new_ns "$ns"
# One denial, logged by whichever webhook replica served it.
out="$(ms_yaml denied-1 'model: m' 'autoscaling: {minReplicas: 5, maxReplicas: 3, targetQueueLength: 1}' | k -n "$ns" apply -f - 2>&1 || true)"
assert_contains "$out" "denied the request" "an invalid ModelService"

denials=0
for p in $(operator_pods); do
  for c in webhook controller; do
    logs="$(k -n "$OPERATOR_NS" logs "$p" -c "$c")" || fail "kubectl logs $p -c $c"
    n="$(grep -c . <<<"$logs")"
    assert_gt "$n" 0 "lines logged by $p/$c"
    bad="$(jq -R -c 'fromjson? // "NOT JSON" | if type == "object" and has("ts") and has("level") and has("logger") and has("msg") then empty else . end' <<<"$logs" | head -n 3)"
    [[ -z "$bad" ]] || fail "$p/$c: lines that are not JSON objects with ts, level, logger, msg: $bad\n$(head -n 5 <<<"$logs")"
    log "ok: $p/$c: $n lines, each a JSON object with ts, level, logger, msg"
    if [[ "$c" == webhook ]]; then
      # The denial's fields, as keys of the line.
      denied="$(jq -R -c --arg ns "$ns" 'fromjson? | select(.msg | startswith("denied /validate CREATE"))
        | select(.webhook == "/validate" and .kind == "ModelService" and .namespace == $ns and .name == "denied-1"
                 and .operation == "CREATE" and .allowed == "false" and .code == "422" and (.uid | length > 0)
                 and (.latency | tonumber >= 0))' <<<"$logs")"
      denials=$(( denials + $(grep -c . <<<"$denied" || true) ))
    else
      assert_eq "$(jq -R -r 'fromjson? | .msg' <<<"$logs" | grep -c 'against https://10.0.0.1:443')" 1 "$p/controller: its start-up line"
    fi
  done
done
assert_le 1 "$denials" "webhook log lines 'denied /validate CREATE ...' with their fields (webhook, uid, kind, namespace, name, operation, allowed, code, latency)"
