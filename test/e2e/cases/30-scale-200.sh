# 200 ModelServices converge: each gets a Deployment and a Service; once the
# Deployments are marked available all 200 reach phase Ready; then all 200 are
# deleted (finalizer flow) and nothing is left. Prints the timings.
# timeout: 420
# logs: controller
ns=e2e-scale
N="${E2E_SCALE_N:-200}"
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for (( i = 0; i < N; i++ )); do
  printf -- '---\n'; ms_yaml "$(printf 's-%03d' "$i")" "model: model-$i" 'image: registry.local/serve:1.4'
done >"$tmp/all.yaml"

count() {  # count KIND [jsonpath filter]: objects of KIND in $ns
  k -n "$ns" get "$1" -l app.kubernetes.io/managed-by=modelservice-controller -o name 2>/dev/null | wc -l
}
count_phase() {
  k -n "$ns" get ms -o 'jsonpath={range .items[*]}{.status.phase}{"\n"}{end}' 2>/dev/null | grep -c "^$1$" || true
}
have_all() { [[ "$(count deployments)" == "$N" && "$(count services)" == "$N" ]]; }
all_phase() { [[ "$(count_phase "$1")" == "$N" ]]; }

t0="$(now)"
k -n "$ns" apply -f "$tmp/all.yaml" >/dev/null
t_created="$(elapsed "$t0")"
log "created $N ModelServices in ${t_created}s (kubectl apply, through both webhooks)"
wait_for 300 "$N Deployments and $N Services" have_all
t_owned="$(elapsed "$t0")"

# Mark every Deployment available (what the Deployment controller and kubelets
# would do), straight through the API (curl is far cheaper than 200 kubectl runs).
t1="$(now)"
k -n "$ns" get deployments -o json | jq -r '.items[] | "\(.metadata.name) \(.metadata.generation) \(.spec.replicas)"' >"$tmp/deps"
assert_eq "$(wc -l <"$tmp/deps")" "$N" "Deployments listed"
ts="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
patch_one() {  # NAME GEN REPLICAS
  curl -sS --fail --max-time 20 --cacert "$E2E_CA_CERT" --cert "$E2E_ADMIN_CERT" --key "$E2E_ADMIN_KEY" \
    -X PATCH -H 'Content-Type: application/merge-patch+json' \
    "$E2E_API_SERVER/apis/apps/v1/namespaces/$ns/deployments/$1/status" \
    -d "{\"status\":{\"observedGeneration\":$2,\"replicas\":$3,\"readyReplicas\":$3,\"availableReplicas\":$3,\"updatedReplicas\":$3,\"conditions\":[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"MinimumReplicasAvailable\",\"message\":\"ok\",\"lastUpdateTime\":\"$ts\",\"lastTransitionTime\":\"$ts\"}]}}" -o /dev/null
}
export -f patch_one; export ns ts
xargs -P 8 -L 1 bash -c 'patch_one "$@"' _ <"$tmp/deps" || fail "patching Deployment statuses failed"
log "marked $N Deployments available in $(elapsed "$t1")s"
wait_for 300 "all $N ModelServices Ready" all_phase Ready
t_ready="$(elapsed "$t1")"
t_total="$(elapsed "$t0")"

# Exactly one Deployment and one Service per ModelService, all owned by it.
k -n "$ns" get deployments -o json | jq -r '.items[] | .metadata.ownerReferences[0].name + " " + .metadata.name' >"$tmp/own"
assert_eq "$(awk '$1 != $2' "$tmp/own" | wc -l)" 0 "Deployments owned by the ModelService of the same name"
assert_eq "$(sort -u "$tmp/own" | wc -l)" "$N" "distinct owned Deployments"

t2="$(now)"
k -n "$ns" delete ms --all --wait=false >/dev/null
nothing_left() { [[ "$(k -n "$ns" get ms -o name | wc -l)" == 0 && "$(count deployments)" == 0 && "$(count services)" == 0 ]]; }
wait_for 300 "all $N ModelServices, Deployments and Services deleted" nothing_left
t_deleted="$(elapsed "$t2")"
echo "TIMING scale-$N: create ${t_created}s; all Deployments+Services ${t_owned}s after the first create; all Ready ${t_ready}s after marking available (${t_total}s total); all deleted ${t_deleted}s" | tee -a "$E2E_WORK/timings.txt" >&2
