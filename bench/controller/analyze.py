#!/usr/bin/env python3
"""Reads the API server's audit log for bench/controller/run.sh and writes its report.

  analyze.py record --audit FILE --ua PREFIX --t0 EPOCH ... > one JSON line (a burst)
  analyze.py record-cold --audit FILE --ua PREFIX --watch FILE ... > one JSON line
                                            (a cold start; FILE is watch.py coldstart's answer)
  analyze.py record-leader --audit FILE --ua PREFIX --watch FILE ... > one JSON line
                                            (a leader change; FILE is watch.py failover's answer)
  analyze.py line < one JSON line           (a one-line summary)
  analyze.py report --results FILE.jsonl    (the markdown report)
  analyze.py report --section ...           (only the section of this run, to append to a report)
  analyze.py plot --results FILE.jsonl --n N --out FILE.svg
                                            (converged ModelServices over time, both controllers)
"""
import argparse
import collections
import datetime
import json
import re
import sys

WRITES = {"create", "update", "patch", "delete", "deletecollection"}
OBJECTS = {"modelservices", "deployments", "services"}


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def scan(audit, ua_prefix, t0):
    """The controller's requests from t0 on: writes by verb, failed writes, reads, the last successful
    write to a ModelService, Deployment or Service (overall and by object name), and kubectl's creates
    of ModelServices by name."""
    s = {"by_verb": collections.Counter(), "failed": collections.Counter(), "reads": collections.Counter(),
         "last_write": None, "last_any": None, "last_by_name": {}, "created": {}}
    with open(audit) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("stage") != "ResponseComplete":
                continue
            t = ts(e["stageTimestamp"])
            if t < t0:
                continue
            ua = e.get("userAgent") or ""
            ref = e.get("objectRef") or {}
            res = ref.get("resource", "")
            verb = e.get("verb", "")
            code = (e.get("responseStatus") or {}).get("code", 0)
            if ua.startswith("kubectl") and verb == "create" and res == "modelservices" and code < 400:
                s["created"][ref.get("name", "")] = t
            if not ua.startswith(ua_prefix) or res == "leases":
                continue
            if verb not in WRITES:
                s["reads"][verb] += 1
                continue
            what = verb + " " + res + ("/" + ref["subresource"] if ref.get("subresource") else "")
            s["by_verb"][what] += 1
            if code >= 400:
                s["failed"][f"{what} {code}"] += 1
            if code < 400:
                s["last_any"] = max(s["last_any"] or t, t)
            if res in OBJECTS and code < 400:
                s["last_write"] = max(s["last_write"] or t, t)
                name = ref.get("name", "")
                s["last_by_name"][name] = max(s["last_by_name"].get(name, t), t)
    return s


def cumulative(times, t0):
    """Counts of the events at or before each whole second after t0, up to the last."""
    secs = sorted(max(0.0, t - t0) for t in times)
    out, i = [], 0
    for k in range(int(secs[-1]) + 2 if secs else 0):
        while i < len(secs) and secs[i] <= k:
            i += 1
        out.append(i)
    return out


def cpu_between(samples, t0, t1):
    """CPU seconds from t0 to t1 by watch.py cpu's samples: from the last sample at or before t0 to the first
    at or after t1 (so the window is at most one sample interval wider on each side); None without samples."""
    return sample_between(samples, t0, t1, 1, 2)


def sample_between(samples, t0, t1, column, digits):
    """The growth of watch.py cpu's COLUMN (1: CPU seconds, 2: voluntary context switches) over [t0, t1], as
    cpu_between; None without samples or without that column (samples of runs before 2026-12-07)."""
    rows = [tuple(map(float, l.split())) for l in open(samples) if l.strip()] if samples else []
    rows = [r for r in rows if len(r) > column]
    if not rows or t1 is None:
        return None
    start = next((r[column] for r in reversed(rows) if r[0] <= t0), rows[0][column])
    end = next((r[column] for r in rows if r[0] >= t1), rows[-1][column])
    return round(end - start, digits)


