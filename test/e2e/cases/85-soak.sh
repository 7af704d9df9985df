# The chaos soak (issue 25 §1; docs/contributor/soak.md): test/soak/soak.py
# for SOAK_MINUTES (default 3) with SOAK_SEED (default 25) against the suite's
# cluster, with two leader-electing controllers (controller, controller-b).
# Several clients create, update (version, image, /scale, strategy,
# autoscaling mode), delete ModelServices and namespaces, send invalid
# objects and edit owned objects by hand, while a fault injector kills,
# pauses and restarts the leader, kube-apiserver, etcd, the webhook and
# Prometheus, blanks the caBundles and rotates the serving certificate. It
# fails on any violated invariant: a write after a lost Lease (audit log), an
# owned object with two owners or none, one left behind, a ModelService stuck
# deleting or rejected by `modelservice-webhook validate`, an invalid object
# admitted, no convergence within 60 s of the last fault, a controller write
# in the 30 s after, RSS growth, a program that died unasked. Its report:
# E2E_WORK/soak/report.md (copied to SOAK_REPORT when set).
# timeout: 480
# alone: true
# logs: controller controller-b webhook apiserver
need_full_cluster
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
[[ -n "${E2E_AUDIT_LOG:-}" && -f "$E2E_AUDIT_LOG" ]] || fail "no audit log (E2E_AUDIT_LOG)"
minutes="${SOAK_MINUTES:-3}" seed="${SOAK_SEED:-25}"
out="$E2E_WORK/soak"
mkdir -p "$out"
# Whatever happens (a time-out included): nothing left SIGSTOPped, the
# caBundles back, the soak's namespaces deleted (in the background).
trap 'python3 "$E2E_ROOT/test/soak/soak.py" --restore --out "$out" || true
      k delete ns -l modelops.dev/soak=true --wait=false >/dev/null 2>&1 || true' EXIT
# The soak's judges first: each invariant check flags what it must (test/soak/test_soak.py).
( cd "$E2E_ROOT/test/soak" && python3 -m unittest test_soak ) >"$out/test_soak.log" 2>&1 \
  || { cat "$out/test_soak.log" >&2; fail "test/soak/test_soak.py failed"; }
log "ok: the soak's invariant checks pass their own tests ($(tail -n 3 "$out/test_soak.log" | grep -m1 '^Ran'))"
proc_alive controller || start_controller controller
proc_alive controller-b || start_controller controller-b
any_leader() { is_leader controller || is_leader controller-b; }
wait_for 60 "a controller leads" any_leader
log "soak: $minutes minutes, seed $seed (replay: test/soak/run.sh --minutes $minutes --seed $seed)"
set +e
python3 "$E2E_ROOT/test/soak/soak.py" --minutes "$minutes" --seed "$seed" --out "$out" | tee "$out/line.txt"
rc="${PIPESTATUS[0]}"
set -e
[[ -s "$out/report.md" ]] || fail "test/soak/soak.py ended (exit $rc) without a report: $(tail -n 3 "$out/line.txt")"
[[ -z "${SOAK_REPORT:-}" ]] || cp "$out/report.md" "$SOAK_REPORT"
line="$(tail -n 1 "$out/line.txt")"
echo "TIMING 85-soak: $line (seed $seed, $minutes min)" >>"$E2E_WORK/timings.txt"
log "report: $out/report.md"
if (( rc != 0 )); then
  sed -n '/^## Violations/,/^## Timeline/p' "$out/report.md" | head -n 80 >&2
  first="$(sed -n '/^## Violations/,/^## Timeline/p' "$out/report.md" | grep -m1 -o '\*\*.*\*\*' | tr -d '*' || true)"
  fail "$line (seed $seed; report $out/report.md)${first:+; first: $first}"
fi
assert_contains "$line" ", 0 violations" "the soak's result"
