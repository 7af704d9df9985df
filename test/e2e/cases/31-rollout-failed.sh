# Versions, a failed rollout and the rollback (issue 15 parts 1 and 2), on the
# whole local cluster: kube-controller-manager's Deployment controller marks
# the rollout ProgressDeadlineExceeded by itself, KWOK keeps the new version's
# pods from becoming Ready (an image containing "never-ready",
# test/e2e/kwok/stages.yaml).
# Two ModelServices serve version 1 (`kubectl get ms` shows VERSION 1,
# status.servingVersion/servingImage/lastUpdateTime); both move to version 2,
# whose pods never become ready, with spec.rollout.timeoutSeconds 30 (the
# Deployment's progressDeadlineSeconds). While it rolls out, the Progressing
# condition says "version 1 → 2: 1/2 updated, 2 ready".
#   manual (rollback: Manual): Degraded/RolloutFailed with the Deployment's
#     message and a Warning Event; servingVersion still 1, the old pods still
#     serve (2 Ready on version 1); rolling forward to version 3 completes:
#     servingVersion 3, lastUpdateTime later.
#   auto (rollback: Automatic): Degraded/RolloutFailed then RolledBack; the
#     Deployment's template is back on version 1's image and MODEL_VERSION;
#     status.failedVersion 2; Warning Events RolloutFailed and RolledBack; no
#     retry: over 40 s (longer than the timeout) the controller writes nothing
#     about it (audit log), the Deployment was updated exactly twice (to
#     version 2, back to 1); a new spec (version 3) rolls out and clears
#     failedVersion.
# timeout: 300
# logs: controller controller-manager
need_full_cluster
ns=e2e-versions
new_ns "$ns"
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# ms_spec NAME VERSION IMAGE ROLLBACK
ms_spec() {
  ms_yaml "$1" 'model: m' "version: \"$2\"" "image: $3" 'replicas: 2' \
    'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}' \
    "rollout: {timeoutSeconds: 30, rollback: $4}"
}
ms_json() { k -n "$ns" get ms "$1" -o json; }
status_of() { ms_json "$1" | jq -r ".status.$2 // \"-\""; }
condition() {  # condition NAME TYPE: "STATUS REASON"
  ms_json "$1" | jq -r --arg t "$2" '.status.conditions[] | select(.type == $t) | "\(.status) \(.reason)"'
}
template() {  # template NAME: "IMAGE MODEL_VERSION" of the Deployment's pod template
  k -n "$ns" get deployment "$1" -o json \
    | jq -r '.spec.template.spec.containers[0] | "\(.image) \(.env[] | select(.name == "MODEL_VERSION") | .value)"'
}
pods_by_image() {  # pods_by_image NAME: "COUNT IMAGE READY;" sorted
  pods_of "$ns" "$1" '{range .items[*]}{.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
    | sort | uniq -c | awk '{$1=$1; print}' | tr '\n' ';'
}
warning_events() {  # warning_events NAME REASON: how many
  k -n "$ns" get events -o json | jq --arg n "$1" --arg r "$2" \
    '[.items[] | select(.involvedObject.kind == "ModelService" and .involvedObject.name == $n and .type == "Warning" and .reason == $r)] | length'
}
has_warning() { (( $(warning_events "$1" "$2") >= 1 )); }
condition_is() { [[ "$(condition "$1" "$2")" == "$3" ]]; }
progressing_said() {  # progressing_said NAME MESSAGE: some status in the watch file had it
  jq -R -r --arg n "$1" 'fromjson? | .object | select(.metadata.name == $n) | .status.conditions[]? | select(.type == "Progressing") | .message' \
    "$tmp/ms.watch" | grep -qxF "$2"
}

# ---- version 1 serves
{ ms_spec manual 1 registry.local/serve:1.0 Manual; echo ---; ms_spec auto 1 registry.local/serve:1.0 Automatic; } \
  | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 60 manual auto
for n in manual auto; do
  assert_eq "$(status_of "$n" servingVersion) $(status_of "$n" servingImage)" "1 registry.local/serve:1.0" "$n: servingVersion and servingImage"
  assert_eq "$(k -n "$ns" get deployment "$n" -o jsonpath='{.spec.progressDeadlineSeconds}')" 30 "$n: the Deployment's progressDeadlineSeconds"
