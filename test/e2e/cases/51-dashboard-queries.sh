# Every query of the operator's Grafana dashboard
# (manifests/monitoring/dashboard/modelservice.json), and every query of
# kubebuilder's controller-runtime dashboard, evaluated against the suite's
# Prometheus (scraping the webhook and the controller as the ServiceMonitor
# does: namespace target label, honor_labels) after traffic of every kind:
# allowed and denied reviews, reviews the webhook rejects (HTTP 400), an
# autoscaled ModelService with a queue length, a ModelService whose
# Deployment a ResourceQuota refuses (reconcile errors, API answers 403).
# The variables are resolved as Grafana resolves them, from the real series.
# Fails on a query that errors or returns no series, or whose series are all
# NaN; except the queries on metrics not exported yet, listed below with
# their metric: those must return nothing, and their metric must not exist
# (the case fails once it does: then empty the entry, and the query must
# return series). Also: the per-ModelService series keep their namespace
# (honorLabels), and kustomize makes the dashboard's ConfigMap with the
# sidecar label and the file's exact content.
# timeout: 150
# logs: prometheus controller webhook
ns=e2e-dash
qns=e2e-dash-quota
dash="$E2E_ROOT/manifests/monitoring/dashboard/modelservice.json"
tmp="$(mktemp -d)"
cleanup() {
  k -n "$qns" delete ms dash-quota --ignore-not-found --wait=false >/dev/null 2>&1 || true
  k -n "$qns" delete resourcequota no-deployments --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Queries of the dashboard on metrics that the programs do not export yet
# ("ROW / PANEL / REFID|METRIC"): expected missing until METRIC is exported.
expected_missing=()

# kubebuilder's controller-runtime dashboard (its grafana plugin,
# grafana/controller-runtime-metrics.json): "PANEL / REFID|EXPR", as data.
# Its variables: namespace = label_values(controller_runtime_reconcile_total,
# namespace); job = label_values(controller_runtime_reconcile_total{namespace=~"$namespace"}, job).
kubebuilder_queries=(
  'Number of workers in use / A|controller_runtime_active_workers{job="$job", namespace="$namespace"}'
  'Total Reconciliation Count Per Controller / A|sum(rate(controller_runtime_reconcile_total{job="$job", namespace="$namespace"}[5m])) by (instance, pod)'
  'Reconciliation Error Count Per Controller / A|sum(rate(controller_runtime_reconcile_errors_total{job="$job", namespace="$namespace"}[5m])) by (instance, pod)'
  'WorkQueue Depth / A|workqueue_depth{job="$job", namespace="$namespace"}'
  'Seconds For Items Stay In Queue / A|histogram_quantile(0.50, sum(rate(workqueue_queue_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Seconds For Items Stay In Queue / B|histogram_quantile(0.90, sum(rate(workqueue_queue_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Seconds For Items Stay In Queue / C|histogram_quantile(0.99, sum(rate(workqueue_queue_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Work Queue Add Rate / A|sum(rate(workqueue_adds_total{job="$job", namespace="$namespace"}[5m])) by (instance, name)'
  'Unfinished Seconds / A|rate(workqueue_unfinished_work_seconds{job="$job", namespace="$namespace"}[5m])'
  'Seconds Processing Items From WorkQueue / A|histogram_quantile(0.50, sum(rate(workqueue_work_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Seconds Processing Items From WorkQueue / B|histogram_quantile(0.90, sum(rate(workqueue_work_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Seconds Processing Items From WorkQueue / C|histogram_quantile(0.99, sum(rate(workqueue_work_duration_seconds_bucket{job="$job", namespace="$namespace"}[5m])) by (instance, name, le))'
  'Work Queue Retries Rate / A|sum(rate(workqueue_retries_total{job="$job", namespace="$namespace"}[5m])) by (instance, name)'
)
kubebuilder_missing=()

# ------------------------------------------------------------------ the ConfigMap
k kustomize "$E2E_ROOT/manifests/monitoring" >"$tmp/monitoring.yaml" || fail "kubectl kustomize manifests/monitoring failed"
python3 - "$tmp/monitoring.yaml" "$dash" <<'EOF' || fail "the dashboard ConfigMap is not what the sidecar needs"
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cms = [d for d in docs if d["kind"] == "ConfigMap"]
assert len(cms) == 1, f"{len(cms)} ConfigMaps"
cm = cms[0]
assert cm["metadata"]["name"] == "modelservice-dashboard", cm["metadata"]["name"]
assert cm["metadata"]["labels"].get("grafana_dashboard") == "1", cm["metadata"]["labels"]
assert cm["data"]["modelservice.json"] == open(sys.argv[2]).read(), "data differs from the file"
json.loads(cm["data"]["modelservice.json"])
kinds = sorted(d["kind"] for d in docs)
assert kinds == ["ConfigMap", "PodMonitor", "PrometheusRule", "ServiceMonitor"], kinds
sm = next(d for d in docs if d["kind"] == "ServiceMonitor")
assert all(e.get("honorLabels") is True for e in sm["spec"]["endpoints"]), "honorLabels"
print("ok: kustomize makes ConfigMap modelservice-dashboard (grafana_dashboard: \"1\", the file's content), the ServiceMonitor with honorLabels, the PodMonitor, the PrometheusRule")
EOF
python3 -c 'import sys, yaml; print(yaml.safe_dump(next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ConfigMap")))' \
  "$tmp/monitoring.yaml" >"$tmp/cm.yaml"
out="$(k apply --dry-run=server -f "$tmp/cm.yaml" 2>&1)" || fail "server dry run of the dashboard ConfigMap: $out"
assert_contains "$out" "configmap/modelservice-dashboard created (server dry run)" "the dashboard ConfigMap"

# ------------------------------------------------------------------ traffic
new_ns "$ns"
new_ns "$qns"
set_queue "$ns" dash-auto 7
ms_yaml dash-auto 'model: gpt2' 'autoscaling: {minReplicas: 1, maxReplicas: 5, targetQueueLength: 5}' \
  | k -n "$ns" apply -f - >/dev/null
ms_yaml dash-plain 'model: bert' | k -n "$ns" apply -f - >/dev/null
# Denied by the webhook (a cross-field rule the CRD schema does not know).
out="$(ms_yaml dash-bad 'model: m' 'strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}' | k -n "$ns" apply -f - 2>&1 || true)"
assert_contains "$out" "denied the request" "an invalid ModelService"
# A Deployment the quota refuses: the controller's create gets 403.
k -n "$qns" create quota no-deployments --hard=count/deployments.apps=0 >/dev/null
ms_yaml dash-quota 'model: m' | k -n "$qns" apply -f - >/dev/null
# Requests that are not reviews: HTTP 400 from both paths.
webhook_traffic() {
  local p
  for p in validate mutate; do
    webhook_curl -sS -o /dev/null --max-time 5 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' \
      --data '{"kind":"not a review"}' "https://127.0.0.1:$WEBHOOK_PORT/$p" || fail "POST /$p"
  done
  ms_yaml dash-dry 'model: m' | k -n "$ns" apply --dry-run=server -f - >/dev/null
}
webhook_traffic

series() {  # series EXPR: number of series of an instant query (fails the case on an error)
  local r
  r="$(prom_query "$1")" || fail "query failed: $1"
  [[ "$(jq -r .status <<<"$r")" == success ]] || fail "query error: $1: $r"
  jq '.data.result | length' <<<"$r"
}
has() { (( $(series "$1") > 0 )); }
wait_for 30 "the autoscaler read L=7 for $ns/dash-auto" has "modelservice_autoscaler_queue_length{namespace=\"$ns\",name=\"dash-auto\"} == 7"
wait_for 30 "the controller got a 403 from the API server" has 'rest_client_requests_total{code="403"}'
wait_for 30 "webhook answers 400 scraped" has 'controller_runtime_webhook_requests_total{webhook="/validate",code="400"} > 0'
wait_for 30 "rejected decisions scraped" has 'modelservice_admission_decisions_total{decision="rejected"} > 0'
wait_for 30 "a reconcile error scraped" has 'controller_runtime_reconcile_errors_total{controller="modelservice"} > 0'

# honorLabels: the object's namespace, not exported_namespace; the target's
# namespace on the other series.
assert_eq "$(series "modelservice_replicas{namespace=\"$ns\",name=\"dash-auto\",kind=\"desired\"}")" 1 \
  "modelservice_replicas of $ns/dash-auto under its own namespace"
assert_eq "$(series '{exported_namespace!=""}')" 0 "series with exported_namespace"
assert_eq "$(series 'controller_runtime_reconcile_total{namespace="modelservice-system",controller="modelservice",result="success"}')" 1 \
  "controller_runtime_reconcile_total under the target's namespace"

# ------------------------------------------------------------------ variables
label_values() {  # label_values 'label_values(SELECTOR, LABEL)': the values, one a line
  local q="$1" sel lab
  [[ "$q" =~ ^label_values\((.*),\ *([a-zA-Z_]+)\)$ ]] || fail "not a label_values query: $q"
  sel="${BASH_REMATCH[1]}" lab="${BASH_REMATCH[2]}"
  curl -fsS --max-time 5 -G "http://127.0.0.1:$PROM_PORT/api/v1/label/$lab/values" --data-urlencode "match[]=$sel" \
    | jq -r '.data[]' || fail "label values query failed: $q"
}
var_query() {  # var_query NAME [--var N=V]...: the variable's query, earlier variables replaced
  local name="$1"; shift
  local out
  out="$(python3 "$E2E_ROOT/test/monitoring/dashboard.py" queries "$dash" --variable "$name" "$@")" \
    || fail "dashboard.py: the query of variable $name"
  cut -f2 <<<"$out"
}
q="$(var_query job)"
jobs="$(label_values "$q" | sort)"
log "variable job: $(tr '\n' ' ' <<<"$jobs")"
assert_contains "$jobs" modelservice-webhook "variable job"
assert_contains "$jobs" modelservice-controller "variable job"
assert_not_contains "$jobs" queue-exporter "variable job"
# "All" of a multi-value variable, as Grafana writes it in a regex: (a|b).
job_all="($(paste -sd '|' <<<"$jobs"))"
q="$(var_query namespace --var "job=$job_all")"
namespaces="$(label_values "$q")"
grep -qx "$ns" <<<"$namespaces" || fail "variable namespace does not offer $ns: $namespaces"
q="$(var_query modelservice --var "job=$job_all" --var "namespace=$ns")"
names="$(label_values "$q")"
grep -qx dash-auto <<<"$names" || fail "variable modelservice does not offer dash-auto: $names"
log "ok: variables job=$job_all namespace=$ns modelservice=dash-auto offered by the real series"

# ------------------------------------------------------------------ the queries
webhook_traffic  # fresh requests within the 1m rate interval
# check_queries LABEL FILE MISSING...: FILE has "NAME<TAB>EXPR" lines; MISSING
# entries "NAME|METRIC". Prints a summary; fails on the first problem list.
check_queries() {
  local label="$1" file="$2"; shift 2
  local -A missing=()
  local e name expr n r problems=() ok=0 nan=0
  for e in "$@"; do missing["${e%%|*}"]="${e#*|}"; done
  for e in "${!missing[@]}"; do
    cut -f1 "$file" | grep -qxF "$e" || problems+=("listed as expected missing but not a query of $label: $e")
    (( $(series "count({__name__=\"${missing[$e]}\"})") == 0 )) \
      || problems+=("${missing[$e]} is exported now: remove \"$e|${missing[$e]}\" from the expected-missing list (its query must then return series)")
  done
  while IFS=$'\t' read -r name expr; do
    r="$(prom_query "$expr")" || { problems+=("$name: the query failed: $expr"); continue; }
    if [[ "$(jq -r .status <<<"$r")" != success ]]; then problems+=("$name: error $(jq -c . <<<"$r"): $expr"); continue; fi
    n="$(jq '.data.result | length' <<<"$r")"
    if [[ -n "${missing[$name]:-}" ]]; then
      (( n == 0 )) || problems+=("$name: returns $n series although listed as expected missing until ${missing[$name]} is exported: $expr")
      log "expected missing until ${missing[$name]} is exported: $name"
      continue
    fi
    if (( n == 0 )); then problems+=("$name: no series: $expr"); continue; fi
    if ! jq -e '[.data.result[].value[1] | select(. != "NaN")] | length > 0' <<<"$r" >/dev/null; then
      problems+=("$name: only NaN in $n series: $expr"); nan=$((nan + 1)); continue
    fi
    ok=$((ok + 1))
    log "ok: $name: $n series, e.g. $(jq -c '.data.result[0] | [.metric, .value[1]]' <<<"$r" | cut -c1-160)"
  done <"$file"
  if (( ${#problems[@]} )); then
    printf '  %s\n' "${problems[@]}" >&2
    fail "$label: ${#problems[@]} problem(s) (above)"
  fi
  log "ok: $label: $ok queries with series, ${#missing[@]} expected missing"
}

python3 "$E2E_ROOT/test/monitoring/dashboard.py" queries "$dash" --rate-interval 1m \
  --var "job=$job_all" --var "namespace=$ns" --var "modelservice=dash-auto" | grep -v '^variable ' >"$tmp/ours.tsv"
assert_eq "$(wc -l <"$tmp/ours.tsv")" 42 "queries of the dashboard"
check_queries "the operator's dashboard" "$tmp/ours.tsv" "${expected_missing[@]}"

# kubebuilder's dashboard on our controller, its variables from the real series.
kb_ns="$(label_values 'label_values(controller_runtime_reconcile_total, namespace)')"
assert_eq "$kb_ns" modelservice-system "kubebuilder's variable namespace"
kb_job="$(label_values "label_values(controller_runtime_reconcile_total{namespace=~\"$kb_ns\"}, job)")"
assert_eq "$kb_job" modelservice-controller "kubebuilder's variable job"
for e in "${kubebuilder_queries[@]}"; do
  expr="${e#*|}"; expr="${expr//\$job/$kb_job}"; expr="${expr//\$namespace/$kb_ns}"
  printf '%s\t%s\n' "${e%%|*}" "$expr"
done >"$tmp/kubebuilder.tsv"
check_queries "kubebuilder's controller-runtime dashboard" "$tmp/kubebuilder.tsv" "${kubebuilder_missing[@]}"
