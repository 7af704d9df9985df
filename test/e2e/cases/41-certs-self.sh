# Webhook certificates in --cert-mode self (the default), end to end with a
# webhook and a controller of the case's own (test/e2e/certs/lib.sh), the API
# server reaching the webhook through a Service as in a cluster:
#  1. the controller creates the Secret (a CA and an ECDSA P-256 serving
#     certificate for the Service's four DNS names, verified with openssl)
#     and injects the CA into both webhook configurations; admission through
#     the API server then works (a denial comes from the case's webhook);
#  2. `kubectl apply` of the configurations as shipped (caBundle: "") is
#     repaired within 5 s, and the next apply passes;
#  3. emptying tls.crt (a rotation by hand) makes a new serving certificate
#     from the same CA; deleting the Secret makes it again with a new CA,
#     while the old CA stays in the bundle for a while: requests keep
#     passing throughout;
#  4. --version of both programs, and modelservice_build_info on both;
#     the certificate's expiry on both, certwatcher_* on the webhook.
# timeout: 240
# logs: e2e-certs-a-webhook e2e-certs-a-controller e2e-certs-a-volume
source "$E2E_ROOT/test/e2e/certs/lib.sh"
t_case=$(now)
trap 'certs_teardown; rm -rf "${tmp:-}"' EXIT
tmp="$(mktemp -d)"
certs_setup e2e-certs-a
log "set-up done in $(elapsed "$t_case")s"

# ---- 1. the Secret and the injected CA
secret_type="$(k -n "$CERTS_NS" get secret "$CERTS_SECRET" -o 'jsonpath={.type}')"
assert_eq "$secret_type" kubernetes.io/tls "type of the Secret"
keys="$(k -n "$CERTS_NS" get secret "$CERTS_SECRET" -o json | jq -r '.data | keys | join(" ")')"
assert_eq "$keys" "ca-current.crt ca-current.key ca.crt tls.crt tls.key" "keys of the Secret"
certs_secret_key ca.crt >"$tmp/ca.crt"
certs_secret_key tls.crt >"$tmp/tls.crt"
certs_secret_key tls.key >"$tmp/tls.key"
out="$(openssl verify -purpose sslserver -CAfile "$tmp/ca.crt" "$tmp/tls.crt" 2>&1)" || fail "openssl verify: $out"
sans="$(openssl x509 -noout -ext subjectAltName -in "$tmp/tls.crt" | tail -n 1 | tr -d ' ')"
assert_eq "$sans" "DNS:modelservice-webhook,DNS:modelservice-webhook.$CERTS_NS,DNS:modelservice-webhook.$CERTS_NS.svc,DNS:modelservice-webhook.$CERTS_NS.svc.cluster.local" \
  "DNS names of the serving certificate"
assert_contains "$(openssl pkey -noout -text -in "$tmp/tls.key")" "prime256v1" "serving key"
assert_eq "$(certs_bundle validatingwebhookconfiguration "$CERTS_VALIDATING")" "$(cat "$tmp/ca.crt")" "validating caBundle"
assert_eq "$(certs_bundle mutatingwebhookconfiguration "$CERTS_MUTATING")" "$(cat "$tmp/ca.crt")" "mutating caBundle"
assert_eq "$(cmp -s "$CERTS_DIR/tls.crt" "$tmp/tls.crt" && echo same)" same "the webhook's --cert-dir holds the Secret's tls.crt"
[[ ! -e "$CERTS_DIR/ca-current.key" ]] || fail "the CA's key reached the webhook's volume"
# (The suite's webhook validates in this namespace too: either may be the
# one quoted; the case's webhook must have denied it as well.)
denials() {
  metric "$CERTS_WH_METRICS" 'modelservice_admission_decisions_total{decision="denied",operation="CREATE",webhook="/validate"}' || echo 0
}
denied0="$(denials)"
out="$(ms_yaml bad 'model: m' 'strategy:' '  type: RollingUpdate' '  rollingUpdate:' '    maxSurge: 0' \
  '    maxUnavailable: 0' | k -n "$CERTS_NS" apply --dry-run=server -f - 2>&1 || true)"
