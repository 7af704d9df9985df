# mTLS end to end (run.sh sets it up for the whole suite): kube-apiserver
# presents the client certificate named in its AdmissionConfiguration's
# WebhookAdmissionConfiguration kubeconfig, and the webhook (--client-ca)
# accepts it: 30 creates and 30 updates through kubectl all pass the webhook
# (its request counter rises by at least 60, mutate + validate each). A
# client without a certificate, with one from another CA, or with one from
# the same CA for a name other than kube-apiserver, is refused at the TLS
# handshake (no HTTP answer at all); the API server's certificate
# works straight too, and its TLS 1.2 and 1.3 sessions resume (they failed
# with "session id context uninitialized" under --client-ca).
# timeout: 180
# alone: true
# logs: webhook apiserver
[[ -n "${WEBHOOK_CLIENT_CA:-}" ]] || { log "the suite runs without mTLS: skipped"; exit 77; }
ns=e2e-mtls
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
url="https://127.0.0.1:$WEBHOOK_PORT/validate"
metrics="http://127.0.0.1:$WEBHOOK_METRICS_PORT/metrics"
served() { webhook_served "$metrics"; }
before="$(served)"

# Through the API server: creates and updates, each admitted by the webhook.
for i in $(seq 1 30); do
  ms_yaml "mtls-$i" 'model: m' | k -n "$ns" create -f - >/dev/null || fail "create mtls-$i failed"
done
for i in $(seq 1 30); do
  k -n "$ns" patch ms "mtls-$i" --type merge -p '{"spec":{"replicas":2}}' >/dev/null || fail "update mtls-$i failed"
done
assert_eq "$(k -n "$ns" get ms -o name | wc -l)" 30 "ModelServices created through the mTLS webhook"
after="$(served)"
assert_gt "$(( after - before ))" 119 "webhook answers with 200 (mutate + validate for 60 writes)"
# A denial still comes back from the webhook over mTLS.
out="$(ms_yaml mtls-bad 'model: m' 'strategy:' '  type: RollingUpdate' '  rollingUpdate:' '    maxSurge: 0' \
  '    maxUnavailable: 0' | k -n "$ns" create -f - 2>&1 || true)"
assert_contains "$out" 'admission webhook "validate.modelservices.modelops.dev" denied the request' "denial over mTLS"

review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"mtls","kind":{"group":"modelops.dev","version":"v1","kind":"ModelService"},"operation":"CREATE","object":{"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"x"},"spec":{"model":"m"}}}}'
post() { curl -sS --max-time 5 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' --data-binary "$review" -o "$tmp/body" -w '%{http_code}' "$@" "$url" 2>"$tmp/err"; }

# No client certificate: the handshake fails; no HTTP status.
code="$(post)" && fail "a client without a certificate was served (HTTP $code)"
assert_eq "$code" 000 "HTTP status seen by a client without a certificate"
log "no certificate: $(tr -d '\n' <"$tmp/err")"
# A certificate from another CA: refused the same way.
"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$tmp/other" --client intruder >/dev/null 2>&1
code="$(post --cert "$tmp/other/intruder.crt" --key "$tmp/other/intruder.key")" \
  && fail "a client with a foreign certificate was served (HTTP $code)"
assert_eq "$code" 000 "HTTP status seen by a client with a foreign certificate"
# A certificate from the very CA the webhook trusts, but for another name
# (what a tenant pod could get from a shared CA): refused too, since the
# webhook accepts only the names in --client-allowed-names (default
# kube-apiserver).
mkdir -p "$tmp/same"
cp "$WEBHOOK_CLIENT_DIR/ca.crt" "$WEBHOOK_CLIENT_DIR/ca.key" "$tmp/same/"
"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$tmp/same" --reuse-ca --client system:anonymous-pod >/dev/null 2>&1 \
  || fail "gen-certs.sh --reuse-ca --client system:anonymous-pod"
code="$(post --cert "$tmp/same/system:anonymous-pod.crt" --key "$tmp/same/system:anonymous-pod.key")" \
  && fail "a certificate of the trusted CA with CN system:anonymous-pod was served (HTTP $code)"
assert_eq "$code" 000 "HTTP status seen by a client of the trusted CA with another name"
# The API server's certificate: served.
code="$(post --cert "$WEBHOOK_CLIENT_DIR/kube-apiserver.crt" --key "$WEBHOOK_CLIENT_DIR/kube-apiserver.key")" \
  || fail "the API server's certificate was refused: $(cat "$tmp/err")"
assert_eq "$code" 200 "HTTP status with the API server's certificate"
assert_contains "$(cat "$tmp/body")" '"uid":"mtls"' "review answered with the API server's certificate"

# Session resumption under mTLS (issue 9's reproduction, openssl s_client).
for v in tls1_2 tls1_3; do
  s_client() {
    (sleep 1) | openssl s_client -"$v" -connect "127.0.0.1:$WEBHOOK_PORT" -CAfile "$CERT_DIR/ca.crt" \
      -cert "$WEBHOOK_CLIENT_DIR/kube-apiserver.crt" -key "$WEBHOOK_CLIENT_DIR/kube-apiserver.key" "$@" 2>&1
  }
  first="$(s_client -sess_out "$tmp/$v.pem")"
  assert_contains "$first" "New, TLSv1." "$v first handshake"
  again="$(s_client -sess_in "$tmp/$v.pem")"
  assert_contains "$again" "Reused, TLSv1." "$v resumed session"
  assert_not_contains "$again" "alert internal error" "$v resumption"
done
k delete ns "$ns" --wait=false >/dev/null 2>&1 || true
