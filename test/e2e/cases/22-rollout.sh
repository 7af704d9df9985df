# A change of image is rolled out by the real Deployment controller within
# spec.strategy's bounds, observed through a watch of the ReplicaSets (every
# state, in order): with 4 replicas, maxSurge 1, maxUnavailable 0, at no time
# do the ReplicaSets want more than 5 pods or have fewer than 4 available;
# with maxSurge 0, maxUnavailable 1: never more than 4 wanted, never fewer
# than 3 available. The ModelService follows: Progressing (READY below 4 or
# old pods left) during the rollout, Ready with READY 4 and every pod on the
# new image after it. A rollout to an image whose pods never become ready
# (KWOK's never-ready switch, test/e2e/kwok/stages.yaml) stops after one
# surge pod: the old pods keep serving (READY 4), the phase stays
# Progressing; rolling forward to a good image completes.
# timeout: 180
# logs: controller controller-manager
need_full_cluster
ns=e2e-rollout
name=roll
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
ms_yaml "$name" 'model: m' 'image: registry.local/serve:1.0' 'replicas: 4' \
  'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}' | k -n "$ns" apply -f - >/dev/null
wait_ms_ready "$ns" 60 "$name"
assert_eq "$(ms_row "$ns" "$name")" "roll m 4/4 Ready" "kubectl get ms before the rollout"

images() {  # images: "IMAGE READY" of every pod, sorted, counted
  pods_of "$ns" "$name" '{range .items[*]}{.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
    | sort | uniq -c | awk '{$1=$1; print}' | tr '\n' ';'
}

# rs_bounds WATCH_FILE START_FILE: "MAX_WANTED MIN_AVAILABLE EVENTS" over
# every state of the ReplicaSets: the start (a list taken while nothing
# moved), then each event of the watch, in order.
rs_bounds() {
  jq -R -s -r --slurpfile init "$2" '
    reduce (split("\n")[] | fromjson? | select(.type != "BOOKMARK")) as $e (
      {rs: ($init[0].items | map({key: .metadata.uid, value: {w: (.spec.replicas // 0), a: (.status.availableReplicas // 0)}}) | from_entries),
       max: 0, min: 1000000, n: 0};
      .rs[$e.object.metadata.uid] = (if $e.type == "DELETED" then {w: 0, a: 0}
        else {w: ($e.object.spec.replicas // 0), a: ($e.object.status.availableReplicas // 0)} end)
      | ([.rs[].w] | add) as $w | ([.rs[].a] | add) as $a
      | .max = ([.max, $w] | max) | .min = ([.min, $a] | min) | .n += 1)
    | "\(.max) \(.min) \(.n)"' "$1"
}

# rollout IMAGE SURGE UNAVAILABLE: change image and strategy, wait for the
# rolled-out state, check the bounds seen on the way.
rollout() {
  local image="$1" surge="$2" unavail="$3" key="${1//[^a-zA-Z0-9.]/_}"
  local w="$tmp/rs.$key.watch" mw="$tmp/ms.$key.watch"
  # The start: 4 pods wanted and available (the ModelService is Ready).
  k -n "$ns" get rs -l "app.kubernetes.io/instance=$name" -o json >"$w.start"
  api_watch "/apis/apps/v1/namespaces/$ns/replicasets" "$w" "labelSelector=app.kubernetes.io/instance=$name"
  api_watch "/apis/modelops.dev/v1/namespaces/$ns/modelservices" "$mw"
  local gen
  k -n "$ns" patch ms "$name" --type=merge \
    -p "{\"spec\":{\"image\":\"$image\",\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":$surge,\"maxUnavailable\":$unavail}}}}" >/dev/null
  gen="$(jp "ms/$name" '{.metadata.generation}' -n "$ns")"
  wait_output 60 "all 4 pods on $image and Ready" "4 $image True;" images
  wait_ms_ready "$ns" 30 "$name"
  assert_eq "$(ms_row "$ns" "$name")" "roll m 4/4 Ready" "kubectl get ms after the rollout to $image"
  sleep 1  # the last ReplicaSet status updates reach the watch file
  local b max min n
  b="$(rs_bounds "$w" "$w.start")"; read -r max min n <<<"$b"
  log "ReplicaSet states during the rollout to $image (maxSurge $surge, maxUnavailable $unavail): $n events, at most $max pods wanted, at least $min available"
  assert_gt "$n" 3 "ReplicaSet events seen during the rollout"
  assert_le "$max" $(( 4 + surge )) "pods wanted at once (replicas + maxSurge)"
  assert_le $(( 4 - unavail )) "$min" "pods available at any time (replicas - maxUnavailable)"
  # The ModelService reported the rollout while it ran, then Ready.
  local phases
  phases="$(ms_states "$mw" "$name" | awk -v g="$gen" '$3 == g { print $4 "/" $5 }' | uniq | tr '\n' ' ')"
  log "ModelService during the rollout (phase/READY): $phases"
  [[ "$phases" == Progressing/* ]] || fail "the first status of generation $gen is not Progressing: $phases"
  [[ "$phases" == *"Ready/4 " ]] || fail "the last status of generation $gen is not Ready/4: $phases"
}

rollout registry.local/serve:1.1 1 0
rollout registry.local/serve:1.2 0 1

# A version whose pods never become ready: one surge pod, never Ready; the
# four old pods stay and serve.
k -n "$ns" patch ms "$name" --type=merge -p '{"spec":{"image":"registry.local/serve:never-ready","strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}' >/dev/null
wait_for 30 "one never-ready pod Running, not Ready" bash -c \
  "'$KUBECTL' -n '$ns' get pods -l app.kubernetes.io/instance=$name -o json | jq -e '[.items[] | select(.spec.containers[0].image == \"registry.local/serve:never-ready\" and .status.phase == \"Running\" and (.status.conditions[] | select(.type == \"Ready\") | .status) == \"False\")] | length == 1'"
sleep 3  # nothing more happens: the rollout waits for that pod
assert_eq "$(images)" "4 registry.local/serve:1.2 True;1 registry.local/serve:never-ready False;" "pods while the rollout is stuck"
st="$(k -n "$ns" get ms "$name" -o json)"
assert_eq "$(jq -r '.status.phase + " " + (.status.readyReplicas | tostring)' <<<"$st")" "Progressing 4" "phase and READY while stuck"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$st")" False "Ready condition while stuck"
assert_eq "$(jq -r '.status.conditions[] | select(.type == "Progressing") | .status' <<<"$st")" True "Progressing condition while stuck"
reason="$(k -n "$ns" get pods -l "app.kubernetes.io/instance=$name" -o json | jq -r '.items[] | select(.spec.containers[0].image | contains("never-ready")) | .status.conditions[] | select(.type == "Ready") | .reason')"
assert_eq "$reason" ContainersNotReady "the never-ready pod's Ready condition reason"
# Roll forward to a good image: completes.
rollout registry.local/serve:1.3 1 0
k -n "$ns" delete ms "$name" --wait=false >/dev/null
