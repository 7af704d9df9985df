# The External metrics API the HPA mode reads (issue 15): kube-apiserver's
# aggregation layer proxies external.metrics.k8s.io/v1beta1 to
# prometheus-adapter (sigs.k8s.io/prometheus-adapter v0.12.0, run with exactly
# the rule file users are given, docs/user/prometheus-adapter-rules.yaml),
# which answers modelservice_queue_length for a namespace and a ModelService
# from the real Prometheus. Through the API server, as the HPA controller asks:
#   once the series exists the group lists the metric;
#   L=23 -> one item, value 23 (an aggregate: no labels of its own), the very
#   number Prometheus gives for the controller's default query;
#   L=12.5 -> 12500m (a quantity); another ModelService's value is its own;
#   no series for that ModelService -> an empty list (the HPA reports it as
#   FailedGetExternalMetric, case 63); a selector without modelservice= -> the
#   rule's sum over what it selects (an empty list here); no selector -> the
#   namespace's sum; a metric of no rule -> 404;
#   Prometheus down -> 500 "unable to fetch metrics", and the values again
#   once it is back.
# timeout: 120
# logs: prometheus-adapter prometheus queue-exporter
ns=e2e-external-metrics
new_ns "$ns"
trap 'proc_alive prometheus || start_prometheus' EXIT

value_is() {  # value_is NAME VALUE: the API answers one item with that value
  local out
  out="$(external_metric "$ns" "$1" 2>/dev/null)" || return 1
  [[ "$(jq -r '[.items[].value] | join(",")' <<<"$out")" == "$2" ]]
}

set_queue "$ns" chat 23
set_queue "$ns" other 4
# The group lists the metric once Prometheus has its series (prometheus-adapter
# lists the series its rules select, here every second).
listed() { [[ "$(k get --raw /apis/external.metrics.k8s.io/v1beta1 | jq -r '[.resources[].name] | join(",")')" == modelservice_queue_length ]]; }
wait_for 20 "external.metrics.k8s.io/v1beta1 lists modelservice_queue_length" listed
wait_for 20 "modelservice_queue_length of $ns/chat is 23" value_is chat 23
out="$(external_metric "$ns" chat)"
assert_eq "$(jq -r .kind <<<"$out")" ExternalMetricValueList "kind"
assert_eq "$(jq -r '.items | length' <<<"$out")" 1 "number of items"
assert_eq "$(jq -r '.items[0].metricName' <<<"$out")" modelservice_queue_length "metricName"
# sum() of the rule's metricsQuery leaves no label.
assert_eq "$(jq -c '.items[0].metricLabels' <<<"$out")" "{}" "metricLabels"
# The same number the controller reads with its default query.
prom="$(prom_query "sum(modelservice_queue_length{namespace=\"$ns\",modelservice=\"chat\"})" | jq -r '.data.result[0].value[1]')"
assert_eq "$prom" 23 "Prometheus' answer to the controller's query"
wait_for 20 "$ns/other has its own value, 4" value_is other 4

set_queue "$ns" chat 12.5
wait_for 20 "L=12.5 is served as 12500m" value_is chat 12500m

# No series for that ModelService: an empty list (200), which the HPA
# controller reports as "no metrics returned from external metrics API".
out="$(external_metric "$ns" nobody)"
assert_eq "$(jq -r '.items | length' <<<"$out")" 0 "items for a ModelService without series"

# A selector that does not name a ModelService is the rule's sum over what it
# selects: nothing here. No selector at all: the namespace's sum (12.5 + 4).
out="$(k get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/$ns/modelservice_queue_length?labelSelector=app%3Dchat")"
assert_eq "$(jq -r '.items | length' <<<"$out")" 0 "items for labelSelector app=chat"
out="$(k get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/$ns/modelservice_queue_length")"
assert_eq "$(jq -r '[.items[].value] | join(",")' <<<"$out")" 16500m "the namespace's sum without a selector"
# A metric no rule serves: 404.
out="$(k get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/$ns/other_metric?labelSelector=modelservice%3Dchat" 2>&1)" \
  && fail "a metric of no rule got an answer: $out"
assert_contains "$out" "NotFound" "answer for other_metric"

# Prometheus down: 500 (the HPA keeps its replicas); back: values again.
proc_stop prometheus TERM 10
out="$(external_metric "$ns" chat 2>&1)" && fail "an answer while Prometheus is down: $out"
assert_contains "$out" "InternalError" "answer while Prometheus is down"
assert_contains "$out" "unable to fetch metrics" "answer while Prometheus is down"
start_prometheus
wait_for 30 "values again once Prometheus is back" value_is chat 12500m
