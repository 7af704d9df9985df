# kube-apiserver restarts (cluster.sh restart-apiserver) while ModelServices
# are being created: afterwards every one of them converges (Deployment +
# Service, phase Ready once its pods are scheduled and Ready: the controller
# manager, the scheduler and KWOK ride out the outage too), nothing is lost, nothing duplicated
# (exactly one Deployment and one Service per ModelService). Part 1 runs a
# controller without leader election, which must survive the outage (same
# process: watches reconnect and relist); part 2 the leader-electing one.
# timeout: 240
# alone: true
# logs: controller apiserver
need_full_cluster
ns=e2e-restart
N=40
new_ns "$ns"
tmp="$(mktemp -d)"; pids=()
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$tmp"' EXIT
# Part 1: a controller without leader election must ride out the outage:
# same process before and after, watches re-established (relist), and it
# converges everything created before, during and after the outage.
# Part 2 (below): the suite's leader-electing controller, which by design
# exits when it cannot renew its Lease within 10 s (the restart takes longer),
# is restarted as the kubelet would, and converges too.
proc_stop controller TERM 15
start_controller controller --no-leader-elect
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$tmp"; proc_stop controller TERM 15; start_controller controller' EXIT
cpid="$(proc_pid controller)" || fail "controller not running"

# Creator: creates r-000..r-039 one by one, retrying each until it exists
# (the API server is down for a while in the middle).
(
  for (( i = 0; i < N; i++ )); do
    n="$(printf 'r-%03d' "$i")"
    for (( try = 0; try < 200; try++ )); do
      out="$(ms_yaml "$n" 'model: m' | "$KUBECTL" --request-timeout=5s -n "$ns" create -f - 2>&1)" && { echo "created $n"; break; }
      [[ "$out" == *AlreadyExists* || "$out" == *"already exists"* ]] && { echo "existed $n"; break; }
      echo "retry $n: $out"
      sleep 0.3
    done
    sleep 0.1
  done
  echo done
) >"$tmp/creator.txt" 2>&1 &
pids+=($!)
wait_for 30 "some objects created before the restart" bash -c "(( \$(grep -c '^created' '$tmp/creator.txt') >= 8 ))"
log "restarting kube-apiserver"
"$E2E_ROOT/test/e2e/cluster.sh" --dir "$E2E_WORK/cluster" restart-apiserver >/dev/null 2>"$tmp/restart.err" \
  || fail "restart-apiserver failed: $(cat "$tmp/restart.err")"
log "kube-apiserver back: $(tail -n 1 "$tmp/restart.err")"
now_pid="$(proc_pid controller)" || { tail -n 20 "$E2E_WORK/logs/controller.log" >&2; fail "the controller (no leader election) exited during the API server restart"; }
assert_eq "$now_pid" "$cpid" "controller pid (same process before and after the restart)"
wait_for 120 "creator finished" grep -q '^done' "$tmp/creator.txt"
log "creator: $(grep -c '^created' "$tmp/creator.txt") created, $(grep -c '^existed' "$tmp/creator.txt") already existed, $(grep -c '^retry' "$tmp/creator.txt") retries"

assert_eq "$(k -n "$ns" get ms -o name | wc -l)" "$N" "ModelServices"
count() { k -n "$ns" get "$1" -l app.kubernetes.io/managed-by=modelservice-controller -o name | wc -l; }
have_all() { [[ "$(count deployments)" == "$N" && "$(count services)" == "$N" ]]; }
wait_for 90 "$N Deployments and $N Services after the restart" have_all
all_ready() { [[ "$(k -n "$ns" get ms -o 'jsonpath={range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Ready$')" == "$N" ]]; }
wait_for 90 "all $N Ready (their pods scheduled and Ready)" all_ready

# Exactly one Deployment and one Service per ModelService (owner uid matches).
k -n "$ns" get ms -o json | jq -r '.items[] | .metadata.uid' | sort >"$tmp/uids"
for kind in deployments services; do
  k -n "$ns" get "$kind" -o json | jq -r '.items[] | .metadata.ownerReferences[]? | select(.controller) | .uid' | sort >"$tmp/owners"
  assert_eq "$(uniq -d "$tmp/owners" | wc -l)" 0 "ModelServices owning more than one of $kind"
  cmp -s "$tmp/uids" "$tmp/owners" || fail "$kind owners differ from the ModelServices:\n$(diff "$tmp/uids" "$tmp/owners" | head)"
  log "ok: one $kind per ModelService"
done

assert_eq "$(proc_pid controller)" "$cpid" "controller pid at the end of part 1"
k -n "$ns" delete ms --all --wait=false >/dev/null
nothing_left() { [[ "$(k -n "$ns" get ms -o name | wc -l)" == 0 && "$(count deployments)" == 0 ]]; }
wait_for 90 "all deleted" nothing_left

# Part 2: the leader-electing controller during a restart.
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$tmp"' EXIT
proc_stop controller TERM 15
start_controller controller
wait_for 30 "controller leads" is_leader controller
lpid="$(proc_pid controller)"
for (( i = 0; i < 10; i++ )); do ms_yaml "$(printf 'l-%03d' "$i")" 'model: m'; echo ---; done | k -n "$ns" apply -f - >/dev/null
"$E2E_ROOT/test/e2e/cluster.sh" --dir "$E2E_WORK/cluster" restart-apiserver >/dev/null 2>"$tmp/restart.err" \
  || fail "restart-apiserver failed: $(cat "$tmp/restart.err")"
log "kube-apiserver back: $(tail -n 1 "$tmp/restart.err")"
for (( i = 10; i < 20; i++ )); do ms_yaml "$(printf 'l-%03d' "$i")" 'model: m'; echo ---; done | k -n "$ns" apply -f - >/dev/null
if proc_alive controller; then
  log "the leader kept its Lease through the restart (pid $lpid)"
else
  log "NOTE: the leader exited (it could not renew its Lease within 10 s; by design); restarting it as the kubelet would:"
  grep -iE 'lease|leader|stopped' "$E2E_WORK/logs/controller.log" | tail -n 4 >&2 || true
  start_controller controller
fi
N=20
wait_for 90 "20 Deployments and 20 Services" have_all
k -n "$ns" get ms -o json | jq -r '.items[] | .metadata.uid' | sort >"$tmp/uids"
k -n "$ns" get deployments -o json | jq -r '.items[] | .metadata.ownerReferences[]? | select(.controller) | .uid' | sort >"$tmp/owners"
cmp -s "$tmp/uids" "$tmp/owners" || fail "Deployment owners differ from the ModelServices (part 2)"
k -n "$ns" delete ms --all --wait=false >/dev/null
wait_for 90 "all deleted (part 2)" nothing_left
