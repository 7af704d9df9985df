# No object gets stuck (issue 13 §2), against the real API server:
#  1. the reproduction: the owned Deployment loses its managed-by label (the
#     controller's label-selected watch no longer shows it), is scaled by hand
#     to 7, and the Service is deleted -> the label comes back, replicas go
#     back to 2, the Service is recreated;
#  2. a ModelService whose name is taken by a Deployment the user made: the
#     Deployment is never adopted or changed, the ModelService is Failed with
#     reason NameConflict and a Warning Event, the controller does not loop
#     (audit log), and once the user deletes their Deployment the ModelService
#     gets its own;
#  3. deleting a ModelService whose Deployment is unlabelled and held by a
#     finalizer of someone else: the ModelService keeps its finalizer until
#     the Deployment is really gone.
# timeout: 240
# logs: controller
ns=e2e-stuck
new_ns "$ns"
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
field() { k -n "$ns" get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }

# ---- 1. the reproduction from the issue
k -n "$ns" apply -f - >/dev/null <<<'{"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"lbl"},"spec":{"model":"m","replicas":2}}'
wait_for 30 "Deployment lbl" exists "$ns" deployment lbl
wait_for 30 "Service lbl" exists "$ns" service lbl
k -n "$ns" label deploy lbl app.kubernetes.io/managed-by- >/dev/null
k -n "$ns" scale deploy lbl --replicas=7 >/dev/null
k -n "$ns" delete svc lbl >/dev/null
label_back() { [[ "$(field deployment lbl '{.metadata.labels.app\.kubernetes\.io/managed-by}')" == modelservice-controller ]]; }
wait_for 30 "managed-by label restored on Deployment lbl" label_back
wait_for 30 "Deployment lbl back at 2 replicas" deploy_replicas_is "$ns" lbl 2
wait_for 30 "Service lbl recreated" exists "$ns" service lbl
assert_eq "$(field service lbl '{.metadata.ownerReferences[0].name}')" lbl "recreated Service owned by lbl"
# Not stuck, not failed: on the whole cluster the repaired Deployment's two
# pods may already be Ready (KWOK starts them within a second).
phase="$(field ms lbl '{.status.phase}')"
[[ "$phase" == Progressing || "$phase" == Pending || "$phase" == Ready ]] || fail "ModelService lbl phase: $phase"
log "ok: lbl is $phase"

# ---- 2. the name is taken by a Deployment the user made earlier
k -n "$ns" create deployment taken --image=nginx:1.27 --replicas=3 >/dev/null
before="$(k -n "$ns" get deployment taken -o json | jq -cS '{labels: .metadata.labels, owners: .metadata.ownerReferences, spec: .spec}')"
k -n "$ns" apply -f - >/dev/null <<<'{"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"taken"},"spec":{"model":"m","replicas":2}}'
wait_for 30 "ModelService taken is Failed" ms_phase_is "$ns" taken Failed
st="$(k -n "$ns" get ms taken -o json)"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .reason' <<<"$st")" NameConflict "Ready condition reason"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .status' <<<"$st")" True "Degraded condition"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Stalled") | .status + " " + .reason' <<<"$st")" "True NameConflict" "Stalled condition (kstatus)"
health_verdict 08-name-conflict <<<"$st"
assert_contains "$(jq -r '.status.conditions[] | select(.type == "Ready") | .message' <<<"$st")" \
  'a Deployment named "taken" already exists in namespace "e2e-stuck" and is not controlled by this ModelService' "condition message"
warning() {
  k -n "$ns" get events -o json | jq -e '[.items[] | select(.involvedObject.name == "taken" and .involvedObject.kind == "ModelService" and .type == "Warning" and .reason == "NameConflict")] | length == 1'
}
wait_for 15 "one Warning Event NameConflict about taken" warning
sleep 3
after="$(k -n "$ns" get deployment taken -o json | jq -cS '{labels: .metadata.labels, owners: .metadata.ownerReferences, spec: .spec}')"
assert_eq "$after" "$before" "the user's Deployment (labels, owners, spec) untouched"
gone "$ns" service taken || fail "a Service was created for taken while its name is in conflict"
# No hot loop: over 15 s, the controller makes no write about "taken" and at
# most a few reads (one look every 30 s).
mark="$(audit_mark)"
sleep 15
requests="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r 'select(.stage == "ResponseComplete")
  | select((.userAgent // "") | startswith("modelservice-controller"))
  | select(.objectRef.name == "taken" and .objectRef.namespace == "e2e-stuck") | .verb' | sort | uniq -c | tr '\n' ' ')"
log "controller requests about taken in 15 s: ${requests:-none}"
writes="$(controller_writes_since "$mark" | grep -c ' e2e-stuck/taken ' || true)"
assert_eq "$writes" 0 "controller writes about taken while in conflict"
reads="$(tail -n "+$(( mark + 1 ))" "$E2E_AUDIT_LOG" | jq -r 'select(.stage == "ResponseComplete")
  | select((.userAgent // "") | startswith("modelservice-controller"))
  | select(.objectRef.name == "taken" and .objectRef.namespace == "e2e-stuck")' | grep -c . || true)"
assert_le "$reads" 4 "controller requests about taken in 15 s"
assert_eq "$(k -n "$ns" get events -o json | jq '[.items[] | select(.involvedObject.name == "taken" and .reason == "NameConflict")] | .[0].count')" 1 "Warning Event count (not repeated)"
# The user removes their Deployment: the controller notices within its recheck (30 s).
k -n "$ns" delete deployment taken >/dev/null
owned() { [[ "$(field deployment taken '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" == ModelService/taken ]]; }
wait_for 45 "taken gets its own Deployment" owned
wait_for 15 "ModelService taken no longer Failed" bash -c "[[ \"\$('$KUBECTL' -n '$ns' get ms taken -o 'jsonpath={.status.phase}')\" != Failed ]]"
wait_for 15 "Service taken created" exists "$ns" service taken

# ---- 3. the finalizer goes only when the owned objects are really gone
k -n "$ns" apply -f - >/dev/null <<<'{"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"fin"},"spec":{"model":"m"}}'
wait_for 30 "Deployment fin" exists "$ns" deployment fin
# Unlabelled (invisible to the label-selected cache) and held by someone else's finalizer.
k -n "$ns" patch deployment fin --type=json -p '[{"op":"remove","path":"/metadata/labels"},{"op":"add","path":"/metadata/finalizers","value":["e2e.modelops.dev/hold"]}]' >/dev/null
k -n "$ns" delete ms fin --wait=false >/dev/null
terminating() { [[ -n "$(field deployment fin '{.metadata.deletionTimestamp}')" ]]; }
wait_for 30 "the controller deleted Deployment fin (terminating, held)" terminating
sleep 5
exists "$ns" ms fin || fail "ModelService fin is gone while its Deployment still exists"
assert_contains "$(field ms fin '{.metadata.finalizers}')" modelops.dev/cleanup "fin keeps its finalizer while the Deployment exists"
k -n "$ns" patch deployment fin --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
wait_for 30 "ModelService fin gone once its Deployment is gone" gone "$ns" ms fin
gone "$ns" service fin || fail "Service fin left behind"

k -n "$ns" delete ms lbl taken --wait=false >/dev/null