done
row="$(k -n "$ns" get ms manual --no-headers | awk '{print $1, $2, $3, $4, $5}')"
assert_eq "$row" "manual m 2/2 Ready 1" "kubectl get ms manual (NAME MODEL READY PHASE VERSION)"
t1="$(status_of manual lastUpdateTime)"
[[ "$t1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] || fail "lastUpdateTime is not RFC 3339: $t1"

# ---- version 2 never becomes ready
mark="$(audit_mark)"
api_watch "/apis/modelops.dev/v1/namespaces/$ns/modelservices" "$tmp/ms.watch"
for n in manual auto; do
  k -n "$ns" patch ms "$n" --type=merge -p '{"spec":{"version":"2","image":"registry.local/never-ready:2"}}' >/dev/null
done
start="$(now)"
wait_for 30 "manual: Progressing says 'version 1 → 2: 1/2 updated, 2 ready'" \
  progressing_said manual 'version 1 → 2: 1/2 updated, 2 ready'
health_stage 03-rolling-out "$ns" manual

# Manual: Degraded, RolloutFailed, with the Deployment's message.
wait_for 90 "manual Degraded" ms_phase_is "$ns" manual Degraded
log "the rollout failed $(elapsed "$start") s after the change (timeoutSeconds 30)"
assert_eq "$(condition manual Degraded)" "True RolloutFailed" "manual: Degraded condition"
assert_eq "$(condition manual Progressing)" "False RolloutFailed" "manual: Progressing condition"
dep_msg="$(k -n "$ns" get deployment manual -o json | jq -r '.status.conditions[] | select(.type == "Progressing" and .reason == "ProgressDeadlineExceeded") | .message')"
[[ -n "$dep_msg" ]] || fail "the Deployment manual does not report ProgressDeadlineExceeded"
assert_eq "$(ms_json manual | jq -r '.status.conditions[] | select(.type == "Degraded") | .message')" "$dep_msg" "manual: Degraded message (the Deployment's)"
assert_eq "$(status_of manual servingVersion) $(status_of manual lastUpdateTime)" "1 $t1" "manual: still serving version 1 since"
assert_eq "$(status_of manual failedVersion)" - "manual: no failedVersion (nothing rolled back)"
assert_eq "$(pods_by_image manual)" "1 registry.local/never-ready:2 False;2 registry.local/serve:1.0 True;" "manual: the old pods still serve"
assert_eq "$(template manual)" "registry.local/never-ready:2 2" "manual: the Deployment left on version 2"
wait_for 15 "a Warning Event RolloutFailed about manual" has_warning manual RolloutFailed
assert_eq "$(warning_events manual RolloutFailed)" 1 "manual: Warning Events RolloutFailed"
row="$(k -n "$ns" get ms manual --no-headers | awk '{print $1, $2, $3, $4, $5}')"
assert_eq "$row" "manual m 2/2 Degraded 1" "kubectl get ms manual while version 2 failed"
health_stage 06-rollout-failed "$ns" manual

# Automatic: back on version 1.
wait_for 60 "auto Degraded, RolledBack" condition_is auto Degraded "True RolledBack"
assert_eq "$(template auto)" "registry.local/serve:1.0 1" "auto: the Deployment's template back on version 1"
assert_eq "$(status_of auto failedVersion)" 2 "auto: failedVersion"
wait_output 60 "auto: 2 pods on version 1, Ready, and no other" "2 registry.local/serve:1.0 True;" pods_by_image auto
wait_for 30 "auto: Progressing False RolledBack" condition_is auto Progressing "False RolledBack"
st="$(ms_json auto)"
assert_eq "$(jq -r '.status.phase + " " + .status.servingVersion + " " + (.status.readyReplicas | tostring)' <<<"$st")" "Degraded 1 2" "auto: phase, servingVersion, READY"
# Version 1 serves, but the spec's version 2 does not: Ready False and
# kstatus' Stalled True, both RolledBack (docs/user/status.md, "Health").
assert_eq "$(jq -r '[.status.conditions[] | select(.type == "Ready" or .type == "Stalled" or .type == "Reconciling") | .type + "=" + .status + "/" + .reason] | join(" ")' <<<"$st")" \
  "Ready=False/RolledBack Stalled=True/RolledBack" "auto: Ready and Stalled (version 1 serves, not the spec's 2)"
health_verdict 07-rolled-back <<<"$st"
assert_contains "$(jq -r '.status.conditions[] | select(.type == "Degraded") | .message' <<<"$st")" \
  "the rollout of version 2 made no progress for 30s; rolled back to version 1" "auto: Degraded message"
for r in RolloutFailed RolledBack; do
  wait_for 15 "a Warning Event $r about auto" has_warning auto "$r"
  assert_eq "$(warning_events auto "$r")" 1 "auto: Warning Events $r"
done

# No retry: nothing written about auto for longer than the timeout.
quiet="$(audit_mark)"
sleep 40
writes="$(controller_writes_since "$quiet" | grep -E " $ns/auto " || true)"
[[ -z "$writes" ]] || echo "controller writes about auto after the rollback:"$'\n'"$writes" >&2
assert_eq "$(grep -c . <<<"$writes" || true)" 0 "controller writes about auto over 40 s after the rollback"
dep_updates="$(controller_writes_since "$mark" | grep -c "^update deployments $ns/auto 200" || true)"
assert_eq "$dep_updates" 2 "auto: updates of its Deployment since version 2 was asked for (to 2, back to 1)"
assert_eq "$(template auto)" "registry.local/serve:1.0 1" "auto: the Deployment still on version 1"
assert_eq "$(warning_events auto RolledBack)" 1 "auto: Warning Events RolledBack (not repeated)"

# ---- a new spec: version 3 rolls out on both
for n in manual auto; do
  k -n "$ns" patch ms "$n" --type=merge -p '{"spec":{"version":"3","image":"registry.local/serve:1.3"}}' >/dev/null
done
wait_ms_ready "$ns" 90 manual auto
for n in manual auto; do
  assert_eq "$(status_of "$n" servingVersion) $(status_of "$n" servingImage) $(status_of "$n" failedVersion)" \
    "3 registry.local/serve:1.3 -" "$n: version 3 serves, no failedVersion"
  assert_eq "$(pods_by_image "$n")" "2 registry.local/serve:1.3 True;" "$n: pods on version 3"
  t3="$(status_of "$n" lastUpdateTime)"
  [[ "$t3" > "$t1" ]] || fail "$n: lastUpdateTime $t3 is not after $t1"
done
log "ok: lastUpdateTime moved from $t1 to $t3"
row="$(k -n "$ns" get ms auto --no-headers | awk '{print $1, $2, $3, $4, $5}')"
assert_eq "$row" "auto m 2/2 Ready 3" "kubectl get ms auto after version 3"
k -n "$ns" delete ms manual auto --wait=false >/dev/null
