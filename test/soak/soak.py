#!/usr/bin/env python3
"""soak.py - the chaos soak's engine (issue 25 §1), run inside the e2e suite.

Usage: soak.py --minutes D --seed S --out DIR [--clients N] [--max-ms N]

Runs against the cluster test/e2e/run.sh set up (its environment: suite.env
and the cluster's env, as test/e2e/cases/85-soak.sh has them), with the two
leader-electing controllers "controller" and "controller-b" running. For D
minutes:
  - N clients (threads) create, update (version, image, /scale, strategy,
    autoscaling mode and queue length), delete ModelServices and whole
    namespaces, send invalid objects (each must be refused), and edit or
    delete the owned Deployments and Services by hand;
  - a fault injector, one fault at a time at random moments: kill -9 and
    SIGSTOP/SIGCONT of the leading controller, restart kube-apiserver,
    restart etcd, restart the webhook, blank both webhook configurations'
    caBundle (restored by the injector as the fault's end: the suite's
    controllers run with --cert-mode provided, which repairs nothing), rotate
    the serving certificate (gen-certs.sh --reuse-ca), SIGSTOP Prometheus;
  - a supervisor restarts, as a kubelet would, whatever exited (controllers
    after a kill or a lost Lease; anything that died without the injector
    killing it is a violation);
  - a checker verifies the invariants every ~20 s (invariants.py).
Then the faults stop, every ModelService must converge within 60 s, and the
controllers must then make no write for 30 s (audit log). Last line on
stdout: "soak: N operations, F faults, V violations"; DIR/report.md says
what happened, DIR/ops.jsonl lists every operation. Exit status 0 only
without violations.

Every random choice comes from random.Random seeded with S (one stream per
client, one for the injector), so a seed replays the same sequence of
operations and faults; their interleaving follows the machine's timing.
Standard library only. The parts: common.py (the API server, the harness's
processes and helpers, the shared state), workload.py (the clients),
faults.py (the injector, the supervisor), invariants.py (the checks; tested
by test_soak.py), report.py.
"""
import argparse
import json
import os
import signal
import sys
import time

from common import Api, CONTROLLERS, Harness, State, env, now, reason_of
from workload import Client, new_namespace
from faults import Injector, Supervisor
from invariants import Audit, Checker, not_converged, ownership_violations, rss_judgement, snapshot, wait_components
from report import mib, write_report

def restore(out):
    """After a soak that was killed: nothing left SIGSTOPped, caBundles back."""
    h = Harness(None)
    for name in CONTROLLERS + ("prometheus", "webhook"):
        pid = h.pid(name)
        if pid:
            os.kill(pid, signal.SIGCONT)
    for c in ("etcd", "kube-apiserver"):
        pid = h.cluster_pid(c)
        if pid:
            os.kill(pid, signal.SIGCONT)
    try:
        saved = json.load(open(os.path.join(out, "cabundles.json")))
    except (OSError, ValueError):
        return 0
    api = Api()
    rc = 0
    for res, name, bundles in saved:
        ops = [{"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": b} for i, b in enumerate(bundles)]
        s, b = api.req("PATCH", f"/apis/admissionregistration.k8s.io/v1/{res}/{name}", ops, "application/json-patch+json")
        if not 200 <= s < 300:
            print(f"soak.py --restore: {res}/{name}: {reason_of(s, b)}", file=sys.stderr)
            rc = 1
    return rc


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("--restore", action="store_true",
                    help="only undo what a killed soak may have left: SIGCONT the processes, put back the caBundles")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--max-ms", type=int, default=24)
    ap.add_argument("--namespaces", type=int, default=3)
    ap.add_argument("--fault-gap", default="3,10", help="seconds between faults: MIN,MAX")
    ap.add_argument("--default-image", default="registry.local/model-server:e2e")
    args = ap.parse_args()
    if not args.restore and (args.minutes is None or args.seed is None):
        ap.error("--minutes and --seed are required")
    return args


