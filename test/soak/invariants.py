"""The invariants: audit log, ownership at one revision, validate, convergence, RSS."""
import bisect
import calendar
import json
import math
import os
import statistics
import subprocess
import threading
import time

from common import CONTROLLERS, GROUP, LEASE_GRACE_S, MANAGED, env, now

# ---------------------------------------------------------------- invariants

class Audit:
    """The controllers' writes and Lease writes from the audit log."""

    def __init__(self, path):
        self.path = path
        self.offset = os.path.getsize(path)
        self.start_offset = self.offset
        self.lease = []    # (t, user, holder_nonempty)
        self.writes = []   # (t, user, what, auditID)
        self.users = {f"e2e:{n}" for n in CONTROLLERS}
        self.t_start = now()

    @staticmethod
    def ts(s):
        # RFC 3339 with microseconds, UTC
        base, _, frac = s.rstrip("Z").partition(".")
        t = calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S"))
        return t + (float("0." + frac) if frac else 0.0)

    def read(self):
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        for line in data[:end].split(b"\n"):
            if b"e2e:controller" not in line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("stage") != "ResponseComplete":
                continue
            user = e.get("user", {}).get("username")
            verb = e.get("verb")
            if user not in self.users or verb not in ("create", "update", "patch", "delete", "deletecollection"):
                continue
            ref = e.get("objectRef", {})
            t = self.ts(e["requestReceivedTimestamp"])
            code = e.get("responseStatus", {}).get("code", 0)
            if ref.get("resource") == "leases":
                if ref.get("name") == "modelservice-controller" and code < 300:
                    holder = ((e.get("requestObject") or {}).get("spec") or {}).get("holderIdentity") or ""
                    self.lease.append((t, user, holder != ""))
                continue
            sub = "/" + ref["subresource"] if ref.get("subresource") else ""
            what = f"{verb} {ref.get('resource')}{sub} {ref.get('namespace', '')}/{ref.get('name', '')} {code}"
            self.writes.append((t, user, what, e.get("auditID")))

    def writes_after_loss(self, upto):
        """Writes received when their writer did not hold the Lease: after another
        controller's successful Lease write, after its own release, or later than
        its last successful renewal + the renew deadline (as case 71 judges)."""
        lease = sorted(self.lease)
        lease_t = [l[0] for l in lease]
        own = {}  # user -> sorted times of its successful acquisitions/renewals
        for lt, lu, held in lease:
            if held:
                own.setdefault(lu, []).append(lt)
        bad = []
        for t, user, what, aid in sorted(self.writes):
            if t > upto:
                break
            i = bisect.bisect_right(lease_t, t) - 1
            last_any = lease[i] if i >= 0 else None
            mine = own.get(user, [])
            j = bisect.bisect_right(mine, t) - 1
            last_own = mine[j] if j >= 0 else None
            if last_own is None and t < self.t_start + LEASE_GRACE_S + 2:
                continue  # its last renewal may predate the part of the log read
            if last_any is None or last_own is None:
                bad.append((t, user, what, aid, "no successful Lease write by it before"))
            elif last_any[1] != user:
                bad.append((t, user, what, aid, f"{last_any[1]} {'took' if last_any[2] else 'released'} the Lease at {last_any[0]:.3f}"))
            elif not last_any[2]:
                bad.append((t, user, what, aid, f"it released the Lease at {last_any[0]:.3f}"))
            elif t > last_own + LEASE_GRACE_S:
                bad.append((t, user, what, aid, f"its last renewal was at {last_own:.3f}, deadline {last_own + LEASE_GRACE_S:.3f}"))
        return bad


def list_all(api, path, rv=None):
    """Items in the soak's namespaces (soak-*: other cases' leftovers are not its business)."""
    q = f"?resourceVersion={rv}&resourceVersionMatch=Exact" if rv else ""
    s, b = api.get(path + q, timeout=30)
    if s != 200 or not isinstance(b, dict):
        return None, None
    items = [i for i in b.get("items", []) if i["metadata"].get("namespace", "").startswith("soak-")]
    return items, b.get("metadata", {}).get("resourceVersion")


def snapshot(api):
    """ModelServices, Deployments, Services and HPAs at one etcd revision."""
    deps, rv = list_all(api, "/apis/apps/v1/deployments")
    if deps is None:
        return None
    mss, _ = list_all(api, f"{GROUP}/modelservices", rv)
    svcs, _ = list_all(api, "/api/v1/services", rv)
    hpas, _ = list_all(api, "/apis/autoscaling/v2/horizontalpodautoscalers", rv)
    if mss is None or svcs is None or hpas is None:
        return None
    return {"rv": rv, "ms": mss, "deployments": deps, "services": svcs, "hpas": hpas}


def key_of(o):
    return (o["metadata"].get("namespace"), o["metadata"]["name"])


