# Certificate rotation inside the Pods: a new serving certificate (the same
# CA, so the webhook configurations' caBundle stays) is written into the
# Secret modelservice-system/modelservice-webhook-tls; the kubelet updates the
# mounted volume at its next sync of each Pod (the real node's syncFrequency
# is 5 s), and both webhook containers serve the new certificate without a
# restart (same container, restart count unchanged), log that they loaded it,
# and no admission through the API server fails meanwhile.
# timeout: 150
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-rotation
new_ns "$ns"
certs="$E2E_REAL_DIR/operator/certs"
[[ -s "$certs/ca.key" ]] || fail "no webhook CA in $certs (test/e2e/operator/install.sh makes it)"

mapfile -t pods < <(operator_pods)
declare -A ip cid
for p in "${pods[@]}"; do
  ip[$p]="$(jp "pod/$p" '{.status.podIP}' -n "$OPERATOR_NS")"
  cid[$p]="$(jp "pod/$p" '{.status.containerStatuses[?(@.name=="webhook")].containerID} {.status.containerStatuses[?(@.name=="webhook")].restartCount}' -n "$OPERATOR_NS")"
done
# served_fp IP: the SHA-256 fingerprint of the certificate the webhook at
# IP:9443 serves (a TLS handshake from inside the node's network namespace).
served_fp() {
  node_exec sh -c "openssl s_client -connect $1:9443 -servername modelservice-webhook.modelservice-system.svc </dev/null 2>/dev/null \
    | openssl x509 -noout -fingerprint -sha256" | cut -d= -f2
}
old="$(openssl x509 -noout -fingerprint -sha256 -in "$certs/tls.crt" | cut -d= -f2)"
for p in "${pods[@]}"; do assert_eq "$(served_fp "${ip[$p]}")" "$old" "certificate served by $p before"; done

# Admissions through the API server, in the background, for the whole rotation.
rm -f "$E2E_WORK/rotation.stop" "$E2E_WORK/rotation.result"
(
  n=0 failed=0
  while [[ ! -e "$E2E_WORK/rotation.stop" ]]; do
    n=$(( n + 1 ))
    out="$(ms_yaml "r-$n" "model: m" | k -n "$ns" create --dry-run=server -f - -o 'jsonpath={.spec.port}' 2>&1)"
    [[ "$out" == 8080 ]] || { failed=$(( failed + 1 )); echo "admission $n: $out" >&2; }
    sleep 0.2
  done
  echo "$n $failed" >"$E2E_WORK/rotation.result"
) &
loop=$!

"$E2E_ROOT/certs-scripts/gen-certs.sh" --out "$certs" --reuse-ca >/dev/null 2>&1 || fail "gen-certs.sh --reuse-ca"
new="$(openssl x509 -noout -fingerprint -sha256 -in "$certs/tls.crt" | cut -d= -f2)"
[[ "$new" != "$old" ]] || fail "gen-certs.sh made the same certificate again"
t0="$(now)"
k -n "$OPERATOR_NS" create secret tls modelservice-webhook-tls --cert "$certs/tls.crt" --key "$certs/tls.key" \
  --dry-run=client -o yaml | k apply -f - >/dev/null
for p in "${pods[@]}"; do
  wait_output 60 "$p serves the new certificate" "$new" served_fp "${ip[$p]}"
done
took="$(elapsed "$t0")"
echo "TIMING real-node certificate rotation (Secret updated -> both Pods serve it) ${took}s" >>"$E2E_WORK/timings.txt"
sleep 2
touch "$E2E_WORK/rotation.stop"
wait "$loop"
read -r n failed <"$E2E_WORK/rotation.result"
assert_gt "$n" 5 "admissions sent during the rotation"
assert_eq "$failed" 0 "admissions that failed during the rotation (of $n)"

for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.status.containerStatuses[?(@.name=="webhook")].containerID} {.status.containerStatuses[?(@.name=="webhook")].restartCount}' -n "$OPERATOR_NS")" \
    "${cid[$p]}" "$p: webhook container and restart count (no restart)"
  assert_contains "$(k -n "$OPERATOR_NS" logs "$p" -c webhook | jq -r 'select(.msg | startswith("loaded a new serving certificate")) | .level')" \
    info "$p: the webhook's log line for the reload"
done