def work_counts(path, name="modelservice"):
    """What the controller did, from its /metrics at the end of a burst: reconciles, keys added to its queue
    and requests to the API server (by method). Both controllers expose the same names (controller-runtime's)."""
    out = {"reconciles": 0.0, "queue_adds": 0.0, "api_requests": collections.Counter(),
           "by_result": collections.Counter()}
    if not path:
        return None
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r'^(\w+)\{([^}]*)\}\s+(\S+)', line)
                if not m:
                    continue
                metric, labels, value = m.group(1), m.group(2), float(m.group(3))
                if metric == "controller_runtime_reconcile_total" and f'controller="{name}"' in labels:
                    out["reconciles"] += value
                    result = re.search(r'result="([^"]*)"', labels)
                    out["by_result"][result.group(1) if result else "?"] += value
                elif metric == "workqueue_adds_total" and f'name="{name}"' in labels:
                    out["queue_adds"] += value
                elif metric == "rest_client_requests_total":
                    method = re.search(r'method="([^"]*)"', labels)
                    out["api_requests"][method.group(1) if method else "?"] += value
    except OSError:
        return None
    if not out["reconciles"]:
        return None
    return {"reconciles": int(out["reconciles"]), "queue_adds": int(out["queue_adds"]),
            "api_requests": {k: int(v) for k, v in sorted(out["api_requests"].items())},
            "by_result": {k: int(v) for k, v in sorted(out["by_result"].items()) if v}}


def record(a):
    s = scan(a.audit, a.ua, a.t0)
    created = s["created"].values()
    # An object has converged at the controller's last write to it (its ModelService's status, its
    # Deployment or its Service, which share its name); only objects kubectl created in this run.
    conv = [t for name, t in s["last_by_name"].items() if name in s["created"]]
    out = {
        "kind": "burst", "who": a.who, "n": a.n, "label": a.label, "qps": a.qps, "burst": a.burst,
        "rep": a.rep, "ok": a.ok == 1,
        "converged_s": round(s["last_write"] - a.t0, 1) if s["last_write"] else None,
        "apply_s": round(max(created) - a.t0, 1) if created else None,
        "hwm_mib": round(a.hwm_kib / 1024, 1), "rss_mib": round(a.rss_kib / 1024, 1),
        # What users pay: from the apply to 5 s after the controller's last write (Events included). The
        # window the benchmark timed before (to 5 s after the convergence check passed) is kept beside it.
        "cpu_s": cpu_between(a.cpu_samples, a.t0, s["last_any"] + 5 if s["last_any"] else None) or a.cpu_s,
        "cpu_check_s": cpu_between(a.cpu_samples, a.t0, a.t_check + 5) if a.t_check else a.cpu_s,
        # Its threads' voluntary context switches in the same window: how often one slept and was woken.
        "switches": sample_between(a.cpu_samples, a.t0, s["last_any"] + 5 if s["last_any"] else None, 2, 0),
        "last_write_s": round(s["last_any"] - a.t0, 1) if s["last_any"] else None,
        "cpu_total_s": a.cpu_total_s,
        "writes": sum(s["by_verb"].values()), "by_verb": dict(sorted(s["by_verb"].items())),
        "failed_writes": dict(sorted(s["failed"].items())), "reads": s["reads"]["get"] + s["reads"]["list"],
        "etcd_db_mib": a.etcd_db_mib,
        # From its /metrics at the end (counted since its start: the 2 s idle before the apply add nothing).
        "work": work_counts(a.metrics),
        "curve": {"created": cumulative(created, a.t0), "converged": cumulative(conv, a.t0)},
    }
    print(json.dumps(out))


def record_cold(a):
    with open(a.watch) as f:
        w = json.load(f)
    s = scan(a.audit, a.ua, w["t0"])
    out = {
        "kind": "cold", "who": a.who, "n": a.n, "label": a.label, "ok": w.get("reconciled_s") is not None,
        "writes": sum(s["by_verb"].values()), "by_verb": dict(sorted(s["by_verb"].items())),
        "failed_writes": dict(sorted(s["failed"].items())), "lists": s["reads"]["list"],
        "gets": s["reads"]["get"], "watches": s["reads"]["watch"],
    }
    out.update({k: w.get(k) for k in ("synced_s", "list_peak_mib", "reconciled_s", "peak_mib", "cpu_s",
                                     "reconciles", "scrapes", "error")})
    print(json.dumps(out))