def ownership_violations(snap):
    """Owned objects with two controller owners, without a live owner, or left
    behind by a deleted ModelService (at one revision: no race)."""
    uids = {m["metadata"]["uid"]: m for m in snap["ms"]}
    out = []
    for kind in ("deployments", "services", "hpas"):
        for o in snap[kind]:
            md = o["metadata"]
            refs = [r for r in md.get("ownerReferences", []) if r.get("kind") == "ModelService"]
            managed = md.get("labels", {}).get(MANAGED) == "modelservice-controller"
            if not refs and not managed:
                continue
            ctl = [r for r in md.get("ownerReferences", []) if r.get("controller")]
            name = f"{kind[:-1]} {md.get('namespace')}/{md['name']}"
            if len(ctl) > 1:
                out.append((f"two-owners:{name}:{md['uid']}", f"{name} has {len(ctl)} controller owners",
                            json.dumps(md.get("ownerReferences"))))
            if not refs:
                out.append((f"no-owner:{name}:{md['uid']}", f"{name} is labelled managed-by the controller but has no owner",
                            json.dumps(md.get("labels"))))
                continue
            for r in refs:
                if r["uid"] not in uids:
                    same = [m for m in snap["ms"] if key_of(m) == (md.get("namespace"), r["name"])]
                    why = (f"left behind by a deleted ModelService {r['name']} (uid {r['uid']}; a new one of that name has uid "
                           f"{same[0]['metadata']['uid']})" if same else f"orphaned: its owner ModelService {r['name']} (uid {r['uid']}) is gone")
                    out.append((f"orphan:{name}:{md['uid']}", f"{name}: {why}",
                                f"at resourceVersion {snap['rv']}; deletionTimestamp of the object: "
                                f"{md.get('deletionTimestamp')}; finalizers: {md.get('finalizers')}"))
    return out


