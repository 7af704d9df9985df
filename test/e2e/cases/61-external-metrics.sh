# The External metrics API the HPA mode reads (issue 15): kube-apiserver's
# aggregation layer proxies external.metrics.k8s.io/v1beta1 to the suite's
# External metrics server (test/e2e/external-metrics), which answers
# modelservice_queue_length for a namespace and a ModelService from the real
# Prometheus, with the controller's query. Through the API server, as the HPA
# controller asks:
#   L=23 -> one item, value 23, labelled with the namespace and ModelService;
#   L=12.5 -> 12500m (a quantity); another ModelService's value is its own;
#   no series -> 503 that says so; a selector that names no ModelService -> 400;
#   Prometheus down -> 503, and the values again once it is back.
# timeout: 120
# logs: external-metrics prometheus queue-exporter
ns=e2e-external-metrics
new_ns "$ns"
trap 'proc_alive prometheus || start_prometheus' EXIT

# The group is served and lists the metric.
res="$(k get --raw /apis/external.metrics.k8s.io/v1beta1 | jq -r '[.resources[].name] | join(",")')"
assert_eq "$res" modelservice_queue_length "resources of external.metrics.k8s.io/v1beta1"

value_is() {  # value_is NAME VALUE: the API answers one item with that value
  local out
  out="$(external_metric "$ns" "$1" 2>/dev/null)" || return 1
  [[ "$(jq -r '[.items[].value] | join(",")' <<<"$out")" == "$2" ]]
}

set_queue "$ns" chat 23
set_queue "$ns" other 4
wait_for 20 "modelservice_queue_length of $ns/chat is 23" value_is chat 23
out="$(external_metric "$ns" chat)"
assert_eq "$(jq -r .kind <<<"$out")" ExternalMetricValueList "kind"
assert_eq "$(jq -r '.items | length' <<<"$out")" 1 "number of items"
assert_eq "$(jq -r '.items[0].metricName' <<<"$out")" modelservice_queue_length "metricName"
assert_eq "$(jq -c '.items[0].metricLabels' <<<"$out")" "{\"modelservice\":\"chat\",\"namespace\":\"$ns\"}" "metricLabels"
# The same number the controller reads with its default query.
prom="$(prom_query "sum(modelservice_queue_length{namespace=\"$ns\",modelservice=\"chat\"})" | jq -r '.data.result[0].value[1]')"
assert_eq "$prom" 23 "Prometheus' answer to the controller's query"
wait_for 20 "$ns/other has its own value, 4" value_is other 4

set_queue "$ns" chat 12.5
wait_for 20 "L=12.5 is served as 12500m" value_is chat 12500m

# No series for that ModelService: 503, and the message says why.
out="$(external_metric "$ns" nobody 2>&1)" && fail "a ModelService without series got an answer: $out"
assert_contains "$out" "ServiceUnavailable" "answer for a ModelService without series"
assert_contains "$out" "no series" "answer for a ModelService without series"

# A selector that does not name one ModelService: 400.
out="$(k get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/$ns/modelservice_queue_length?labelSelector=app%3Dchat" 2>&1)" \
  && fail "a selector without modelservice= got an answer: $out"
assert_contains "$out" "BadRequest" "answer for labelSelector app=chat"

# Prometheus down: 503 (the HPA keeps its replicas); back: values again.
proc_stop prometheus TERM 10
out="$(external_metric "$ns" chat 2>&1)" && fail "an answer while Prometheus is down: $out"
assert_contains "$out" "ServiceUnavailable" "answer while Prometheus is down"
start_prometheus
wait_for 30 "values again once Prometheus is back" value_is chat 12500m