def record_leader(a):
    with open(a.watch) as f:
        w = json.load(f)
    s = scan(a.audit, a.ua, w["t0"])
    out = {"kind": "leader", "who": a.who, "n": a.n, "label": a.label, "signal": w.get("signal", "KILL"),
           "ok": w.get("reconciled_s") is not None,
           "writes": sum(s["by_verb"].values()), "by_verb": dict(sorted(s["by_verb"].items())),
           "failed_writes": dict(sorted(s["failed"].items())), "lists": s["reads"]["list"]}
    out.update({k: w.get(k) for k in ("leads_s", "reconciled_s", "cpu_s", "peak_mib", "reconciles", "error")})
    print(json.dumps(out))


def line(_):
    r = json.loads(sys.stdin.readline())
    if r.get("kind") == "leader":
        print(f"{r['who']} N={r['n']} leader change (SIG{r.get('signal', 'KILL')}): leads {r['leads_s']} s, reconciled {r['reconciled_s']} s "
              f"({r['reconciles']} reconciles), CPU {r['cpu_s']} s, peak RSS {r['peak_mib']} MiB, "
              f"{r['writes']} writes {r['by_verb']}" + ("" if r["ok"] else f"  NOT RECONCILED ({r.get('error')})"))
        return
    if r.get("kind") == "cold":
        print(f"{r['who']} N={r['n']} cold start: synced {r['synced_s']} s (LIST peak {r['list_peak_mib']} MiB), "
              f"reconciled {r['reconciled_s']} s ({r['reconciles']} reconciles), peak RSS {r['peak_mib']} MiB, "
              f"CPU {r['cpu_s']} s, {r['writes']} writes {r['by_verb']}, {r['lists']} lists"
              + ("" if r["ok"] else f"  NOT RECONCILED ({r.get('error')})"))
        return
    print(f"{r['who']} N={r['n']} {r['label']}: converged {r['converged_s']} s (apply {r['apply_s']} s), "
          f"peak RSS {r['hwm_mib']} MiB, CPU {r['cpu_s']} s (to 5 s after the convergence check: "
          f"{r.get('cpu_check_s')} s), {r['writes']} writes {r['by_verb']}, "
          f"failed {r['failed_writes']}, {r['reads']} reads"
          + (f", {r['work']['reconciles']} reconciles {r['work'].get('by_result')}, "
             f"{r['work']['queue_adds']} queue adds, API requests "
             f"{r['work']['api_requests']}" if r.get("work") else "") + ("" if r["ok"] else "  NOT CONVERGED"))


def limits(r):
    if r["label"] == "default":
        return "each at its default" + (" (ours: no client-side limit; controller-runtime: none)")
    return f"QPS {r['qps']} burst {r['burst']} per group-version, both"


NAME = {"ours": "this controller", "cr": "controller-runtime"}


def verbs_of(r):
    v = ", ".join(f"{k} {n}" for k, n in r["by_verb"].items())
    if r["failed_writes"]:
        v += "; failed: " + ", ".join(f"{k} ×{n}" for k, n in r["failed_writes"].items())
    return v or "none"


def ratio(o, c):
    return f"{o / c:.2f}" if o is not None and c else "–"


MEDIAN_FIELDS = ("converged_s", "apply_s", "hwm_mib", "cpu_s", "cpu_check_s", "last_write_s", "switches")


