# 200 ModelServices converge: each gets a Deployment and a Service, the
# Deployment's pod is scheduled onto the fake nodes and becomes Ready (KWOK),
# and all 200 reach phase Ready with READY 1; then all 200 are deleted
# (finalizer flow, then the garbage collector for ReplicaSets and pods) and
# nothing is left. Prints the timings.
# timeout: 420
# logs: controller controller-manager kwok
need_full_cluster
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

# Nobody marks anything: the Deployment and ReplicaSet controllers create 200
# pods, the scheduler binds them to the fake nodes, KWOK makes them Ready.
t1="$(now)"
wait_for 300 "all $N ModelServices Ready" all_phase Ready
t_ready="$(elapsed "$t1")"
t_total="$(elapsed "$t0")"
assert_eq "$(k -n "$ns" get pods -o 'jsonpath={range .items[*]}{.status.phase} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort | uniq -c | awk '{$1=$1; print}')" \
  "$N Running True" "pods Running and Ready"
ready_sum="$(k -n "$ns" get ms -o json | jq '[.items[].status.readyReplicas] | add')"
assert_eq "$ready_sum" "$N" "sum of READY over the $N ModelServices"

# Exactly one Deployment and one Service per ModelService, all owned by it.
k -n "$ns" get deployments -o json | jq -r '.items[] | .metadata.ownerReferences[0].name + " " + .metadata.name' >"$tmp/own"
assert_eq "$(awk '$1 != $2' "$tmp/own" | wc -l)" 0 "Deployments owned by the ModelService of the same name"
assert_eq "$(sort -u "$tmp/own" | wc -l)" "$N" "distinct owned Deployments"

t2="$(now)"
k -n "$ns" delete ms --all --wait=false >/dev/null
nothing_left() {
  [[ "$(k -n "$ns" get ms -o name | wc -l)" == 0 && "$(count deployments)" == 0 && "$(count services)" == 0 &&
     "$(k -n "$ns" get rs,pods -o name | wc -l)" == 0 ]]
}
wait_for 300 "all $N ModelServices, Deployments, Services, ReplicaSets and pods deleted" nothing_left
t_deleted="$(elapsed "$t2")"
echo "TIMING scale-$N: create ${t_created}s; all Deployments+Services ${t_owned}s after the first create; all Ready (pods scheduled and Ready) ${t_ready}s later (${t_total}s total); all deleted ${t_deleted}s" | tee -a "$E2E_WORK/timings.txt" >&2
