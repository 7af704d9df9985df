# `kubectl get ms` shows the columns NAME MODEL REPLICAS READY PHASE VERSION
# AGE with the spec values (READY/PHASE values are checked in the controller
# case, VERSION in 31-rollout-failed).
# timeout: 60
# logs: webhook
ns=e2e-columns
new_ns "$ns"
ms_yaml col-a 'model: bert-base-uncased' 'replicas: 3' | k -n "$ns" apply -f - >/dev/null
ms_yaml col-b 'model: gpt2' | k -n "$ns" apply -f - >/dev/null
out="$(k -n "$ns" get ms)"
echo "$out" >&2
header="$(head -n 1 <<<"$out" | tr -s ' ')"
assert_eq "$header" "NAME MODEL REPLICAS READY PHASE VERSION AGE" "header"
row="$(grep '^col-a ' <<<"$out" | awk '{print $1, $2, $3}')"
assert_eq "$row" "col-a bert-base-uncased 3" "col-a row (NAME MODEL REPLICAS)"
row="$(grep '^col-b ' <<<"$out" | awk '{print $1, $2, $3}')"
assert_eq "$row" "col-b gpt2 1" "col-b row (defaulted REPLICAS)"
# Short name, singular and plural all work.
for n in ms modelservice modelservices modelservices.modelops.dev; do
  k -n "$ns" get "$n" col-a >/dev/null || fail "kubectl get $n col-a failed"
done
# The CRD's columns point at the right fields.
cols="$(k get crd modelservices.modelops.dev -o json | jq -c '[.spec.versions[] | select(.name == "v1") | .additionalPrinterColumns[] | [.name, .jsonPath]]')"
assert_eq "$cols" '[["Model",".spec.model"],["Replicas",".spec.replicas"],["Ready",".status.readyReplicas"],["Phase",".status.phase"],["Version",".status.servingVersion"],["GPU%",".status.gpuUtilization"],["Age",".metadata.creationTimestamp"]]' "CRD printer columns"
k -n "$ns" delete ms col-a col-b --wait=false >/dev/null