def median_run(reps):
    """One row of repeated bursts: each measured figure the median of the repeats (the lower of the middle two
    when they are even in number), the rest from the first."""
    out = dict(reps[0])
    for k in MEDIAN_FIELDS:
        vals = sorted(r[k] for r in reps if r.get(k) is not None)
        out[k] = vals[(len(vals) - 1) // 2] if vals else None
    works = sorted((r["work"] for r in reps if r.get("work")), key=lambda w: w["reconciles"])
    out["work"] = works[(len(works) - 1) // 2] if works else None
    out["ok"] = all(r["ok"] for r in reps)
    return out


def burst_tables(p, all_runs, ns, labels):
    runs = {k: median_run(v) for k, v in all_runs.items()}
    repeats = max(len(v) for v in all_runs.values())
    check = any(r.get("cpu_check_s") is not None for v in all_runs.values() for r in v)
    p("| N | client limits | controller | " + ("run | " if repeats > 1 else "")
      + "converged s | apply s | peak RSS MiB | CPU s | "
      + ("last write s | CPU s to the check + 5 s | " if check else "") + "writes | writes by verb |")
    p("|---:|---|---|" + ("---:|" if repeats > 1 else "") + "---:|---:|---:|---:|" + ("---:|---:|" if check else "")
      + "---:|---|")
    for n in ns:
        for label in labels:
            for who in ("ours", "cr"):
                for r in all_runs.get((who, n, label), []):
                    conv = r["converged_s"] if r["ok"] else f"not converged ({r['converged_s']})"
                    extra = f"{r.get('last_write_s')} | {r.get('cpu_check_s')} | " if check else ""
                    rep = f"{r.get('rep', 1)} | " if repeats > 1 else ""
                    p(f"| {n} | {limits(r)} | {NAME[who]} | {rep}{conv} | {r['apply_s']} | {r['hwm_mib']} | "
                      f"{r['cpu_s']} | {extra}{r['writes']} | {verbs_of(r)} |")
    p("\n### Ratios (this controller / controller-runtime)\n")
    if repeats > 1:
        p(f"Each figure below is the median of the {repeats} runs of each controller at each N (each measured "
          "figure on its own).\n")
    p("Goals: convergence time at most 1 (no slower), memory per cached ModelService at most 0.25, CPU at most 0.5.\n")
    p("| N | client limits | convergence time | CPU seconds |")
    p("|---:|---|---:|---:|")
    for n in ns:
        for label in labels:
            o, c = runs.get(("ours", n, label)), runs.get(("cr", n, label))
            if not o or not c or not o["converged_s"] or not c["converged_s"]:
                continue
            p(f"| {n} | {limits(o)} | {o['converged_s'] / c['converged_s']:.2f} "
              f"({o['converged_s']} / {c['converged_s']} s) | {o['cpu_s'] / max(c['cpu_s'], 0.01):.2f} "
              f"({o['cpu_s']} / {c['cpu_s']} s) |")
    if len(ns) < 2:
        return
    lo, hi = ns[0], ns[-1]
    p(f"\nMemory per cached ModelService: the slope of peak RSS between N={lo} and N={hi}.\n")
    p("| client limits | this controller KiB/object | controller-runtime KiB/object | ratio |")
    p("|---|---:|---:|---:|")
    for label in labels:
        vals = {}
        for who in ("ours", "cr"):
            a1, a2 = runs.get((who, lo, label)), runs.get((who, hi, label))
            if a1 and a2:
                vals[who] = (a2["hwm_mib"] - a1["hwm_mib"]) * 1024 / (hi - lo)
        if len(vals) == 2:
            p(f"| {limits(runs[('ours', lo, label)])} | {vals['ours']:.1f} | {vals['cr']:.1f} | "
              f"{ratio(vals['ours'], vals['cr'])} |")
    p(f"\nPer object, N={lo} against N={hi} (a ratio near 1 is linear growth; the apply itself sets a floor "
      "on the time per object; *wake-ups*: the voluntary context switches of all the controller's threads in "
      "the CPU window, each a thread that slept and was woken, from /proc/PID/task/*/status):\n")
    p("| client limits | controller | converged ms/object | CPU ms/object | ratio N={0}/N={1}: time, CPU | "
      "reconciles/object | queue adds/object | API requests/object | CPU µs/reconcile | "
      "wake-ups/object |".format(hi, lo))
    p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label in labels:
        for who in ("ours", "cr"):
            a1, a2 = runs.get((who, lo, label)), runs.get((who, hi, label))
            if not a1 or not a2 or not a1["converged_s"] or not a2["converged_s"]:
                continue
            t1, t2 = a1["converged_s"] * 1000 / lo, a2["converged_s"] * 1000 / hi
            c1, c2 = a1["cpu_s"] * 1000 / lo, a2["cpu_s"] * 1000 / hi
            w1, w2 = a1.get("work"), a2.get("work")

            def per(key, f=lambda w: w):
                if not w1 or not w2:
                    return "–"
                v1, v2 = f(w1[key]) / lo, f(w2[key]) / hi
                return f"{v1:.2f} → {v2:.2f}"
            per_rec = (f"{a1['cpu_s'] * 1e6 / w1['reconciles']:.0f} → {a2['cpu_s'] * 1e6 / w2['reconciles']:.0f}"
                       if w1 and w2 else "–")
            wakes = (f"{a1['switches'] / lo:.1f} → {a2['switches'] / hi:.1f}"
                     if a1.get("switches") is not None and a2.get("switches") is not None else "–")
            p(f"| {limits(a1)} | {NAME[who]} | {t1:.2f} → {t2:.2f} | {c1:.2f} → {c2:.2f} | "
              f"{ratio(t2, t1)}, {ratio(c2, c1)} | {per('reconciles')} | {per('queue_adds')} | "
              f"{per('api_requests', lambda d: sum(d.values()))} | {per_rec} | {wakes} |")


def cold_tables(p, cold, ns):
    p("\n### Cold start\n")
    p("Each controller, after its burst above, is stopped (SIGTERM) and started again against the N ModelServices "
      "it converged (same flags, same cluster). *Synced*: seconds from its start until it logs that its caches "
      "synced and its workers start. *LIST peak*: its VmHWM at that moment, sampled every 20 ms (the peak RSS of "
      "the initial LISTs: nothing else has run yet). *Reconciled*: seconds from its start until its `/metrics` "
      "(read every 0.5 s after the sync) show `controller_runtime_reconcile_total{controller=\"modelservice\"}` "
      ">= N with `workqueue_depth` 0 and no active worker: every ModelService the initial LIST queued has been "
      "reconciled once. *Peak RSS*: VmHWM 10 s after that. *CPU*: user + system seconds of the process by then. "
      "*Writes*: the controller's create, update, patch and delete requests from its start to 10 s after "
      "*reconciled* (audit log; Events included). Goals: 0 writes; peak RSS at most 1/4 of controller-runtime's.\n")
    p("| N | controller | synced s | reconciled s | reconciles | writes | writes by verb | LISTs | "
      "LIST peak MiB | peak RSS MiB | CPU s |")
    p("|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for n in ns:
        for who in ("ours", "cr"):
            r = cold.get((who, n))
            if not r:
                continue
            rec = r["reconciled_s"] if r["ok"] else f"not reconciled ({r.get('error')})"
            p(f"| {n} | {NAME[who]} | {r['synced_s']} | {rec} | {r['reconciles']} | {r['writes']} | {verbs_of(r)} | "
              f"{r['lists']} | {r['list_peak_mib']} | {r['peak_mib']} | {r['cpu_s']} |")
    p("\nRatios (this controller / controller-runtime):\n")
    p("| N | reconciled time | peak RSS | LIST peak | CPU seconds |")
    p("|---:|---:|---:|---:|---:|")
    for n in ns:
        o, c = cold.get(("ours", n)), cold.get(("cr", n))
        if o and c:
            p(f"| {n} | {ratio(o['reconciled_s'], c['reconciled_s'])} | {ratio(o['peak_mib'], c['peak_mib'])} | "
              f"{ratio(o['list_peak_mib'], c['list_peak_mib'])} | {ratio(o['cpu_s'], c['cpu_s'])} |")


def leader_tables(p, lead, ns):
    p("\n### Leader change\n")
    p("Each controller, after its burst (and cold start), runs as two replicas with leader election (the Lease in "
      "namespace bench, 15 s, renewed every 2 s, both controllers' defaults): the first leads and reconciles the N "
      "converged ModelServices, the second starts as a standby and is given 20 s (ours: until its caches have "
      "synced, `/readyz`); then the leader is stopped, twice: by SIGTERM (a rollout, a drain, an eviction: it "
      "stops its workers and releases the Lease; this controller's standby watches the Lease and takes it at once (since 2026-12-07; before, at its next try, 2-4.4 s later), controller-runtime's at its next try) and, with "
      "a new pair, by SIGKILL (a crash or a lost node: the standby takes the Lease once it has expired, 15 s "
      "after the last renewal). *Leads*: seconds from the signal until the standby's "
      "`leader_election_master_status` is 1. *Reconciled*: seconds from the signal until its `/metrics` show "
      "every ModelService reconciled (as for the cold start). *CPU*, *peak RSS*: the new leader's, from the "
      "signal to 10 s after *reconciled*. *Writes*: both replicas' from the signal to then (audit log; Events "
      "included, Leases not). Goals: 0 writes; reconciled sooner than controller-runtime's cold start.\n")
    p("| N | controller | leader stopped by | leads s | reconciled s | reconciled s after leading | reconciles | "
      "writes | writes by verb | LISTs | peak RSS MiB | CPU s |")
    p("|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for n in ns:
        for who in ("ours", "cr"):
            for sig in ("TERM", "KILL"):
                r = lead.get((who, n, sig))
                if not r:
                    continue
                rec = r["reconciled_s"] if r["ok"] else f"not reconciled ({r.get('error')})"
                after = round(r["reconciled_s"] - r["leads_s"], 2) if r["ok"] and r["leads_s"] is not None else "–"
                p(f"| {n} | {NAME[who]} | SIG{sig} | {r['leads_s']} | {rec} | {after} | {r['reconciles']} | "
                  f"{r['writes']} | {verbs_of(r)} | {r['lists']} | {r['peak_mib']} | {r['cpu_s']} |")


METHOD = ("Each run: a fresh local control plane (kube-apiserver v1.34 + etcd, audit log at Metadata level), one "
          "controller (concurrency 2, no leader election), N ModelServices created by one `kubectl apply`. "
          "*Converged*: from the start of the apply to the controller's last write to a ModelService, Deployment "
          "or Service (audit log), once every ModelService has its Deployment, its Service and its status for its "
          "generation. *Peak RSS*: VmHWM. *CPU*: user + system seconds from the apply to 5 s after the controller's "
          "last write (Events included; sampled every 0.5 s; runs before 2026-12-06: to 5 s after the "
          "convergence check passed, which the check's period could put before or after the last write). "
          "*Writes*: create, update, patch and delete requests of the controller (Events included), from the "
          "audit log.\n")
PEER = ("controller-runtime is the peer implementation of the same contract (v0.22.5, kubebuilder style: "
        "`CreateOrUpdate`, `Owns()`, status update, finalizer, Events). Its default is no client-side limit "
        "(since v0.21).\n")


def report(a):
    rows = [json.loads(l) for l in open(a.results) if l.strip()]
    bursts = [r for r in rows if r.get("kind", "burst") == "burst"]
    runs = collections.defaultdict(list)
    for r in bursts:
        runs[(r["who"], r["n"], r["label"])].append(r)
    cold = {(r["who"], r["n"]): r for r in rows if r.get("kind") == "cold"}
    lead = {(r["who"], r["n"], r.get("signal", "KILL")): r for r in rows if r.get("kind") == "leader"}
    ns = sorted({r["n"] for r in bursts})
    labels = list(dict.fromkeys(r["label"] for r in bursts))
    p = print
    if not a.section:
        p("# Controller benchmark: this controller and controller-runtime, side by side\n")
        p(f"Written by `bench/controller/run.sh`. {METHOD}")
        p(PEER)
    p(f"## {a.title}\n")
    p(f"Machine: {a.machine}." + (f" Commit {a.commit}." if a.commit else "")
      + (f" Load average (1 min) before / after: {a.load}." if a.load else ""))
    if a.command:
        p(f"Command: `{a.command}`.")
    if a.apiserver:
        p(f"kube-apiserver flags added to test/e2e/cluster.sh's: `{a.apiserver}` (a large cluster's in-flight "
          "limits). kubectl and both controllers use the cluster's admin credentials (group system:masters), "
          "which API Priority and Fairness exempts, so no in-flight limit throttled them here.")
    dbs = [r["etcd_db_mib"] for r in bursts if r.get("etcd_db_mib")]
    if dbs:
        p(f"etcd's database after the largest burst: {max(dbs)} MiB (etcd's default quota: 2 GiB).")
    p("")
    burst_tables(p, runs, ns, labels)
    if cold:
        cold_tables(p, cold, sorted({n for _, n in cold}))
    if lead:
        leader_tables(p, lead, sorted({n for _, n, _ in lead}))
    if a.plot:
        p(f"\n### Convergence over time\n\n![Converged ModelServices against seconds since the apply, "
          f"both controllers]({a.plot})\n")
        p("Per controller: ModelServices created by the apply (dashed) and converged (solid: the controller's "
          "last write to the object, its Deployment or its Service, from the audit log), by second since the "
          "start of the apply.")


def plot(a):
    rows = [json.loads(l) for l in open(a.results) if l.strip()]
    curves = [r for r in rows if r.get("kind", "burst") == "burst" and r["n"] == a.n and r["label"] == a.label
              and r.get("curve")]
    last = {}  # of repeated bursts, the last run of each controller
    for r in curves:
        last[r["who"]] = r
    curves = list(last.values())
    if not curves:
        sys.exit(f"analyze.py plot: no burst of N={a.n} ({a.label}) with a curve in {a.results}")
    w, h, left, right, top, bottom = 720, 420, 70, 20, 40, 50
    tmax = max(max(len(r["curve"]["created"]), len(r["curve"]["converged"])) for r in curves) or 1
    ymax = a.n
    x = lambda t: left + (w - left - right) * t / tmax
    y = lambda v: h - bottom - (h - top - bottom) * v / ymax
    colours = {"ours": "#1f77b4", "cr": "#d62728"}
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
         'font-family="sans-serif" font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{a.n:,} ModelServices created by one '
         'kubectl apply: converged over time</text>']
    for k in range(6):
        v = ymax * k / 5
        o.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{w - right}" y2="{y(v):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{int(v):,}</text>')
    step = next(s for s in (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200) if tmax / s <= 10)
    for t in range(0, tmax + 1, step):
        o.append(f'<line x1="{x(t):.1f}" y1="{h - bottom}" x2="{x(t):.1f}" y2="{h - bottom + 4}" stroke="black"/>')
        o.append(f'<text x="{x(t):.1f}" y="{h - bottom + 18}" text-anchor="middle">{t}</text>')
    o.append(f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>')
    o.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>')
    o.append(f'<text x="{(w + left) / 2}" y="{h - 12}" text-anchor="middle">seconds since the start of the apply'
             '</text>')
    o.append(f'<text x="16" y="{(h - bottom + top) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 16 {(h - bottom + top) / 2})">ModelServices</text>')
    ly = top + 10
    for r in curves:
        c = colours.get(r["who"], "black")
        for key, dash, what in (("created", ' stroke-dasharray="5,4"', "created"), ("converged", "", "converged")):
            pts = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in enumerate(r["curve"][key]))
            o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{pts}"/>')
            o.append(f'<line x1="{left + 12}" y1="{ly}" x2="{left + 40}" y2="{ly}" stroke="{c}" stroke-width="2"'
                     f'{dash}/>')
            o.append(f'<text x="{left + 46}" y="{ly + 4}">{NAME[r["who"]]}: {what}</text>')
            ly += 16
    o.append("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--audit", required=True)
    r.add_argument("--ua", required=True)
    r.add_argument("--t0", type=float, required=True)
    r.add_argument("--who", required=True)
    r.add_argument("--n", type=int, required=True)
    r.add_argument("--label", required=True)
    r.add_argument("--qps", default="")
    r.add_argument("--burst", default="")
    r.add_argument("--ok", type=int, default=1)
    r.add_argument("--hwm-kib", type=float, required=True)
    r.add_argument("--rss-kib", type=float, required=True)
    r.add_argument("--cpu-s", type=float, required=True)
    r.add_argument("--cpu-total-s", type=float, required=True)
    r.add_argument("--cpu-samples", default="", help="watch.py cpu's samples of the controller")
    r.add_argument("--t-check", type=float, default=None, help="when the convergence check passed (epoch)")
    r.add_argument("--etcd-db-mib", type=float, default=None)
    r.add_argument("--rep", type=int, default=1, help="which of the repeated bursts of this N this is")
    r.add_argument("--metrics", default="", help="the controller's /metrics at the end of the burst")
    c = sub.add_parser("record-cold")
    for flag in ("--audit", "--ua", "--who", "--watch"):
        c.add_argument(flag, required=True)
    c.add_argument("--n", type=int, required=True)
    c.add_argument("--label", default="default")
    lc = sub.add_parser("record-leader")
    for flag in ("--audit", "--ua", "--who", "--watch"):
        lc.add_argument(flag, required=True)
    lc.add_argument("--n", type=int, required=True)
    lc.add_argument("--label", default="default")
    sub.add_parser("line")
    rep = sub.add_parser("report")
    rep.add_argument("--results", required=True)
    rep.add_argument("--machine", default="")
    rep.add_argument("--section", action="store_true", help="only this run's section, to append to a report")
    rep.add_argument("--title", default="Results")
    rep.add_argument("--commit", default="")
    rep.add_argument("--load", default="")
    rep.add_argument("--command", default="")
    rep.add_argument("--apiserver", default="")
    rep.add_argument("--plot", default="", help="the convergence plot to link, relative to the report")
    pl = sub.add_parser("plot")
    pl.add_argument("--results", required=True)
    pl.add_argument("--n", type=int, required=True)
    pl.add_argument("--label", default="default")
    pl.add_argument("--out", required=True)
    a = ap.parse_args()
    {"record": record, "record-cold": record_cold, "record-leader": record_leader, "line": line, "report": report,
     "plot": plot}[a.cmd](a)


if __name__ == "__main__":
    main()
