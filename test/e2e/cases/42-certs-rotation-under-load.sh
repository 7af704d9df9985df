# Certificate rotation under load (issue 22): a serving certificate with a
# 2-minute lifetime (CA 5 minutes) rotates again and again while
# `kubectl apply --dry-run=server` runs at >= 5 requests/s for 5 minutes,
# with 0 failed requests. The webhook's Secret volume follows the Secret
# 10 s late (test/e2e/certs/secret-volume.sh --delay 10, a slow kubelet),
# so a rotation that did not overlap old and new would fail requests here.
# Within the 5 minutes: the serving certificate is renewed at 2/3 of its
# life (at least twice, each loaded by the webhook), and the CA rotates: the
# new CA joins the bundle (2 CAs), signs 25 s later (the propagation delay of
# a 5-minute CA), and the old one leaves the bundle 25 s after that.
# It runs beside the other cases (run.sh: "beside"), its load from two
# workers; the cases that stop or reconfigure the API server or the suite's
# webhook ("alone") wait for it.
# timeout: 480
# beside: true
# logs: e2e-certs-b-webhook e2e-certs-b-controller e2e-certs-b-volume
source "$E2E_ROOT/test/e2e/certs/lib.sh"
t_case=$(now)
tmp="$(mktemp -d)"
pids=()
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; certs_teardown; rm -rf "$tmp"' EXIT
CERTS_VOLUME_DELAY=10
certs_setup e2e-certs-b --ca-cert-validity 5m --serving-cert-validity 2m
log "set-up done in $(elapsed "$t_case")s"

issued() { metric "$CERTS_CTRL_METRICS" "modelservice_webhook_certificates_issued_total{certificate=\"$1\"}" || echo 0; }
wlog="$E2E_WORK/logs/$CERTS_WEBHOOK.log"
serving0="$(issued serving)" ca0="$(issued ca)"
reloads0="$(grep -c 'loaded a new serving certificate' "$wlog" || true)"

duration=300 workers=2
t_load=$(now)
stop_at=$(( $(date +%s) + duration ))
for (( i = 1; i <= workers; i++ )); do
  ( certs_apply_dry_run "$tmp/load-$i.txt" "$stop_at" ) &
  pids+=($!)
done
# How many CAs the API server is told to trust, every 2 s.
(
  while (( $(date +%s) < stop_at )); do
    echo "$(date +%s) $(certs_bundle validatingwebhookconfiguration "$CERTS_VALIDATING" | grep -c 'BEGIN CERTIFICATE')"
    sleep 2
  done
) >"$tmp/bundle.txt" 2>/dev/null &
pids+=($!)
wait "${pids[@]}" || true
pids=()
load_s="$(elapsed "$t_load")"

cat "$tmp"/load-*.txt >"$tmp/load.txt"
ok="$(grep -c ' ok$' "$tmp/load.txt" || true)" failed="$(grep -c ' FAIL ' "$tmp/load.txt" || true)"
rate="$(awk -v n="$(( ok + failed ))" -v s="$load_s" 'BEGIN { printf "%.1f", n / s }')"
grep -m 5 ' FAIL ' "$tmp/load.txt" >&2 || true
serving_n=$(( $(issued serving | cut -d. -f1) - ${serving0%.*} )) ca_n=$(( $(issued ca | cut -d. -f1) - ${ca0%.*} ))
reloads=$(( $(grep -c 'loaded a new serving certificate' "$wlog" || true) - reloads0 ))
log "load: $ok passed, $failed failed in ${load_s}s ($rate requests/s); serving certificates issued: $serving_n, CAs: $ca_n; webhook reloads: $reloads"
echo "TIMING 42-certs-rotation-under-load: $(( ok + failed )) dry-run applies in ${load_s}s ($rate/s), $failed failed; $serving_n serving certificates and $ca_n CA issued, $reloads reloads" \
  >>"$E2E_WORK/timings.txt"
assert_eq "$failed" 0 "requests failed across the rotations"
assert_le 5 "$rate" "requests per second"
assert_le 2 "$serving_n" "serving certificates issued during the load"
assert_le 2 "$reloads" "serving certificates the webhook loaded during the load"
assert_eq "$ca_n" 1 "CAs issued during the load"
clog="$E2E_WORK/logs/$CERTS_CONTROLLER.log"
assert_contains "$(cat "$clog")" "joins the trust bundle" "controller log"
assert_contains "$(cat "$clog")" "signs from now on" "controller log"
# The bundle: one CA, two during the overlap, then one again.
assert_eq "$(awk '{ print $2 }' "$tmp/bundle.txt" | uniq | tr '\n' ' ')" "1 2 1 " "CAs in the bundle over time (sampled every 2 s)"
assert_eq "$(metric "$CERTS_WH_METRICS" certwatcher_read_certificate_errors_total)" 0 "certificate read errors in the webhook"
# What the webhook serves now is the Secret's certificate (once the volume caught up).
certs_secret_key tls.crt >"$tmp/tls.crt"
wait_for 20 "the volume holds the Secret's certificate" cmp -s "$CERTS_DIR/tls.crt" "$tmp/tls.crt"
served() {
  openssl s_client -connect "127.0.0.1:$CERTS_PORT" -servername "$CERTS_SERVICE.$CERTS_NS.svc" </dev/null 2>/dev/null \
    | openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
want="$(openssl x509 -noout -fingerprint -sha256 -in "$tmp/tls.crt")"
wait_output 5 "the webhook serves the Secret's certificate" "$want" served
log "case done in $(elapsed "$t_case")s"
