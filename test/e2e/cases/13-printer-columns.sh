# `kubectl get ms` shows the columns NAME MODEL READY PHASE VERSION AGE
# (READY as ready/desired, like a Deployment's; -o wide adds GPU% and URL;
# PHASE values are checked in the controller case, VERSION in
# 31-rollout-failed).
# timeout: 60
# logs: webhook
ns=e2e-columns
new_ns "$ns"
ms_yaml col-a 'model: bert-base-uncased' 'replicas: 3' | k -n "$ns" apply -f - >/dev/null
ms_yaml col-b 'model: gpt2' | k -n "$ns" apply -f - >/dev/null
# READY is ready/desired, as a Deployment's: 3/3 and 1/1 once the pods are
# ready (0/3 and 0/1 in the light cluster, which runs no pods).
ready=(3 1)
[[ "${E2E_CLUSTER_MODE:-full}" == full ]] || ready=(0 0)
wait_output 30 "col-a READY ${ready[0]}/3" "${ready[0]}/3" jp ms/col-a '{.status.readySummary}' -n "$ns"
wait_output 30 "col-b READY ${ready[1]}/1" "${ready[1]}/1" jp ms/col-b '{.status.readySummary}' -n "$ns"
out="$(k -n "$ns" get ms)"
echo "$out" >&2
header="$(head -n 1 <<<"$out" | tr -s ' ')"
assert_eq "$header" "NAME MODEL READY PHASE VERSION AGE" "header"
row="$(grep '^col-a ' <<<"$out" | awk '{print $1, $2, $3}')"
assert_eq "$row" "col-a bert-base-uncased ${ready[0]}/3" "col-a row (NAME MODEL READY)"
row="$(grep '^col-b ' <<<"$out" | awk '{print $1, $2, $3}')"
assert_eq "$row" "col-b gpt2 ${ready[1]}/1" "col-b row (READY of the defaulted replicas)"
wide="$(k -n "$ns" get ms -o wide)"
header="$(head -n 1 <<<"$wide" | tr -s ' ')"
assert_eq "$header" "NAME MODEL READY PHASE VERSION GPU% URL AGE" "header of -o wide"
# Short name, singular and plural all work.
for n in ms modelservice modelservices modelservices.modelops.dev; do
  k -n "$ns" get "$n" col-a >/dev/null || fail "kubectl get $n col-a failed"
done
# The CRD's columns point at the right fields.
cols="$(k get crd modelservices.modelops.dev -o json | jq -c '[.spec.versions[] | select(.name == "v1") | .additionalPrinterColumns[] | [.name, .jsonPath]]')"
assert_eq "$cols" '[["Model",".spec.model"],["Ready",".status.readySummary"],["Phase",".status.phase"],["Version",".status.servingVersion"],["GPU%",".status.gpuUtilization"],["URL",".status.url"],["Age",".metadata.creationTimestamp"]]' "CRD printer columns"
k -n "$ns" delete ms col-a col-b --wait=false >/dev/null
