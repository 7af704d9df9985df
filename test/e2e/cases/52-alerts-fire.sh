# The operator's alerts (manifests/monitoring/prometheusrule.yaml) fire on
# the suite's real Prometheus, from the real programs' metrics: the rules
# are loaded as they are, except `for`, set to 0s (the durations are
# promtool's unit tests' business, test/monitoring/). Provoked here:
# - requests that are not reviews, to /validate (HTTP 400), in batches until
#   the alert fires (the 5-minute window holds the suite's earlier reviews,
#   case 42 alone sends thousands, and rate() needs the error series to grow
#   after its first scrape): ModelServiceWebhookErrors {webhook="/validate",
#   severity="warning"};
# - an autoscaled ModelService whose queue length has no series:
#   ModelServiceAutoscalerMetricsUnavailable {namespace, name};
# - a ModelService whose pods never become ready:
#   ModelServiceReplicasMismatch {namespace, name}.
# Not firing: ModelServiceReplicasMismatch for a ModelService that is Ready
# (full cluster), the leader alerts (one leader runs).
# timeout: 180
# logs: prometheus controller webhook
ns=e2e-alerts
rules="$E2E_WORK/rules/modelservice.yml"
reload_prometheus() {
  local pid
  pid="$(proc_pid prometheus)" || fail "prometheus is not running"
  kill -HUP "$pid"
}
cleanup() {
  rm -f "$rules"
  reload_prometheus 2>/dev/null || true
  ( delete_ms_wait "$ns" 30 alert-noq alert-never ) >/dev/null 2>&1 || true
}
trap cleanup EXIT

mkdir -p "$(dirname "$rules")"
python3 "$E2E_ROOT/test/monitoring/rules.py" extract "$E2E_ROOT/manifests/monitoring/prometheusrule.yaml" --for 0s >"$rules"
"$PROMTOOL_BIN" check rules "$rules" >/dev/null || fail "promtool check rules $rules"
reload_prometheus
rule_groups() {
  curl -fsS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" | jq -r '[.data.groups[].name] | sort | join(" ")'
}
wait_output 20 "Prometheus loaded the operator's rule groups" "modelservice-controller modelservice-objects modelservice-webhook" rule_groups

# alerts STATE NAME: the firing (or pending) alerts NAME, one JSON object of labels a line.
alerts() {
  curl -fsS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/alerts" \
    | jq -c --arg s "$1" --arg n "$2" '.data.alerts[] | select(.state == $s and .labels.alertname == $n) | .labels'
}
firing_with() {  # firing_with NAME JQ_FILTER: an alert NAME is firing whose labels pass the filter
  # (jq -e alone succeeds on no input at all: count the matches.)
  alerts firing "$1" | jq -c "select($2)" | grep -q .
}

# ------------------------------------------------------------------ provoke
new_ns "$ns"
ms_yaml alert-noq 'model: m' 'autoscaling: {minReplicas: 1, maxReplicas: 3, targetQueueLength: 5}' | k -n "$ns" apply -f - >/dev/null
ms_yaml alert-never 'model: m' 'image: registry.local/serve:never-ready' | k -n "$ns" apply -f - >/dev/null
ms_yaml alert-ok 'model: m' | k -n "$ns" apply -f - >/dev/null
# Batches of 300 requests that are not reviews, each over one keep-alive connection.
for _ in $(seq 300); do
  echo "url = \"https://127.0.0.1:$WEBHOOK_PORT/validate\""
  echo 'output = "/dev/null"'
done >"$E2E_WORK/alerts-curl.cfg"
bad_requests() {
  webhook_curl -sS --max-time 60 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' \
    --data '{"kind":"not a review"}' -K "$E2E_WORK/alerts-curl.cfg" || fail "300 requests to /validate"
}
bad_requests

# ------------------------------------------------------------------ firing
webhook_errors_firing() {
  firing_with ModelServiceWebhookErrors \
    '.webhook == "/validate" and .severity == "warning" and .job == "modelservice-webhook" and .namespace == "modelservice-system"' \
    && return 0
  bad_requests >/dev/null
  return 1
}
wait_for 60 "ModelServiceWebhookErrors (warning) firing for /validate" webhook_errors_firing
wait_for 30 "ModelServiceAutoscalerMetricsUnavailable firing for $ns/alert-noq" firing_with ModelServiceAutoscalerMetricsUnavailable \
  ".namespace == \"$ns\" and .name == \"alert-noq\" and .severity == \"warning\""
wait_for 30 "ModelServiceReplicasMismatch firing for $ns/alert-never" firing_with ModelServiceReplicasMismatch \
  ".namespace == \"$ns\" and .name == \"alert-never\" and .severity == \"warning\""
a="$(curl -fsS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/alerts" \
  | jq -c --arg ns "$ns" '.data.alerts[] | select(.labels.alertname == "ModelServiceReplicasMismatch" and .labels.namespace == $ns and .labels.name == "alert-never")')"
log "the alert as Prometheus holds it: $a"
assert_eq "$(jq -r .annotations.description <<<"$a")" \
  "The ready replicas of ModelService $ns/alert-never have differed from the desired ones (1) for 15 minutes." "its description"
assert_eq "$(jq -r .annotations.runbook_url <<<"$a")" \
  "https://github.com/modelops-dev/modelservice-operator/blob/main/docs/operator/runbooks/ModelServiceReplicasMismatch.md" "its runbook_url"

# ------------------------------------------------------------------ not firing
assert_eq "$(alerts firing ModelServiceControllerNoLeader)" "" "ModelServiceControllerNoLeader firing"
assert_eq "$(alerts firing ModelServiceControllerMultipleLeaders)" "" "ModelServiceControllerMultipleLeaders firing"
if [[ "${E2E_CLUSTER_MODE:-full}" == full ]]; then
  wait_ms_ready "$ns" 60 alert-ok
  # Ready now: once Prometheus has the sample and has evaluated the group
  # after that, no alert for it.
  ready_scraped() {
    prom_query "modelservice_replicas{namespace=\"$ns\",name=\"alert-ok\",kind=\"ready\"} == 1" | jq -e '.data.result | length == 1'
  }
  wait_for 10 "Prometheus sees $ns/alert-ok with 1 ready replica" ready_scraped
  t_ready="$(date -u +%s.%N)"
  evaluated_since() {  # the group modelservice-objects was evaluated after $1 (epoch seconds)
    local ts
    ts="$(curl -fsS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" \
      | jq -r '.data.groups[] | select(.name == "modelservice-objects") | .lastEvaluation')" || return 1
    awk -v e="$(date -d "$ts" +%s.%N)" -v t="$1" 'BEGIN { exit !(e > t) }'
  }
  wait_for 10 "the rules evaluated after that" evaluated_since "$t_ready"
  assert_eq "$(alerts firing ModelServiceReplicasMismatch | jq -c "select(.namespace == \"$ns\" and .name == \"alert-ok\")")" "" \
    "ModelServiceReplicasMismatch firing for $ns/alert-ok (Ready)"
fi
