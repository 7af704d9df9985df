# --metrics-secure on the controller (issue 41, finding 6): a second
# controller, controller-b (a standby: the suite's controller holds the
# Lease, and a standby serves /metrics too), serves /metrics over HTTPS and
# lets in only a bearer token that a TokenReview authenticates and a
# SubjectAccessReview allows to get /metrics. With curl: no token 401 (with
# WWW-Authenticate: Bearer), plain HTTP refused, a ServiceAccount token
# without the metrics-reader binding 403, with it 200 and the controller's
# series. The audit log shows controller-b's reviews: one TokenReview and one
# SubjectAccessReview per new token, none for a scrape without a token, and
# none for a second scrape within the cache's TTL (10 s denied, 1 min allowed).
# timeout: 120
# logs: controller-b
ns=e2e-metrics-auth
new_ns "$ns"
user="$(controller_user controller-b)"
cleanup() {
  proc_stop controller-b TERM 10
  k delete clusterrolebinding e2e-metrics-auth e2e-metrics-reader --ignore-not-found >/dev/null 2>&1 || true
  k delete clusterrole e2e-metrics-auth e2e-metrics-reader --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT

# What the chart grants with controller.metrics.secure (rbac/metrics_auth.yaml):
# the controller may create the reviews; the reader role for Prometheus.
k create clusterrole e2e-metrics-auth --verb=create \
  --resource=tokenreviews.authentication.k8s.io,subjectaccessreviews.authorization.k8s.io >/dev/null
k create clusterrolebinding e2e-metrics-auth --clusterrole=e2e-metrics-auth --user="$user" >/dev/null
k create clusterrole e2e-metrics-reader --verb=get --non-resource-url=/metrics >/dev/null
k -n "$ns" create serviceaccount reader >/dev/null
k -n "$ns" create serviceaccount stranger >/dev/null
k create clusterrolebinding e2e-metrics-reader --clusterrole=e2e-metrics-reader --serviceaccount="$ns:reader" >/dev/null
reader_token="$(k -n "$ns" create token reader --duration=10m)"
stranger_token="$(k -n "$ns" create token stranger --duration=10m)"

proc_stop controller-b TERM 10  # a previous case's, if any
start_controller controller-b --metrics-secure
url="https://127.0.0.1:$CONTROLLER_B_METRICS_PORT/metrics"
# code TOKEN: the HTTP status of a scrape (no token when empty); the
# certificate is self-signed, made by the controller at start.
code() {
  local auth=()
  [[ -n "$1" ]] && auth=(-H "Authorization: Bearer $1")
  curl -sk --max-time 5 -o "$E2E_WORK/56-body" -w '%{http_code}' "${auth[@]}" "$url"
}
# reviews KIND MARK: controller-b's successful creates of KIND after audit line MARK.
reviews() {
  tail -n "+$(( $2 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg u "$user" --arg r "$1" '
    select(.stage == "ResponseComplete" and .verb == "create" and .objectRef.resource == $r
           and .user.username == $u and .responseStatus.code < 300) | .auditID' | sort -u | wc -l | tr -d ' '
}
counts() { echo "$(reviews tokenreviews "$1") $(reviews subjectaccessreviews "$1")"; }

# 1. No token: 401, and nothing asked of the API server.
mark="$(audit_mark)"
assert_eq "$(code '')" 401 "a scrape without a token"
hdr="$(curl -sk --max-time 5 -D - -o /dev/null "$url")"
assert_contains "$hdr" "WWW-Authenticate: Bearer" "the 401's header"
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$CONTROLLER_B_METRICS_PORT/metrics" \
  -w '%{http_code}' | grep -qx 200 && fail "/metrics answered 200 over plain HTTP"
assert_eq "$(code 'not-a-token')" 401 "a token the API server does not authenticate"
wait_output 10 "one TokenReview for the forged token, no SubjectAccessReview" "1 0" counts "$mark"

# 2. A ServiceAccount without the binding: 403, after one review of each kind.
mark="$(audit_mark)"
assert_eq "$(code "$stranger_token")" 403 "a scrape with a token not allowed to get /metrics"
wait_output 10 "the stranger's reviews" "1 1" counts "$mark"

# 3. With the binding: 200 and the controller's series.
mark="$(audit_mark)"
assert_eq "$(code "$reader_token")" 200 "a scrape with the metrics-reader's token"
body="$(cat "$E2E_WORK/56-body")"
assert_contains "$body" 'leader_election_master_status{name="modelservice-controller"} 0' "controller-b's /metrics (a standby)"
assert_contains "$body" "rest_client_requests_total" "controller-b's /metrics"
wait_output 10 "the reader's reviews" "1 1" counts "$mark"

# 4. Within the TTL the answers come from the cache: no review at all.
mark="$(audit_mark)"
for _ in 1 2 3; do
  assert_eq "$(code "$reader_token")" 200 "a second scrape with the reader's token"
  assert_eq "$(code "$stranger_token")" 403 "a second scrape with the stranger's token"
done
sleep 2  # the audit log is written as requests complete; give a late line time
assert_eq "$(counts "$mark")" "0 0" "reviews for scrapes within the TTL"
log "ok: controller-b's /metrics: 401 / 403 / 200, $(grep -c . <<<"$body") lines to the reader, reviews cached"