def validate_stored(webhook_bin, mss, path):
    with open(path, "w") as f:
        for m in mss:
            m = dict(m)
            md = dict(m["metadata"])
            md.pop("managedFields", None)
            m["metadata"] = md
            m.pop("status", None)
            f.write("---\n" + json.dumps(m) + "\n")
    p = subprocess.run([webhook_bin, "validate", "-f", path], capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


class Checker(threading.Thread):
    STUCK_S = 180.0

    def __init__(self, st, api, h, audit, out):
        super().__init__(name="checker", daemon=True)
        self.st, self.api, self.h, self.audit, self.out = st, api, h, audit, out
        self.rounds = 0
        self.snapshots = 0
        self.validated = 0
        self.done = threading.Event()
        self.rss = []   # (t, name, pid, kb)
        self.started = {}  # (name, pid) -> first seen

    def run(self):
        last_check = 0.0
        while not self.done.wait(5.0):
            self.sample_rss()
            if now() - last_check >= 20:
                last_check = now()
                self.check(final=False)

    def sample_rss(self):
        t = now()
        for name in CONTROLLERS + ("webhook",):
            pid = self.h.pid(name)
            if not pid:
                continue
            if (name, pid) not in self.started:
                self.started[(name, pid)] = self.h.start_time(pid) or t
            kb = self.h.rss_kb(pid)
            if kb:
                self.rss.append((t, name, pid, kb))

    def check(self, final):
        self.rounds += 1
        snap = snapshot(self.api)
        if snap:
            self.snapshots += 1
            for key, what, ev in ownership_violations(snap):
                self.st.violation(key, what, ev)
            for m in snap["ms"]:
                dt = m["metadata"].get("deletionTimestamp")
                if dt and now() - Audit.ts(dt) > (0 if final else self.STUCK_S):
                    k = f"{m['metadata']['namespace']}/{m['metadata']['name']}"
                    self.st.violation(f"stuck:{k}", f"ModelService {k} stuck with deletionTimestamp {dt}",
                                      f"finalizers {m['metadata'].get('finalizers')}; status {json.dumps(m.get('status', {}))[:400]}")
            rc, out = validate_stored(env("WEBHOOK_BIN"), snap["ms"], os.path.join(self.out, "stored.yaml"))
            if rc == 0:
                self.validated += len(snap["ms"])
            else:
                self.st.violation(f"validate:{hash(out)}", "a stored ModelService is rejected by `modelservice-webhook validate`", out[-1500:])
        try:
            self.audit.read()
        except OSError as e:
            self.st.note(f"checker: audit log unreadable: {e}")
        horizon = now() - (0 if final else 20)
        for t, user, what, aid, why in self.audit.writes_after_loss(horizon):
            self.st.violation(f"lease:{aid}", f"{user} wrote after it lost the Lease",
                              f"{time.strftime('%H:%M:%S', time.gmtime(t))}.{int(t % 1 * 1e6):06d} {what} (auditID {aid}): {why}")


# ---------------------------------------------------------------- convergence

def expected_replicas(m, queue):
    spec = m["spec"]
    a = spec.get("autoscaling")
    if not a:
        return spec.get("replicas", 1)
    if queue is None:
        return None
    lo, hi = a.get("minReplicas", 1), a["maxReplicas"]
    return max(1, min(hi, max(lo, math.ceil(queue / a["targetQueueLength"]))))


def not_converged(snap, st, default_image):
    """{ns/name: why} for every ModelService that has not converged."""
    deps = {key_of(d): d for d in snap["deployments"]}
    svcs = {key_of(s): s for s in snap["services"]}
    hpas = {key_of(x): x for x in snap["hpas"]}
    with st.lock:
        queues = {k: v.get("queue") for k, v in st.ms.items()}
    bad = {}
    for m in snap["ms"]:
        k = key_of(m)
        name = f"{k[0]}/{k[1]}"
        md, spec, status = m["metadata"], m["spec"], m.get("status", {})
        uid = md["uid"]

        def owned(o):
            return o is not None and any(r.get("uid") == uid and r.get("controller") for r in o["metadata"].get("ownerReferences", []))
        why = []
        if md.get("deletionTimestamp"):
            why.append("being deleted")
        if status.get("observedGeneration") != md.get("generation"):
            why.append(f"observedGeneration {status.get('observedGeneration')} != generation {md.get('generation')}")
        if status.get("phase") != "Ready" or status.get("readyReplicas") != status.get("desiredReplicas"):
            why.append(f"phase {status.get('phase')}, ready {status.get('readyReplicas')}/{status.get('desiredReplicas')}")
        want = expected_replicas(m, queues.get(k))
        if want is not None and status.get("desiredReplicas") != want:
            why.append(f"desiredReplicas {status.get('desiredReplicas')}, expected {want}")
        d = deps.get(k)
        if not owned(d):
            why.append("no Deployment owned by it")
        else:
            c = d["spec"]["template"]["spec"]["containers"][0]
            envs = {e["name"]: e.get("value") for e in c.get("env", [])}
            if c.get("image") != spec.get("image", default_image):
                why.append(f"Deployment image {c.get('image')}")
            if "version" in spec and envs.get("MODEL_VERSION") != spec["version"]:
                why.append(f"Deployment MODEL_VERSION {envs.get('MODEL_VERSION')} != {spec['version']}")
            if d["spec"].get("replicas") != status.get("desiredReplicas"):
                why.append(f"Deployment replicas {d['spec'].get('replicas')}")
            if d["spec"].get("strategy", {}).get("type") != spec.get("strategy", {}).get("type", "RollingUpdate"):
                why.append(f"Deployment strategy {d['spec'].get('strategy', {}).get('type')}")
            if d["metadata"].get("labels", {}).get(MANAGED) != "modelservice-controller":
                why.append("Deployment lost its managed-by label")
        s = svcs.get(k)
        if not owned(s):
            why.append("no Service owned by it")
        elif s["spec"]["ports"][0].get("port") != spec.get("port", 8080):
            why.append(f"Service port {s['spec']['ports'][0].get('port')}")
        hpa_mode = (spec.get("autoscaling") or {}).get("mode") == "HPA"
        if hpa_mode != owned(hpas.get(k)):
            why.append("HPA expected" if hpa_mode else "HPA left over")
        if why:
            bad[name] = "; ".join(why)
    return bad


def wait_components(h, st, timeout):
    """Every component running again (the supervisor restarts them)."""
    end = now() + timeout
    missing = []
    while now() < end:
        missing = [n for n in CONTROLLERS + ("webhook", "prometheus") if not h.pid(n)]
        missing += [c for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
                    if not h.cluster_pid(c)]
        if not missing:
            return []
        time.sleep(0.5)
    return missing


# ---------------------------------------------------------------- RSS

def rss_judgement(samples, started, t0, t1):
    """Per program: median RSS of the first and last third of the run, from
    processes past their first 30 s (a fresh process is still warming up); a
    violation when the last third exceeds the first by more than 25 % AND
    16 MiB (noise: allocator arenas, informer caches that follow the
    changing population)."""
    third = (t1 - t0) / 3
    rows = []
    for name in CONTROLLERS + ("webhook",):
        warm = [(t, kb) for t, n, pid, kb in samples if n == name and t - started[(n, pid)] >= 30]
        first = [kb for t, kb in warm if t < t0 + third]
        last = [kb for t, kb in warm if t >= t1 - third]
        allkb = [kb for t, n, pid, kb in samples if n == name]
        row = {"name": name, "max_kb": max(allkb) if allkb else None,
               "first_kb": statistics.median(first) if first else None,
               "last_kb": statistics.median(last) if last else None,
               "pids": len({pid for t, n, pid, kb in samples if n == name}), "violation": False}
        if row["first_kb"] and row["last_kb"]:
            growth = row["last_kb"] - row["first_kb"]
            row["violation"] = growth > 0.25 * row["first_kb"] and growth > 16 * 1024
        rows.append(row)
    return rows
