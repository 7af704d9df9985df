#!/usr/bin/env python3
"""Reads the API server's audit log for bench/controller/run.sh and writes its report.

  analyze.py record --audit FILE --ua PREFIX --t0 EPOCH ... > one JSON line
  analyze.py line < one JSON line           (a one-line summary)
  analyze.py report --results FILE.jsonl    (the markdown report)
"""
import argparse
import collections
import datetime
import json
import sys

WRITES = {"create", "update", "patch", "delete", "deletecollection"}
OBJECTS = {"modelservices", "deployments", "services"}


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def record(a):
    by_verb = collections.Counter()
    reads = 0
    last_write = None
    last_ms_create = None
    failed = collections.Counter()
    with open(a.audit) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("stage") != "ResponseComplete":
                continue
            t = ts(e["stageTimestamp"])
            if t < a.t0:
                continue
            ua = e.get("userAgent") or ""
            ref = e.get("objectRef") or {}
            res = ref.get("resource", "")
            verb = e.get("verb", "")
            if ua.startswith("kubectl") and verb == "create" and res == "modelservices":
                last_ms_create = max(last_ms_create or t, t)
            if not ua.startswith(a.ua) or res == "leases":
                continue
            if verb not in WRITES:
                reads += verb in ("get", "list")
                continue
            what = verb + " " + res + ("/" + ref["subresource"] if ref.get("subresource") else "")
            code = (e.get("responseStatus") or {}).get("code", 0)
            by_verb[what] += 1
            if code >= 400:
                failed[f"{what} {code}"] += 1
            if res in OBJECTS and code < 400:
                last_write = max(last_write or t, t)
    out = {
        "who": a.who, "n": a.n, "label": a.label, "qps": a.qps, "burst": a.burst, "ok": a.ok == 1,
        "converged_s": round(last_write - a.t0, 1) if last_write else None,
        "apply_s": round(last_ms_create - a.t0, 1) if last_ms_create else None,
        "hwm_mib": round(a.hwm_kib / 1024, 1), "rss_mib": round(a.rss_kib / 1024, 1),
        "cpu_s": a.cpu_s, "cpu_total_s": a.cpu_total_s,
        "writes": sum(by_verb.values()), "by_verb": dict(sorted(by_verb.items())),
        "failed_writes": dict(sorted(failed.items())), "reads": reads,
    }
    print(json.dumps(out))


def line(_):
    r = json.loads(sys.stdin.readline())
    print(f"{r['who']} N={r['n']} {r['label']}: converged {r['converged_s']} s (apply {r['apply_s']} s), "
          f"peak RSS {r['hwm_mib']} MiB, CPU {r['cpu_s']} s, {r['writes']} writes {r['by_verb']}, "
          f"failed {r['failed_writes']}, {r['reads']} reads" + ("" if r["ok"] else "  NOT CONVERGED"))


def limits(r):
    if r["label"] == "default":
        return "each at its default" + (" (ours: no client-side limit; controller-runtime: none)")
    return f"QPS {r['qps']} burst {r['burst']} per group-version, both"


def report(a):
    rows = [json.loads(l) for l in open(a.results) if l.strip()]
    runs = {(r["who"], r["n"], r["label"]): r for r in rows}
    ns = sorted({r["n"] for r in rows})
    labels = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    p = print
    p("# Controller benchmark: this controller and controller-runtime, side by side\n")
    p(f"Written by `bench/controller/run.sh` ({a.machine}). Each run: a fresh local control plane "
      "(kube-apiserver v1.34 + etcd, audit log at Metadata level), one controller (concurrency 2, no leader "
      "election), N ModelServices created by one `kubectl apply`. *Converged*: from the start of the apply to "
      "the controller's last write to a ModelService, Deployment or Service (audit log), once every "
      "ModelService has its Deployment, its Service and its status for its generation. *Peak RSS*: VmHWM. "
      "*CPU*: user + system seconds from the apply to 5 s after convergence. *Writes*: create, update, "
      "patch and delete requests of the controller (Events included), from the audit log.\n")
    p("controller-runtime is the peer implementation of the same contract (v0.22.5, kubebuilder style: `CreateOrUpdate`, `Owns()`, "
      "status update, finalizer, Events). Its default is no client-side limit (since v0.21).\n")
    p("| N | client limits | controller | converged s | apply s | peak RSS MiB | CPU s | writes | writes by verb |")
    p("|---:|---|---|---:|---:|---:|---:|---:|---|")
    for n in ns:
        for label in labels:
            for who in ("ours", "cr"):
                r = runs.get((who, n, label))
                if not r:
                    continue
                verbs = ", ".join(f"{k} {v}" for k, v in r["by_verb"].items())
                if r["failed_writes"]:
                    verbs += "; failed: " + ", ".join(f"{k} ×{v}" for k, v in r["failed_writes"].items())
                name = "this controller" if who == "ours" else "controller-runtime"
                conv = r["converged_s"] if r["ok"] else f"not converged ({r['converged_s']})"
                p(f"| {n} | {limits(r)} | {name} | {conv} | {r['apply_s']} | {r['hwm_mib']} | {r['cpu_s']} | "
                  f"{r['writes']} | {verbs} |")
    p("\n## Ratios (this controller / controller-runtime)\n")
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
    if len(ns) >= 2:
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
                r = runs[("ours", lo, label)]
                p(f"| {limits(r)} | {vals['ours']:.1f} | {vals['cr']:.1f} | "
                  f"{vals['ours'] / vals['cr']:.2f} |")


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
    sub.add_parser("line")
    rep = sub.add_parser("report")
    rep.add_argument("--results", required=True)
    rep.add_argument("--machine", default="")
    a = ap.parse_args()
    {"record": record, "line": line, "report": report}[a.cmd](a)


if __name__ == "__main__":
    main()