assert_contains "$out" "denied the request: spec.strategy.rollingUpdate.maxUnavailable" "denial through the API server"
assert_eq "$(( $(denials | cut -d. -f1) - ${denied0%.*} ))" 1 "denials by the case's webhook"

# ---- 2. an apply that blanks caBundle is repaired within 5 s
injections() {
  local v total=0 c
  for c in "$CERTS_VALIDATING" "$CERTS_MUTATING"; do
    v="$(metric "$CERTS_CTRL_METRICS" "modelservice_webhook_ca_bundle_injections_total{configuration=\"$c\"}" || echo 0)"
    total=$(( total + ${v%.*} ))
  done
  echo "$total"
}
repaired() {
  [[ -n "$(k get validatingwebhookconfiguration "$CERTS_VALIDATING" -o 'jsonpath={.webhooks[0].clientConfig.caBundle}')" &&
     -n "$(k get mutatingwebhookconfiguration "$CERTS_MUTATING" -o 'jsonpath={.webhooks[0].clientConfig.caBundle}')" ]]
}
before="$(injections)"
k apply -f "$CERTS_CONFIGS" >"$tmp/apply.out" 2>&1 || fail "kubectl apply of the configurations: $(cat "$tmp/apply.out")"
t_apply=$(now)
assert_contains "$(cat "$tmp/apply.out")" "configured" "kubectl apply wrote the blank caBundle"
until repaired; do
  awk -v t="$(elapsed "$t_apply")" 'BEGIN { exit !(t < 5) }' || fail "caBundle not repaired 5 s after the apply"
  sleep 0.1
done
repair_s="$(elapsed "$t_apply")"
log "caBundle repaired ${repair_s}s after kubectl apply"
echo "TIMING 41-certs-self: caBundle repaired ${repair_s}s after kubectl apply" >>"$E2E_WORK/timings.txt"
assert_le "$repair_s" 5 "seconds until the blanked caBundle is back"
assert_eq "$(certs_bundle validatingwebhookconfiguration "$CERTS_VALIDATING")" "$(cat "$tmp/ca.crt")" "repaired caBundle"
assert_eq "$(( $(injections) - before ))" 2 "caBundle writes counted (one per configuration)"
out="$(ms_yaml after-repair 'model: m' | k -n "$CERTS_NS" apply --dry-run=server -f - 2>&1)" \
  || fail "the next apply after the repair failed: $out"
log "next apply: $out"

# Up to here the webhook's volume never held a broken pair (an emptied
# tls.crt, below, may reach it for a moment: the webhook keeps its pair).
assert_eq "$(metric "$CERTS_WH_METRICS" certwatcher_read_certificate_errors_total)" 0 "certificate read errors"

