#!/usr/bin/env python3
"""What bench/controller/run.sh waits for and samples while a controller runs.

  watch.py converged --n N [--phases P1,P2]
      exit 0 when namespace `bench` holds N Deployments, N Services and N
      ModelServices whose status is for their generation (phase Progressing or
      Ready, or one of --phases); 1 otherwise. Talks to the API server of the cluster's env
      (E2E_API_SERVER, E2E_CA_CERT, E2E_ADMIN_CERT, E2E_ADMIN_KEY): the
      Deployments and Services are counted from metadata-only pages of one
      item (remainingItemCount), and the ModelServices are listed only when
      both counts are N, so that waiting for 10,000 costs the API server little.

  watch.py coldstart --log FILE --metrics URL --n N --synced REGEX ... -- COMMAND...
      starts the controller COMMAND (output to FILE) against N converged
      ModelServices, samples it from its first moment, stops it (SIGTERM;
      SIGKILL after 10 s) and prints one JSON object:
        t0               when it was started (epoch seconds),
        synced_s         seconds from t0 until its log first matches REGEX
                         (the line it writes once its informers have synced and
                         the workers start),
        list_peak_mib    its VmHWM at that moment: the peak RSS of the initial
                         LISTs (the high-water mark cannot fall, so it is the
                         peak of everything before the workers started),
        reconciled_s     seconds from t0 until its /metrics first show, after
                         the sync, controller_runtime_reconcile_total{controller=NAME}
                         (all results) >= N with workqueue_depth{name=NAME} 0 and
                         controller_runtime_active_workers{controller=NAME} 0:
                         every key the initial LIST queued has been reconciled
                         (both controllers queue every listed ModelService
                         before their workers start); /metrics is read every
                         --scrape seconds after the sync, so the figure is up to
                         that much late,
        peak_mib         VmHWM --quiet seconds after that (the whole cold start),
        cpu_s            user + system seconds of the process by then,
        reconciles       the reconcile total then.

  watch.py reconciled --metrics URL --n N
      exit 0 when the controller's /metrics show every key the initial LIST
      queued reconciled: controller_runtime_reconcile_total >= N, an empty
      queue and no busy worker (as coldstart's reconciled_s); 1 otherwise.

  watch.py cpu --pid PID --out FILE [--every S]
      samples PID's CPU seconds (user + system) and its threads' voluntary
      context switches (summed, a thread that exited counted as last seen)
      every S seconds (0.5) into
      FILE, one "EPOCH CPU_SECONDS" line each, until PID exits: the burst's
      CPU is read from it for the window from the apply to 5 s after the
      controller's last write.

  watch.py quiet --audit FILE --ua PREFIX --seconds S --timeout T
      returns once the controller (user agent PREFIX*) has made no write for
      S seconds, and S seconds have passed (reading the audit log as it grows
      from its end at the start); prints the epoch of its last write seen (0:
      none since the start).

  watch.py failover --kill PID --signal TERM|KILL --pid PID2 --metrics URL --n N ...
      a leader change: stops the leader PID (SIGTERM: a rollout or a drain,
      it releases its Lease; SIGKILL: a crash, its Lease expires) and samples the standby
      PID2 (its /metrics every --scrape s) until it leads
      (leader_election_master_status 1) and has reconciled every ModelService
      (as `reconciled`), then --quiet seconds more; prints one JSON object:
      t0 (the kill, epoch seconds), leads_s and reconciled_s (seconds from
      t0), cpu_s (PID2's CPU seconds from t0 to the end), peak_mib (PID2's
      VmHWM at the end), reconciles.

  watch.py writes --audit FILE --ua PREFIX --since EPOCH
      prints {"total": T, "by_verb": {"VERB RESOURCE": count}}: the create,
      update, patch and delete requests by user agent PREFIX* completed
      since EPOCH in the audit log, Leases excluded (Events included).
"""
import argparse
import collections
import datetime
import gzip
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.request


def api_get(path, accept="application/json"):
    ctx = ssl.create_default_context(cafile=os.environ["E2E_CA_CERT"])
    ctx.load_cert_chain(os.environ["E2E_ADMIN_CERT"], os.environ["E2E_ADMIN_KEY"])
    req = urllib.request.Request(os.environ["E2E_API_SERVER"] + path, headers={"Accept": accept})
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
        return json.load(r)


META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def count(path):
    """The number of objects in a collection: one metadata-only item and remainingItemCount."""
    page = api_get(path + "?limit=1", META)
    rest = page.get("metadata", {}).get("remainingItemCount")
    if rest is not None or not page.get("metadata", {}).get("continue"):
        return len(page.get("items", [])) + (rest or 0)
    return len(api_get(path, META).get("items", []))  # no count given: list the metadata


def converged(a):
    ns = "/namespaces/bench/"
    if count("/apis/apps/v1" + ns + "deployments") != a.n or count("/api/v1" + ns + "services") != a.n:
        return 1
    items = api_get("/apis/modelops.dev/v1" + ns + "modelservices").get("items", [])
    phases = set(a.phases.split(","))
    done = sum(1 for m in items
               if (m.get("status") or {}).get("phase") in phases
               and (m.get("status") or {}).get("observedGeneration") == m["metadata"].get("generation"))
    return 0 if done == a.n else 1


