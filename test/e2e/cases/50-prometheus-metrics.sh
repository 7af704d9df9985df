# Prometheus (scraping every 1 s) has the webhook's and the controller's
# metrics with the right labels: controller_runtime_webhook_requests_total for
# /mutate and /validate, controller_runtime_reconcile_total for the
# modelservice controller, both targets up.
# timeout: 90
# logs: prometheus webhook controller
ns=e2e-prom
new_ns "$ns"
# Generate traffic of our own: one allowed create, one denial.
ms_yaml prom-a 'model: m' | k -n "$ns" apply -f - >/dev/null
ms_yaml prom-bad 'model: m' 'strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}' | k -n "$ns" apply -f - >/dev/null 2>&1 || true
wait_for 30 "Deployment prom-a" exists "$ns" deployment prom-a

val() {  # val EXPR: the single value of an instant query (fails unless exactly one series)
  local r; r="$(prom_query "$1")" || return 1
  jq -e -r '.status == "success" and (.data.result | length == 1)' <<<"$r" >/dev/null || return 1
  jq -r '.data.result[0].value[1]' <<<"$r"
}
positive() { local v; v="$(val "$1")" && awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }'; }

wait_for 20 "webhook target up" positive 'up{job="modelservice-webhook"}'
wait_for 20 "controller target up" positive "up{job=\"modelservice-controller\",instance=\"127.0.0.1:$CONTROLLER_METRICS_PORT\"}"
wait_for 20 "controller_runtime_webhook_requests_total /mutate 200 > 0" positive \
  'controller_runtime_webhook_requests_total{job="modelservice-webhook",webhook="/mutate",code="200"}'
wait_for 20 "controller_runtime_webhook_requests_total /validate 200 > 0" positive \
  'controller_runtime_webhook_requests_total{job="modelservice-webhook",webhook="/validate",code="200"}'
wait_for 20 "controller_runtime_reconcile_total success > 0" positive \
  "controller_runtime_reconcile_total{job=\"modelservice-controller\",instance=\"127.0.0.1:$CONTROLLER_METRICS_PORT\",controller=\"modelservice\",result=\"success\"}"
wait_for 20 "modelservice_admission_decisions_total denied > 0" positive \
  'sum(modelservice_admission_decisions_total{job="modelservice-webhook",webhook="/validate",decision="denied"})'

# The label sets as Prometheus stores them.
r="$(prom_query 'controller_runtime_webhook_requests_total')"
echo "$r" | jq -c '.data.result[] | [.metric, .value[1]]' >&2
labels="$(jq -c '[.data.result[].metric | del(.instance, .job, .namespace) | keys] | unique' <<<"$r")"
assert_eq "$labels" '[["__name__","code","webhook"]]' "labels of controller_runtime_webhook_requests_total"
r="$(prom_query 'controller_runtime_reconcile_total{job="modelservice-controller"}')"
echo "$r" | jq -c '.data.result[] | [.metric, .value[1]]' >&2
labels="$(jq -c '[.data.result[].metric | del(.instance, .job, .namespace) | keys] | unique' <<<"$r")"
assert_eq "$labels" '[["__name__","controller","result"]]' "labels of controller_runtime_reconcile_total"
results="$(jq -c '[.data.result[].metric.result] | unique' <<<"$r")"
assert_contains "$results" '"success"' "reconcile results"
assert_contains "$results" '"error"' "reconcile results"
# Histograms are usable in PromQL.
wait_for 20 "webhook latency histogram count > 0" positive \
  'controller_runtime_webhook_latency_seconds_count{job="modelservice-webhook",webhook="/mutate"}'
wait_for 20 "webhook latency histogram +Inf bucket > 0" positive \
  'controller_runtime_webhook_latency_seconds_bucket{job="modelservice-webhook",webhook="/mutate",le="+Inf"}'
k -n "$ns" delete ms prom-a --wait=false >/dev/null
