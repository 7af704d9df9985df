# The deletes the controller sends, with the real garbage collector
# (kube-controller-manager), read back from the API server's audit log (which
# keeps the request body of deletes of Deployments, Services and HPAs):
# 1. kubectl delete ms --cascade=orphan: the ModelService goes, its
#    Deployment, Service and HorizontalPodAutoscaler stay, without its
#    ownerReference (the garbage collector took it off), their pods keep
#    running, and the controller sent no DELETE for them.
# 2. kubectl delete ms (background): each DELETE the controller sends
#    carries preconditions, the uid and resourceVersion of the object it
#    decided on, and background propagation; exactly one DELETE per object.
# timeout: 150
# logs: controller controller-manager
need_full_cluster
ns=e2e-delete-orphan
new_ns "$ns"

# controller_deletes MARK: "resource name code uid resourceVersion policy"
# of each DELETE the controller sent in $ns after audit line MARK.
controller_deletes() {
  tail -n "+$(( $1 + 1 ))" "$E2E_AUDIT_LOG" | jq -r --arg ns "$ns" '
    select(.stage == "ResponseComplete" and .verb == "delete" and .objectRef.namespace == $ns
           and ((.userAgent // "") | startswith("modelservice-controller")))
    | "\(.objectRef.resource) \(.objectRef.name) \(.responseStatus.code) \(.requestObject.preconditions.uid // "-") \(.requestObject.preconditions.resourceVersion // "-") \(.requestObject.propagationPolicy // "-")"'
}
# owners KIND NAME: the uids of the object's ownerReferences ("" when none).
owners() { k -n "$ns" get "$1" "$2" -o json | jq -r '[.metadata.ownerReferences[]?.uid] | join(",")'; }
has_objects() {  # has_objects NAME: its Deployment, Service and HPA exist
  k -n "$ns" get deployment "$1" >/dev/null 2>&1 && k -n "$ns" get service "$1" >/dev/null 2>&1 \
    && k -n "$ns" get hpa "$1" >/dev/null 2>&1
}

for n in keep drop; do
  ms_yaml "$n" 'model: m' 'image: registry.local/serve:1.4' \
    'autoscaling: {mode: HPA, minReplicas: 1, maxReplicas: 3, targetQueueLength: 5}'
  echo ---
done | k -n "$ns" apply -f - >/dev/null
for n in keep drop; do wait_for 60 "$n has its Deployment, Service and HPA" has_objects "$n"; done
dep_ready() { [[ "$(k -n "$ns" get deployment "$1" -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)" == 1 ]]; }
wait_for 60 "keep's pod Ready" dep_ready keep

# 1. --cascade=orphan
uid="$(k -n "$ns" get ms keep -o jsonpath='{.metadata.uid}')"
for kind in deployment service hpa; do assert_eq "$(owners "$kind" keep)" "$uid" "$kind keep owned by its ModelService"; done
pods_before="$(k -n "$ns" get pods -l app.kubernetes.io/instance=keep -o name | sort)"
mark="$(audit_mark)"
k -n "$ns" delete ms keep --cascade=orphan --wait=false >/dev/null
wait_for 60 "keep gone" gone "$ns" ms keep
for kind in deployment service hpa; do
  wait_output 30 "$kind keep without the ModelService's ownerReference" "" owners "$kind" keep
done
sleep 3  # anything the controller would still do about keep
has_objects keep || fail "an orphaned object of keep was deleted"
assert_eq "$(controller_deletes "$mark")" "" "controller DELETEs after --cascade=orphan"
assert_eq "$(k -n "$ns" get pods -l app.kubernetes.io/instance=keep -o name | sort)" "$pods_before" \
  "the orphaned Deployment's pods keep running"
log "ok: --cascade=orphan left the Deployment, Service and HPA, unowned, and the controller deleted nothing"

# 2. Background: preconditions on every DELETE (a 409 on one would be
# followed by a re-read and a new decision: the last answer is 200).
declare -A uid_of
for kind in deployments services horizontalpodautoscalers; do
  uid_of[$kind]="$(k -n "$ns" get "$kind" drop -o jsonpath='{.metadata.uid}')"
done
mark="$(audit_mark)"
k -n "$ns" delete ms drop --wait=false >/dev/null
wait_for 60 "drop gone" gone "$ns" ms drop
deletes="$(controller_deletes "$mark")"
log "controller DELETEs (resource name code uid resourceVersion policy): $(tr '\n' ';' <<<"$deletes")"
while read -r res name code u rv policy; do
  [[ -n "$res" ]] || continue
  assert_eq "$name $u $policy" "drop ${uid_of[$res]:-?} Background" "DELETE of $res drop: name, uid precondition, propagation"
  [[ "$rv" =~ ^[0-9]+$ ]] || fail "DELETE of $res drop without a resourceVersion precondition"
done <<<"$deletes"
assert_eq "$(awk '$3 == 200 {print $1}' <<<"$deletes" | sort | tr '\n' ' ')" \
  "deployments horizontalpodautoscalers services " "one successful DELETE per owned object"
k delete ns "$ns" --wait=false >/dev/null