def chaos(args, st, api, h, audit):
    """Clients, faults, supervisor and checker for the given minutes; then
    every component running again. Returns (checker, t_run, t_end, t_up)."""
    for _ in range(args.namespaces):
        if not new_namespace(st, api, "setup"):
            sys.exit("soak.py: cannot create the namespaces")
    gap = tuple(float(x) for x in args.fault_gap.split(","))
    injector = Injector(st, api, h, gap, args.out)
    supervisor = Supervisor(st, h)
    checker = Checker(st, api, h, audit, args.out)
    clients = [Client(i, st, api, int(env("EXPORTER_PORT")), ns_client=(i == 0)) for i in range(args.clients)]
    for t in [supervisor, checker] + clients + [injector]:
        t.start()
    t_run = now()
    st.stop.wait(args.minutes * 60)
    st.stop.set()
    st.note("time is up: clients and faults stop")
    for c in clients:
        c.join(60)
    injector.join(120)
    t_end = now()
    missing = wait_components(h, st, 120)
    t_up = now()
    if missing:
        st.violation("not-back", "components not running 120 s after the faults stopped", ", ".join(missing))
    supervisor.done.set()
    supervisor.join(90)
    checker.done.set()
    checker.join(90)
    return checker, t_run, t_end, t_up


def converge(args, st, api, t_up):
    """Every ModelService converged, the deleted namespaces gone, within 60 s
    of t_up. Returns (seconds, the ModelServices not converged)."""
    deadline = t_up + 60
    nc, terminating = {"?": "no snapshot"}, []
    while True:
        snap = snapshot(api)
        if snap:
            nc = not_converged(snap, st, args.default_image)
            with st.lock:
                deleted = list(st.ns_deleted)
            s, b = api.get("/api/v1/namespaces?labelSelector=modelops.dev%2Fsoak%3Dtrue")
            present = {n["metadata"]["name"] for n in b.get("items", [])} if s == 200 else set(deleted)
            terminating = sorted(n for n in deleted if n in present)
            if not nc and not terminating and not ownership_violations(snap):
                break
        if now() > deadline:
            break
        time.sleep(1)
    if nc:
        st.violation("converge", f"{len(nc)} ModelService(s) not converged 60 s after the faults stopped",
                     "\n".join(f"{k}: {v}" for k, v in sorted(nc.items())[:40]))
    if terminating:
        st.violation("ns-stuck", "namespaces still there 60 s after the faults stopped", ", ".join(terminating))
    return now() - t_up, nc


def quiet(st, audit, seconds=30):
    """Zero controller writes for SECONDS (after 3 s for in-flight work), from the audit log."""
    time.sleep(3)
    audit.read()
    mark = now()
    time.sleep(seconds + 1)
    audit.read()
    writes = [(t, u, w) for t, u, w, _ in audit.writes if t >= mark]
    if writes:
        st.violation("quiet", f"{len(writes)} controller writes during the {seconds} s quiet period after convergence",
                     "\n".join(f"{u} {w}" for t, u, w in writes[:40]))
    return len(writes)


def main():
    args = parse_args()
    if args.restore:
        return restore(args.out)
    os.makedirs(args.out, exist_ok=True)
    st = State(args.seed, args.max_ms)
    st.ops_file = open(os.path.join(args.out, "ops.jsonl"), "w", buffering=1)
    api, h = Api(), Harness(st)
    audit = Audit(env("E2E_AUDIT_LOG"))
    st.note(f"soak: seed {args.seed}, {args.minutes:g} minutes, {args.clients} clients")

    checker, t_run, t_end, t_up = chaos(args, st, api, h, audit)
    conv_s, nc = converge(args, st, api, t_up)
    conv = f"{conv_s:.1f} s" + (f" (then {len(nc)} not converged)" if nc else "")
    st.note(f"convergence: {conv}")
    n_quiet = quiet(st, audit)
    checker.check(final=True)
    checker.sample_rss()
    rss_rows = rss_judgement(checker.rss, checker.started, t_run, t_end)
    for r in rss_rows:
        if r["violation"]:
            st.violation(f"rss:{r['name']}", f"RSS of {r['name']} grew from {mib(r['first_kb'])} MiB to {mib(r['last_kb'])} MiB",
                         "median of the first third vs the last third of the run (processes past 30 s)")
    timings = [("chaos phase", f"{t_end - t_run:.0f} s"),
               ("components running again", f"{t_up - t_end:.1f} s after the faults stopped"),
               ("convergence", conv), ("quiet period", "30 s"), ("total", f"{now() - st.t0:.0f} s")]
    write_report(os.path.join(args.out, "report.md"), args, st, checker, timings, rss_rows, str(n_quiet), nc)
    st.ops_file.close()
    print(f"soak: {st.ops} operations, {len(st.faults)} faults, {len(st.violations)} violations")
    return 1 if st.violations else 0


if __name__ == "__main__":
    sys.exit(main())
