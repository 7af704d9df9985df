# Certificate rotation inside the Pods, certificate mode self, through the
# real kubelet (its syncFrequency is 5 s on this node: how soon an updated
# Secret reaches a mounted volume):
#   1. `helm upgrade --reuse-values --set certificates.self.servingCertValidity=1m`:
#      the value reaches the controller's flags and the Deployment rolls out
#      (one new Pod before an old one goes, so a webhook serves throughout);
#   2. a serving certificate by hand (tls.crt emptied, as
#      docs/operator/certificates.md says): the leader issues one at once, of
#      the new lifetime, signed by the same CA, and both webhook containers
#      serve it;
#   3. the scheduled renewal at 2/3 of that lifetime: the leader issues the
#      next one on time, and both webhook containers serve it before the
#      previous one expires.
# Throughout 1, 2 and 3 admissions through the API server never fail; in 2
# and 3 the CA and both caBundles stay the same, and the webhook containers
# reload the files without a restart (same container, restart count
# unchanged) and log each reload.
# timeout: 300
# needs: real-node
# logs: none
need_real_node
ns=e2e-real-rotation
new_ns "$ns"
tmp="$(mktemp -d)"
validity=1m
ca0="$(operator_secret ca-current.crt | fingerprint)"
[[ -n "$ca0" ]] || fail "no CA in Secret $OPERATOR_SECRET"

# Admissions through the API server, in the background, from the upgrade to the
# end of the second rotation.
rm -f "$tmp/stop" "$tmp/result"
admission_loop "$ns" r "$tmp/stop" "$tmp/result" 0.2 &
loop=$!

# ---- 1. helm upgrade with a short serving certificate lifetime
t0="$(now)"
(cd "$E2E_ROOT" && real_helm upgrade modelservice charts/modelservice-operator -n "$OPERATOR_NS" --reuse-values \
  --set certificates.self.servingCertValidity=$validity) >"$tmp/upgrade.out" 2>&1 || fail "helm upgrade:\n$(cat "$tmp/upgrade.out")"
assert_eq "$(k -n "$OPERATOR_NS" get deployment modelservice -o json \
  | jq -r '.spec.template.spec.containers[] | select(.name == "controller") | .args[] | select(startswith("--serving-cert-validity"))')" \
  "--serving-cert-validity=$validity" "the controller's flag after helm upgrade"
k -n "$OPERATOR_NS" rollout status deployment/modelservice --timeout=150s >/dev/null || fail "the upgrade did not roll out"
two_new() { [[ "$(operator_ready_count)" == 2 && "$(operator_pods | grep -c .)" == 2 ]]; }
wait_for 60 "two operator Pods of the new template Ready, the old ones gone" two_new
log "helm upgrade rolled out in $(elapsed "$t0")s"
echo "TIMING real-node helm upgrade (rolled out) $(elapsed "$t0")s" >>"$E2E_WORK/timings.txt"

# reloads POD: how often its webhook logged loading a new serving certificate.
reloads() {
  k -n "$OPERATOR_NS" logs "$1" -c webhook | jq -r 'select(.msg | startswith("loaded a new serving certificate")) | .level' \
    | grep -c '^info$' || true
}
mapfile -t pods < <(operator_pods)
declare -A ip cid reloads0
for p in "${pods[@]}"; do
  reloads0[$p]="$(reloads "$p")"
  ip[$p]="$(jp "pod/$p" '{.status.podIP}' -n "$OPERATOR_NS")"
  cid[$p]="$(jp "pod/$p" '{.status.containerStatuses[?(@.name=="webhook")].containerID} {.status.containerStatuses[?(@.name=="webhook")].restartCount}' -n "$OPERATOR_NS")"
done
fp0="$(operator_secret tls.crt | fingerprint)"
for p in "${pods[@]}"; do wait_output 30 "$p serves the Secret's certificate" "$fp0" served_fp "${ip[$p]}"; done


# secret_fp_changed_from FP: the Secret's tls.crt is a certificate other than FP.
secret_fp_changed_from() { local f; f="$(operator_secret tls.crt | fingerprint)"; [[ -n "$f" && "$f" != "$1" ]]; }
unix() { date -u -d "$(operator_secret tls.crt | openssl x509 -noout "-$1" | cut -d= -f2)" +%s; }

# ---- 2. by hand: tls.crt emptied, a new one issued at once
out="$(k -n "$OPERATOR_NS" patch secret "$OPERATOR_SECRET" --type=merge -p '{"data":{"tls.crt":""}}' 2>&1)" \
  || fail "emptying tls.crt: $out"  # (kubectl warns that the tls.crt it sent holds no PEM)
wait_for 10 "a new serving certificate in the Secret" secret_fp_changed_from "$fp0"
fp1="$(operator_secret tls.crt | fingerprint)"
nb1="$(unix startdate)" na1="$(unix enddate)"
assert_eq "$(( na1 - nb1 ))" 66 "lifetime of the new serving certificate in seconds (1m, started 6 s early)"
t1="$(now)"
for p in "${pods[@]}"; do wait_output 30 "$p serves the hand-made certificate" "$fp1" served_fp "${ip[$p]}"; done
log "both webhooks serve the new certificate $(elapsed "$t1")s after it reached the Secret"

# ---- 3. the scheduled renewal at 2/3 of the lifetime
renew_at=$(( nb1 + (na1 - nb1) * 2 / 3 ))
wait_for $(( renew_at - $(date +%s) + 15 )) "the scheduled renewal (due $(date -u -d "@$renew_at" +%T))" secret_fp_changed_from "$fp1"
renewed="$(date +%s)"
fp2="$(operator_secret tls.crt | fingerprint)"
assert_le "$(( renewed - renew_at ))" 5 "seconds between the renewal's due time and the new certificate in the Secret"
t2="$(now)"
for p in "${pods[@]}"; do wait_output 30 "$p serves the renewed certificate" "$fp2" served_fp "${ip[$p]}"; done
took="$(elapsed "$t2")"
assert_le "$(date +%s)" "$na1" "all webhooks serve the renewed certificate before the previous one expires"
echo "TIMING real-node certificate renewal (Secret -> both Pods serve it through the kubelet) ${took}s" >>"$E2E_WORK/timings.txt"

sleep 1
touch "$tmp/stop"
wait "$loop"
read -r n failed <"$tmp/result"
assert_gt "$n" 20 "admissions sent during the upgrade and the two rotations"
assert_eq "$failed" 0 "admissions that failed during the upgrade and the two rotations (of $n)"

# ---- the same CA throughout, no restart, each reload logged
assert_eq "$(operator_secret ca-current.crt | fingerprint)" "$ca0" "the Secret's CA"
for w in "validatingwebhookconfiguration modelservice-validating" "mutatingwebhookconfiguration modelservice-mutating"; do
  # shellcheck disable=SC2086
  assert_eq "$(ca_bundle $w | fingerprint)" "$ca0" "caBundle of $w"
done
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.status.containerStatuses[?(@.name=="webhook")].containerID} {.status.containerStatuses[?(@.name=="webhook")].restartCount}' -n "$OPERATOR_NS")" \
    "${cid[$p]}" "$p: webhook container and restart count (no restart)"
  assert_eq "$(( $(reloads "$p") - reloads0[$p] ))" 2 "$p: the webhook's log lines (info) for the two reloads"
done
rm -rf "$tmp"
