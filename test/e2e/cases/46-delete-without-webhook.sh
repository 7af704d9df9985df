# Deletion never depends on admission (validation ratcheting): an UPDATE of a
# ModelService that leaves spec as it was is skipped by the webhook
# configurations' matchConditions (and allowed by the webhook if it gets
# one), so
# 1. an object stored before a rule was tightened (here: stored while the
#    validating configuration was away, with a strategy only the webhook
#    rejects) can have its labels edited, and, ratcheted per value, its spec
#    scaled (spec.replicas) and edited in fields the rule does not read,
#    while a change to a value the rule reads is denied;
#    and while a ModelService is being deleted, a change of its spec to one
#    the rules refuse is still denied (the chaos soak, case 85, stored such a
#    spec when deletion alone skipped the webhook);
# 2. with the webhook stopped (failurePolicy Fail), labels can still be edited,
#    a spec change fails with the API server's webhook error, and
#    `kubectl delete ms` completes: the controller's finalizer removal goes
#    through and the owned Deployment and Service are gone.
# timeout: 180
# alone: true
# logs: webhook controller apiserver
ns=e2e-ratchet
saved="$E2E_WORK/ratchet-validating.json"
cleanup() {
  if ! k get validatingwebhookconfiguration "$vwc" >/dev/null 2>&1 && [[ -s "$saved" ]]; then
    k create -f "$saved" >/dev/null 2>&1 || true
  fi
  proc_alive webhook || start_webhook
  k -n "$ns" patch ms rt-held --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  ( delete_ms_wait "$ns" 30 rt-new rt-old ) >/dev/null 2>&1 || true
}
trap cleanup EXIT
new_ns "$ns"
vwc="$(k get validatingwebhookconfigurations -o name | grep modelservice | head -1)"
vwc="${vwc#*/}"
[[ -n "$vwc" ]] || fail "no ModelService validating webhook configuration"

finalized() { [[ "$(jp "ms/$2" '{.metadata.finalizers}' -n "$1")" == *modelops.dev/cleanup* ]]; }
denied_by_webhook() {  # the invalid strategy is refused through the API server
  local out
  out="$(ms_yaml rt-probe 'model: m' 'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}' \
    | k -n "$ns" apply --dry-run=server -f - 2>&1)" && return 1
  [[ "$out" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]]
}

# ------------------------------------------------------------------ 1. stored before the rule
ms_yaml rt-new 'model: m' | k -n "$ns" apply -f - >/dev/null
k get validatingwebhookconfiguration "$vwc" -o json \
  | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' >"$saved"
k delete validatingwebhookconfiguration "$vwc" >/dev/null
stored_invalid() {
  ms_yaml rt-old 'model: m' 'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}' \
    | k -n "$ns" create -f - >/dev/null 2>&1
}
wait_for 30 "a ModelService the webhook would reject is stored (validating configuration away)" stored_invalid
k create -f "$saved" >/dev/null
wait_for 30 "the validating webhook rejects that strategy again" denied_by_webhook
wait_for 30 "the controller put its finalizer on $ns/rt-old" finalized "$ns" rt-old
wait_for 30 "the controller put its finalizer on $ns/rt-new" finalized "$ns" rt-new

out="$(k -n "$ns" label ms rt-old team=search 2>&1)" || fail "labelling the stored invalid object: $out"
assert_eq "$(jp ms/rt-old '{.metadata.labels.team}' -n "$ns")" "search" "label on rt-old"
out="$(k -n "$ns" patch ms rt-old --type merge -p '{"spec":{"model":"m2","replicas":2}}' 2>&1)" \
  || fail "scaling and editing another field of the stored invalid object: $out"
assert_eq "$(jp ms/rt-old '{.spec.model} {.spec.replicas}' -n "$ns")" "m2 2" "rt-old edited and scaled (ratcheted per value)"
out="$(k -n "$ns" patch ms rt-old --type merge -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"0%"}}}}' 2>&1)" \
  && fail "a change of a value the rule reads was admitted: $out"
assert_contains "$out" 'admission webhook "validate.modelservices.modelops.dev" denied the request' "maxSurge change of rt-old"
assert_contains "$out" "may not be 0 when maxSurge is 0" "the denial names the rule"

ms_yaml rt-held 'model: m' | k -n "$ns" apply -f - >/dev/null
k -n "$ns" patch ms rt-held --type json -p '[{"op":"add","path":"/metadata/finalizers/-","value":"e2e.modelops.dev/hold"}]' >/dev/null 2>&1 \
  || k -n "$ns" patch ms rt-held --type merge -p '{"metadata":{"finalizers":["e2e.modelops.dev/hold"]}}' >/dev/null
k -n "$ns" delete ms rt-held --wait=false >/dev/null
deleting() { [[ -n "$(jp ms/rt-held '{.metadata.deletionTimestamp}' -n "$ns")" ]]; }
wait_for 30 "$ns/rt-held is being deleted" deleting
out="$(k -n "$ns" patch ms rt-held --type merge -p '{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":0}}}}' 2>&1)" \
  && fail "an invalid spec change of a ModelService being deleted was admitted: $out"
assert_contains "$out" 'admission webhook "validate.modelservices.modelops.dev" denied the request' "invalid spec change while being deleted"
k -n "$ns" patch ms rt-held --type json -p '[{"op":"remove","path":"/metadata/finalizers/'"$(k -n "$ns" get ms rt-held -o json | jq '.metadata.finalizers | index("e2e.modelops.dev/hold")')"'"}]' >/dev/null
wait_for 30 "$ns/rt-held deleted once its hold is removed" gone "$ns" ms rt-held

# ------------------------------------------------------------------ 2. webhook stopped
proc_stop webhook KILL 5
out="$(k -n "$ns" label ms rt-new team=search 2>&1)" || fail "labelling with the webhook down: $out"
out="$(k -n "$ns" patch ms rt-new --type merge -p '{"spec":{"model":"m2"}}' 2>&1)" \
  && fail "a spec change was admitted with the webhook down: $out"
assert_contains "$out" 'failed calling webhook' "spec change with the webhook down"
wait_for 30 "the Deployment of $ns/rt-new exists" exists "$ns" deployment rt-new
t0="$(now)"
delete_ms_wait "$ns" 45 rt-new rt-old
log "both deleted $(elapsed "$t0")s after kubectl delete, with the webhook down"
for n in rt-new rt-old; do
  gone "$ns" deployment "$n" || fail "Deployment $n left behind"
  gone "$ns" service "$n" || fail "Service $n left behind"
done