def proc_status(pid):
    kib = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    kib[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        return None
    return kib


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape(url, name):
    """(reconcile total, queue depth, active workers) of controller NAME from a /metrics page."""
    total = depth = active = 0.0
    # As Prometheus asks (each controller gzips its answer when asked).
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        for raw in body.splitlines():
            line = raw.decode("utf-8", "replace")
            if line.startswith("#"):
                continue
            m = re.match(r'^(\w+)\{([^}]*)\}\s+(\S+)', line)
            if not m:
                continue
            metric, labels, value = m.group(1), m.group(2), float(m.group(3))
            if metric == "controller_runtime_reconcile_total" and f'controller="{name}"' in labels:
                total += value
            elif metric == "workqueue_depth" and f'name="{name}"' in labels:
                depth += value
            elif metric == "controller_runtime_active_workers" and f'controller="{name}"' in labels:
                active += value
    return total, depth, active


def coldstart(a):
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    with open(a.log, "w") as log:
        t0 = time.time()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        out = sample(a, proc.pid, t0)
    except (OSError, ValueError) as e:  # /metrics unreadable at the end, say
        out = {"t0": t0, "reconciled_s": None, "error": str(e)}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    print(json.dumps(out))
    return 0 if out["reconciled_s"] is not None else 1


def sample(a, pid, t0):
    synced = re.compile(a.synced)
    out = {"t0": t0, "synced_s": None, "list_peak_mib": None, "reconciled_s": None, "peak_mib": None,
           "cpu_s": None, "reconciles": None, "scrapes": 0}
    pos, buf, next_scrape, done_at = 0, "", 0.0, None
    while time.time() < t0 + a.timeout:
        kib = proc_status(pid)
        if kib is None:
            return dict(out, error="the controller exited")
        now = time.time()
        if out["synced_s"] is None:
            with open(a.log, errors="replace") as f:
                f.seek(pos)
                buf += f.read()
                pos = f.tell()
            if synced.search(buf):
                out["synced_s"] = round(now - t0, 2)
                out["list_peak_mib"] = round(kib["VmHWM"] / 1024, 1)
            buf = buf[buf.rfind("\n") + 1:]
        elif done_at is None and now >= next_scrape:
            next_scrape = now + a.scrape
            try:
                total, depth, active = scrape(a.metrics, a.controller)
            except OSError:
                total, depth, active = 0, 1, 1
            out["scrapes"] += 1
            if total >= a.n and depth == 0 and active == 0:
                out["reconciled_s"] = round(time.time() - t0, 2)
                done_at = time.time()
        elif done_at is not None and now - done_at >= a.quiet:
            out["reconciles"] = int(scrape(a.metrics, a.controller)[0])
            kib = proc_status(pid) or kib
            return dict(out, peak_mib=round(kib["VmHWM"] / 1024, 1), cpu_s=round(cpu_seconds(pid), 2))
        time.sleep(a.interval)
    kib = proc_status(pid) or {"VmHWM": 0}
    return dict(out, peak_mib=round(kib["VmHWM"] / 1024, 1), error=f"not reconciled in {a.timeout} s")


def cpu(a):
    seen = {}  # thread id -> its last count: a thread that exits keeps what it had
    with open(a.out, "w", buffering=1) as f:
        while True:
            try:
                c = cpu_seconds(a.pid)
            except (OSError, IndexError):
                return 0
            seen.update(voluntary_switches(a.pid))
            f.write(f"{time.time():.3f} {c:.2f} {sum(seen.values())}\n")
            time.sleep(a.every)


def voluntary_switches(pid):
    """Voluntary context switches of each of PID's threads now (each time one slept and was woken), by thread."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        out[tid] = int(line.split()[1])
        except OSError:
            pass
    return out


def quiet(a):
    # From the log's end now: only writes from here on can keep it waiting (it waits S seconds at least).
    start, last, pos, buf = time.time(), 0.0, os.path.getsize(a.audit), ""
    while time.time() < start + a.timeout:
        with open(a.audit, errors="replace") as f:
            f.seek(pos)
            buf += f.read()
            pos = f.tell()
        lines, buf = buf.split("\n"), ""
        if lines and lines[-1]:
            buf = lines.pop()  # a line still being written
        for line in lines:
            if '"userAgent":"' + a.ua not in line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if (e.get("stage") == "ResponseComplete" and e.get("verb") in WRITES
                    and (e.get("objectRef") or {}).get("resource") != "leases"):
                last = max(last, ts(e["stageTimestamp"]))
        now = time.time()
        if now - start >= a.seconds and now - max(last, start) >= a.seconds:
            print(f"{last:.3f}")
            return 0
        time.sleep(1)
    print(f"{last:.3f}")
    return 1


def leads(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return any(raw.startswith(b"leader_election_master_status{") and raw.split()[-1] in (b"1", b"1.0")
                   for raw in r)


def failover(a):
    cpu0 = cpu_seconds(a.pid)
    t0 = time.time()
    os.kill(a.kill, signal.SIGTERM if a.signal == "TERM" else signal.SIGKILL)
    out = {"t0": t0, "signal": a.signal, "leads_s": None, "reconciled_s": None, "cpu_s": None, "peak_mib": None, "reconciles": None}
    done_at = None
    while time.time() < t0 + a.timeout:
        now = time.time()
        try:
            if out["leads_s"] is None:
                if leads(a.metrics):
                    out["leads_s"] = round(now - t0, 2)
            elif done_at is None:
                total, depth, active = scrape(a.metrics, a.controller)
                if total >= a.n and depth == 0 and active == 0:
                    out["reconciled_s"] = round(time.time() - t0, 2)
                    done_at = time.time()
            elif now - done_at >= a.quiet:
                out["reconciles"] = int(scrape(a.metrics, a.controller)[0])
                break
        except OSError:
            pass  # not answering yet
        time.sleep(a.scrape)
    kib = proc_status(a.pid) or {"VmHWM": 0}
    out.update(peak_mib=round(kib["VmHWM"] / 1024, 1), cpu_s=round(cpu_seconds(a.pid) - cpu0, 2))
    if out["reconciled_s"] is None:
        out["error"] = f"not reconciled in {a.timeout} s"
    print(json.dumps(out))
    return 0 if out["reconciled_s"] is not None else 1


def reconciled(a):
    total, depth, active = scrape(a.metrics, a.controller)
    return 0 if total >= a.n and depth == 0 and active == 0 else 1


WRITES = {"create", "update", "patch", "delete", "deletecollection"}


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def writes(a):
    by_verb = collections.Counter()
    with open(a.audit) as f:
        for line in f:
            if '"userAgent":"' + a.ua not in line:  # cheap: most lines are not the controller's
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            ref = e.get("objectRef") or {}
            if (e.get("stage") != "ResponseComplete" or e.get("verb") not in WRITES
                    or not (e.get("userAgent") or "").startswith(a.ua) or ref.get("resource") == "leases"
                    or ts(e["stageTimestamp"]) < a.since):
                continue
            by_verb[e["verb"] + " " + ref.get("resource", "") +
                    ("/" + ref["subresource"] if ref.get("subresource") else "")] += 1
    print(json.dumps({"total": sum(by_verb.values()), "by_verb": dict(sorted(by_verb.items()))}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("converged")
    c.add_argument("--n", type=int, required=True)
    c.add_argument("--phases", default="Progressing,Ready", help="the phases that count as converged")
    r = sub.add_parser("reconciled")
    r.add_argument("--metrics", required=True)
    r.add_argument("--n", type=int, required=True)
    r.add_argument("--controller", default="modelservice")
    w = sub.add_parser("writes")
    w.add_argument("--audit", required=True)
    w.add_argument("--ua", required=True)
    w.add_argument("--since", type=float, required=True)
    cp = sub.add_parser("cpu")
    cp.add_argument("--pid", type=int, required=True)
    cp.add_argument("--out", required=True)
    cp.add_argument("--every", type=float, default=0.5)
    q = sub.add_parser("quiet")
    q.add_argument("--audit", required=True)
    q.add_argument("--ua", required=True)
    q.add_argument("--seconds", type=float, default=5)
    q.add_argument("--timeout", type=float, default=600)
    fo = sub.add_parser("failover")
    fo.add_argument("--kill", type=int, required=True, help="the leader's pid")
    fo.add_argument("--signal", choices=("TERM", "KILL"), default="KILL", help="how the leader is stopped")
    fo.add_argument("--pid", type=int, required=True, help="the standby's pid")
    fo.add_argument("--metrics", required=True, help="the standby's /metrics")
    fo.add_argument("--n", type=int, required=True)
    fo.add_argument("--controller", default="modelservice")
    fo.add_argument("--scrape", type=float, default=0.25)
    fo.add_argument("--quiet", type=float, default=10)
    fo.add_argument("--timeout", type=float, default=600)
    s = sub.add_parser("coldstart")
    s.add_argument("--log", required=True)
    s.add_argument("--metrics", required=True)
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--synced", required=True, help="regex of the log line written once the caches synced")
    s.add_argument("--controller", default="modelservice")
    s.add_argument("--interval", type=float, default=0.02, help="seconds between samples of /proc")
    s.add_argument("--scrape", type=float, default=0.5, help="seconds between reads of /metrics")
    s.add_argument("--quiet", type=float, default=10, help="seconds watched after every object was reconciled")
    s.add_argument("--timeout", type=float, default=900)
    s.add_argument("command", nargs=argparse.REMAINDER, help="-- the controller and its arguments")
    a = ap.parse_args()
    try:
        return {"converged": converged, "coldstart": coldstart, "reconciled": reconciled, "writes": writes,
                "cpu": cpu, "quiet": quiet, "failover": failover}[a.cmd](a)
    except OSError as e:  # the API server or the controller did not answer: not yet
        print(f"watch.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