# ---- 3. tls.crt emptied, then the Secret deleted: made again, and nothing fails meanwhile
old_fp="$(certs_fingerprints <"$tmp/ca.crt")"
reloads() { grep -c 'loaded a new serving certificate' "$E2E_WORK/logs/$CERTS_WEBHOOK.log" || true; }
reloads0="$(reloads)"
stop_at=$(( $(date +%s) + 120 ))  # stopped below, once the new certificate serves
( certs_apply_dry_run "$tmp/load.txt" "$stop_at" ) &
load_pid=$!
# A new serving certificate by hand (docs/operator/certificates.md): tls.crt emptied.
k -n "$CERTS_NS" patch secret "$CERTS_SECRET" --type=merge -p '{"data":{"tls.crt":""}}' >/dev/null
reissued() {
  local crt
  crt="$(certs_secret_key tls.crt 2>/dev/null)" && [[ -n "$crt" ]] || return 1
  ! cmp -s <(echo "$crt") "$tmp/tls.crt" && openssl verify -CAfile "$tmp/ca.crt" <(echo "$crt") >/dev/null 2>&1
}
wait_for 10 "a new serving certificate from the same CA after tls.crt was emptied" reissued
wait_for 20 "the webhook loaded it" bash -c "(( \$(grep -c 'loaded a new serving certificate' '$E2E_WORK/logs/$CERTS_WEBHOOK.log') > $reloads0 ))"
reloads0="$(reloads)"
k -n "$CERTS_NS" delete secret "$CERTS_SECRET" >/dev/null
t_delete=$(now)
new_secret() {
  local fps
  fps="$(certs_secret_key ca.crt 2>/dev/null | certs_fingerprints)" || return 1
  [[ "$(wc -l <<<"$fps")" == 2 && "$(head -n 1 <<<"$fps")" == "$old_fp" ]]
}
wait_for 10 "Secret made again with a new CA, the old one still trusted" new_secret
log "Secret made again $(elapsed "$t_delete")s after the delete"
certs_secret_key ca.crt >"$tmp/ca2.crt"
bundles_are() {  # bundles_are FILE: both configurations carry that bundle
  [[ "$(certs_bundle validatingwebhookconfiguration "$CERTS_VALIDATING")" == "$(cat "$1")" &&
     "$(certs_bundle mutatingwebhookconfiguration "$CERTS_MUTATING")" == "$(cat "$1")" ]]
}
wait_for 10 "the configurations carry the new bundle" bundles_are "$tmp/ca2.crt"
certs_secret_key tls.crt >"$tmp/tls2.crt"
wait_for 20 "the webhook's volume holds the new serving certificate" cmp -s "$CERTS_DIR/tls.crt" "$tmp/tls2.crt"
wait_for 10 "the webhook loaded it" bash -c "(( \$(grep -c 'loaded a new serving certificate' '$E2E_WORK/logs/$CERTS_WEBHOOK.log') > $reloads0 ))"
# A few more requests with the new certificate, then stop the load.
n0="$(grep -c ok "$tmp/load.txt" || true)"
wait_for 20 "requests pass with the new certificate" bash -c "(( \$(grep -c ok '$tmp/load.txt') >= $n0 + 5 ))"
kill "$load_pid" 2>/dev/null || true
wait "$load_pid" 2>/dev/null || true
ok="$(grep -c ' ok$' "$tmp/load.txt" || true)" failed="$(grep -c ' FAIL ' "$tmp/load.txt" || true)"
grep -m 3 ' FAIL ' "$tmp/load.txt" >&2 || true
log "while tls.crt was emptied and the Secret deleted, and both made again: $ok requests passed, $failed failed"
assert_eq "$failed" 0 "requests failed while the certificates were made again"
assert_gt "$ok" 5 "requests while the certificates were made again"

# ---- 4. versions and metrics
for bin in "$WEBHOOK_BIN" "$CONTROLLER_BIN"; do
  v="$("$bin" --version)"
  version_re='^modelservice-(webhook|controller) version [0-9][^ ]* \(revision [0-9a-f]{12}(-dirty)?, built [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\)$'
  [[ "$v" =~ $version_re ]] || fail "--version of $bin: $v"
  log "$v"
done
for url in "$CERTS_WH_METRICS" "$CERTS_CTRL_METRICS"; do
  assert_contains "$(curl -fsS "$url")" 'modelservice_build_info{revision="' "build info on $url"
done
wh_metrics="$(curl -fsS "$CERTS_WH_METRICS")"
expiry="$(metric "$CERTS_WH_METRICS" 'modelservice_webhook_certificate_expiration_timestamp_seconds{certificate="serving"}')"
want="$(date -d "$(openssl x509 -noout -enddate -in "$tmp/tls2.crt" | cut -d= -f2)" +%s)"
assert_eq "$(awk -v e="$expiry" 'BEGIN { printf "%d", e }')" "$want" "the webhook's expiry gauge = notAfter of the served certificate"
assert_contains "$wh_metrics" "certwatcher_read_certificate_total " "certwatcher reads"
ctrl_expiry="$(metric "$CERTS_CTRL_METRICS" 'modelservice_webhook_secret_certificate_expiration_timestamp_seconds{certificate="serving"}')"
assert_eq "$(awk -v e="$ctrl_expiry" 'BEGIN { printf "%d", e }')" "$want" "controller's serving expiry gauge"
log "case done in $(elapsed "$t_case")s"
