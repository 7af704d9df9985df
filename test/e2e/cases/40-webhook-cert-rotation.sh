# The webhook's serving certificate is rotated (gen-certs.sh --reuse-ca into
# its cert dir, several times) while requests run in a loop for ~15 s, both
# through the API server (create + delete of a ModelService, and server-side
# dry runs) and straight to the webhook on new TLS connections: zero failures,
# the webhook logs a reload for each rotation and serves the new certificate.
# timeout: 120
# alone: true
# logs: webhook
ns=e2e-rotate
new_ns "$ns"
tmp="$(mktemp -d)"
pids=()
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$tmp"' EXIT
wlog="$E2E_WORK/logs/webhook.log"
reloads_before="$(grep -c 'loaded a new serving certificate' "$wlog" || true)"
serial() {
  openssl s_client -connect "127.0.0.1:$WEBHOOK_PORT" -servername 127.0.0.1 \
    ${WEBHOOK_CLIENT_DIR:+-cert "$WEBHOOK_CLIENT_DIR/kube-apiserver.crt" -key "$WEBHOOK_CLIENT_DIR/kube-apiserver.key"} </dev/null 2>/dev/null \
    | openssl x509 -noout -serial 2>/dev/null
}
serial0="$(serial)"
[[ -n "$serial0" ]] || fail "cannot read the served certificate"

review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"rot","kind":{"group":"modelops.dev","version":"v1","kind":"ModelService"},"resource":{"group":"modelops.dev","version":"v1","resource":"modelservices"},"namespace":"e2e-rotate","name":"x","operation":"CREATE","userInfo":{"username":"e2e"},"object":{"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"x","namespace":"e2e-rotate"},"spec":{"model":"m"}}}}'
stop_at=$(( $(date +%s) + 15 ))
# Loop 1: through the API server (real create + delete, then a dry run).
(
  i=0
  while (( $(date +%s) < stop_at )); do
    i=$(( i + 1 ))
    if out="$(ms_yaml "rot-$i" 'model: m' | "$KUBECTL" -n "$ns" create -f - 2>&1)"; then echo "ok create $i"; else echo "FAIL create $i: $out"; fi
    if out="$(ms_yaml "rot-dry-$i" 'model: m' | "$KUBECTL" -n "$ns" apply --dry-run=server -f - 2>&1)"; then echo "ok dry-run $i"; else echo "FAIL dry-run $i: $out"; fi
    "$KUBECTL" -n "$ns" delete ms "rot-$i" --wait=false >/dev/null 2>&1 || true
  done
) >"$tmp/api.txt" 2>&1 &
pids+=($!)
# Loop 2: straight to the webhook, a new TLS connection per request, verifying
# the certificate against the CA.
(
  while (( $(date +%s) < stop_at )); do
    if out="$(webhook_curl -sS --max-time 5 --cacert "$CERT_DIR/ca.crt" -H 'Content-Type: application/json' \
               --data-binary "$review" "https://127.0.0.1:$WEBHOOK_PORT/mutate" 2>&1)" && [[ "$out" == *'"allowed":true'* ]]; then
      echo ok
    else
      echo "FAIL direct: $out"
    fi
  done
) >"$tmp/direct.txt" 2>&1 &
pids+=($!)

rotations=0
for (( r = 0; r < 4; r++ )); do
  sleep 3
  "$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$CERT_DIR" --ip 127.0.0.1 --dns localhost --reuse-ca >/dev/null 2>"$tmp/gen.err" \
    || fail "gen-certs.sh --reuse-ca failed: $(cat "$tmp/gen.err")"
  rotations=$(( rotations + 1 ))
  log "rotated the serving certificate ($rotations)"
done
wait "${pids[@]}" || true
pids=()

api_ok="$(grep -c '^ok' "$tmp/api.txt" || true)"; api_fail="$(grep -c '^FAIL' "$tmp/api.txt" || true)"
dir_ok="$(grep -c '^ok' "$tmp/direct.txt" || true)"; dir_fail="$(grep -c '^FAIL' "$tmp/direct.txt" || true)"
log "through the API server: $api_ok ok, $api_fail failed; direct: $dir_ok ok, $dir_fail failed"
grep -m 5 '^FAIL' "$tmp/api.txt" "$tmp/direct.txt" >&2 || true
assert_eq "$api_fail" 0 "failed requests through the API server during rotation"
assert_eq "$dir_fail" 0 "failed direct requests during rotation"
assert_gt "$api_ok" 10 "requests through the API server during rotation"
assert_gt "$dir_ok" 20 "direct requests during rotation"

wait_for 5 "the webhook logged a reload per rotation" bash -c \
  "(( \$(grep -c 'loaded a new serving certificate' '$wlog') >= $reloads_before + $rotations ))"
serial1="$(serial)"
[[ "$serial1" != "$serial0" ]] || fail "the webhook still serves the old certificate ($serial0)"
assert_eq "$(openssl x509 -noout -serial -in "$CERT_DIR/tls.crt")" "$serial1" "served certificate = the one on disk"
k -n "$ns" delete ms --all --wait=false >/dev/null 2>&1 || true
