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
  - a checker verifies the invariants every ~20 s (see check_* below).
Then the faults stop, every ModelService must converge within 60 s, and the
controllers must then make no write for 30 s (audit log). Last line on
stdout: "soak: N operations, F faults, V violations"; DIR/report.md says
what happened, DIR/ops.jsonl lists every operation. Exit status 0 only
without violations.

Every random choice comes from random.Random seeded with S (one stream per
client, one for the injector), so a seed replays the same sequence of
operations and faults; their interleaving follows the machine's timing.
Standard library only.
"""
import argparse
import bisect
import calendar
import http.client
import json
import math
import os
import random
import signal
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

GROUP = "/apis/modelops.dev/v1"
MANAGED = "app.kubernetes.io/managed-by"
CONTROLLERS = ("controller", "controller-b")
WEBHOOK_CONFIGS = (("validatingwebhookconfigurations", "modelservice-validating"),
                   ("mutatingwebhookconfigurations", "modelservice-mutating"))
LEASE_GRACE_S = 10.0  # renew deadline (design: lease 15 s, renew deadline 10 s)


def env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit(f"soak.py: {name} is not set (run it from test/e2e/cases/85-soak.sh)")
    return v


def now():
    return time.time()


# ---------------------------------------------------------------- the API server

class Api:
    """HTTPS to kube-apiserver as the cluster's admin (one connection per thread)."""

    def __init__(self):
        u = urllib.parse.urlparse(env("E2E_API_SERVER"))
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=env("E2E_CA_CERT"))
        self.ctx.load_cert_chain(env("E2E_ADMIN_CERT"), env("E2E_ADMIN_KEY"))
        self.local = threading.local()

    def req(self, method, path, body=None, ctype="application/json", timeout=20):
        """(status, parsed JSON or text); status 0 on a transport error."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Accept": "application/json", "User-Agent": "modelservice-soak"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in (0, 1):
            conn = getattr(self.local, "conn", None)
            reused = conn is not None
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
                self.local.conn = conn
            try:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                conn.request(method, path, body=data, headers=headers)
                r = conn.getresponse()
                raw = r.read()
                try:
                    return r.status, json.loads(raw) if raw else None
                except ValueError:
                    return r.status, raw.decode(errors="replace")
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                self.local.conn = None
                # A kept-alive connection the server closed meanwhile: the
                # request never reached it; once more on a new connection.
                stale = isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError))
                if not (reused and stale and attempt == 0):
                    return 0, f"{type(e).__name__}: {e}"
        return 0, "unreachable"

    def get(self, path, timeout=20):
        return self.req("GET", path, timeout=timeout)


def reason_of(status, body):
    if status == 0:
        return "transport: " + str(body)[:160]
    if isinstance(body, dict):
        return f"{status} {body.get('reason', '')}: {str(body.get('message', ''))[:200]}"
    return f"{status}: {str(body)[:200]}"


# ---------------------------------------------------------------- the harness

class Harness:
    """The e2e harness's processes and shell helpers (test/e2e/lib.sh)."""

    def __init__(self, log):
        self.work = env("E2E_WORK")
        self.root = env("E2E_ROOT")
        self.cluster_dir = os.path.join(self.work, "cluster")
        self.log = log

    def lib(self, script, timeout=120):
        """Run bash with lib.sh sourced (start_controller, start_webhook, ...)."""
        cmd = ["bash", "-c", 'set -euo pipefail; source "$E2E_ROOT/test/e2e/lib.sh"; ' + script]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            return p.returncode, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {timeout}s: {script}"

    def cluster(self, *args, timeout=180):
        cmd = [os.path.join(self.root, "test/e2e/cluster.sh"), "--dir", self.cluster_dir, *args]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            return p.returncode, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {timeout}s: cluster.sh {' '.join(args)}"

    def pid(self, name):
        """pid of a proc_start'ed process (controller, webhook, prometheus...) if alive."""
        return self._alive_pid(os.path.join(self.work, "proc", name + ".pid"))

    def cluster_pid(self, component):
        return self._alive_pid(os.path.join(self.cluster_dir, component + ".pid"))

    @staticmethod
    def _alive_pid(f):
        try:
            pid = int(open(f).read().strip())
            with open(f"/proc/{pid}/stat") as s:
                state = s.read().rsplit(")", 1)[1].split()[0]
            return None if state == "Z" else pid
        except (OSError, ValueError, IndexError):
            return None

    @staticmethod
    def stopped(pid):
        try:
            with open(f"/proc/{pid}/stat") as s:
                return s.read().rsplit(")", 1)[1].split()[0] == "T"
        except OSError:
            return False

    def log_tail(self, name, n=4):
        try:
            with open(os.path.join(self.work, "logs", name + ".log"), errors="replace") as f:
                return [l.rstrip() for l in f.readlines()[-n:]]
        except OSError:
            return []

    def is_leader(self, name):
        port = os.environ.get("CONTROLLER_METRICS_PORT" if name == "controller" else "CONTROLLER_B_METRICS_PORT")
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=3)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            c.close()
        except (OSError, http.client.HTTPException, ValueError, TypeError):
            return False
        for line in text.splitlines():
            if line.startswith('leader_election_master_status{name="modelservice-controller"}'):
                return line.split()[-1] in ("1", "1.0")
        return False

    def leader(self):
        for n in CONTROLLERS:
            pid = self.pid(n)
            if pid and not self.stopped(pid) and self.is_leader(n):
                return n, pid
        return None, None

    @staticmethod
    def start_time(pid):
        """When the process started (epoch seconds), from /proc."""
        try:
            with open(f"/proc/{pid}/stat") as f:
                ticks = int(f.read().rsplit(")", 1)[1].split()[19])
            with open("/proc/stat") as f:
                btime = next(int(l.split()[1]) for l in f if l.startswith("btime"))
            return btime + ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError, StopIteration):
            return None

    @staticmethod
    def rss_kb(pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None


# ---------------------------------------------------------------- shared state

class State:
    def __init__(self, seed, max_ms):
        self.lock = threading.Lock()
        self.seed = seed
        self.max_ms = max_ms
        self.t0 = now()
        self.stop = threading.Event()
        self.namespaces = []          # active
        self.ns_deleted = {}          # ns -> time of the delete
        self.ns_counter = 0
        self.ms = {}                  # (ns, name) -> {"queue": L or None}
        self.ops = 0
        self.op_kinds = {}            # kind -> {outcome: count}
        self.faults = []              # dicts
        self.violations = []          # dicts {what, evidence}
        self.violation_keys = set()
        self.events = []              # (t, text) for the report
        self.holds = set()            # components a fault holds down on purpose
        self.killed = {}              # name -> pid the injector killed
        self.exits = []               # supervisor's record of exits
        self.ops_file = None

    def rel(self, t=None):
        return (t or now()) - self.t0

    def record_op(self, client, kind, target, status, detail=""):
        outcome = "ok" if 200 <= status < 300 else ("transport-error" if status == 0 else str(status))
        with self.lock:
            self.ops += 1
            self.op_kinds.setdefault(kind, {}).setdefault(outcome, 0)
            self.op_kinds[kind][outcome] += 1
            if self.ops_file:
                self.ops_file.write(json.dumps({"t": round(self.rel(), 3), "client": client, "op": kind,
                                                "target": target, "status": status,
                                                "detail": str(detail)[:300]}) + "\n")

    def violation(self, key, what, evidence):
        with self.lock:
            if key in self.violation_keys:
                return
            self.violation_keys.add(key)
            self.violations.append({"t": round(self.rel(), 1), "what": what, "evidence": evidence})
        print(f"[soak +{self.rel():.1f}s] VIOLATION: {what}\n{evidence}", file=sys.stderr, flush=True)

    def note(self, text):
        with self.lock:
            self.events.append((round(self.rel(), 1), text))
        print(f"[soak +{self.rel():.1f}s] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- specs

MODELS = ["bert-base-uncased", "gpt2", "llama-3-8b", "t5-small", "whisper-tiny"]


def rand_strategy(rng):
    if rng.random() < 0.3:
        return {"type": "Recreate"}
    surge, unavail = rng.choice([("25%", 0), (1, 0), (0, 1), ("50%", "50%"), (2, 1)])
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavail}}


def rand_autoscaling(rng):
    return {"mode": rng.choice(["Controller", "HPA"]), "minReplicas": 1,
            "maxReplicas": rng.randint(2, 3), "targetQueueLength": rng.choice([2, 5, 10])}


def rand_spec(rng):
    spec = {"model": rng.choice(MODELS), "replicas": rng.randint(1, 3)}
    if rng.random() < 0.6:
        spec["version"] = str(rng.randint(1, 9))
    if rng.random() < 0.7:
        spec["image"] = f"registry.local/serve:1.{rng.randint(0, 9)}"
    if rng.random() < 0.5:
        spec["strategy"] = rand_strategy(rng)
    if rng.random() < 0.25:
        spec["autoscaling"] = rand_autoscaling(rng)
        spec["replicas"] = 1
    return spec


def queue_for(rng, autoscaling):
    """A queue length that is a multiple of the target (the HPA's 10 % tolerance never hides a step)."""
    return rng.randint(0, autoscaling["maxReplicas"]) * autoscaling["targetQueueLength"]


# (description, spec): objects the webhook or the schema must refuse.
INVALID_SPECS = [
    ("maxSurge 0 and maxUnavailable 0", {"model": "m", "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}),
    ("Recreate with rollingUpdate", {"model": "m", "strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}),
    ("minReplicas > maxReplicas", {"model": "m", "autoscaling": {"minReplicas": 3, "maxReplicas": 2, "targetQueueLength": 5}}),
    ("replicas 0", {"model": "m", "replicas": 0}),
    ("model with whitespace", {"model": "bad model"}),
    ("no model", {"replicas": 1}),
    ("port 70000", {"model": "m", "port": 70000}),
    ("strategy type Rolling", {"model": "m", "strategy": {"type": "Rolling"}}),
    ("gpus 17", {"model": "m", "gpus": 17}),
]
INVALID_PATCHES = [
    ("maxSurge 0 and maxUnavailable 0", {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}}),
    ("replicas 101", {"spec": {"replicas": 101}}),
    ("minReplicas > maxReplicas", {"spec": {"autoscaling": {"minReplicas": 4, "maxReplicas": 2, "targetQueueLength": 5}}}),
    ("empty model", {"spec": {"model": ""}}),
]


def ms_object(name, spec):
    return {"apiVersion": "modelops.dev/v1", "kind": "ModelService", "metadata": {"name": name}, "spec": spec}


# ---------------------------------------------------------------- clients

class Client(threading.Thread):
    def __init__(self, idx, st, api, exporter_port, ns_client):
        super().__init__(name=f"client-{idx}", daemon=True)
        self.idx, self.st, self.api = idx, st, api
        self.rng = random.Random(f"{st.seed}:client:{idx}")
        self.exporter_port = exporter_port
        self.ns_client = ns_client
        self.counter = 0

    def run(self):
        ops = [("create", 18), ("version", 10), ("image", 8), ("scale", 10), ("strategy", 6),
               ("autoscaling", 6), ("queue", 4), ("delete", 7), ("invalid-create", 5), ("invalid-update", 3),
               ("invalid-scale", 2), ("edit-deployment", 8), ("edit-service", 5)]
        if self.ns_client:
            ops.append(("delete-namespace", 2))
        kinds = [k for k, _ in ops]
        weights = [w for _, w in ops]
        while not self.st.stop.is_set():
            kind = self.rng.choices(kinds, weights)[0]
            try:
                getattr(self, "op_" + kind.replace("-", "_"))()
            except Exception as e:  # a bug in the soak itself: say so, keep going
                self.st.note(f"client-{self.idx}: {kind} raised {type(e).__name__}: {e}")
            self.st.stop.wait(self.rng.uniform(0.2, 1.6))

    # helpers
    def pick_ns(self):
        with self.st.lock:
            return self.rng.choice(self.st.namespaces) if self.st.namespaces else None

    def pick_ms(self):
        with self.st.lock:
            keys = sorted(k for k in self.st.ms if k[0] in self.st.namespaces)
            return self.rng.choice(keys) if keys else None

    def set_queue(self, ns, name, value):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.exporter_port, timeout=5)
            c.request("POST", f"/set?namespace={ns}&modelservice={name}&value={value}")
            c.getresponse().read()
            c.close()
        except (OSError, http.client.HTTPException):
            return False
        with self.st.lock:
            if (ns, name) in self.st.ms:
                self.st.ms[(ns, name)]["queue"] = value
        return True

    def patch_ms(self, kind, key, patch):
        ns, name = key
        s, b = self.api.req("PATCH", f"{GROUP}/namespaces/{ns}/modelservices/{name}", patch,
                            "application/merge-patch+json")
        self.st.record_op(self.idx, kind, f"{ns}/{name}", s, "" if 200 <= s < 300 else reason_of(s, b))
        return s, b

    # operations
    def op_create(self):
        with self.st.lock:
            full = len(self.st.ms) >= self.st.max_ms
        if full:
            return self.op_delete()
        ns = self.pick_ns()
        if not ns:
            return
        self.counter += 1
        name = f"s{self.idx}-{self.counter}"
        spec = rand_spec(self.rng)
        queue = None
        if "autoscaling" in spec:
            queue = queue_for(self.rng, spec["autoscaling"])
            self.set_queue(ns, name, queue)
        with self.st.lock:
            self.st.ms[(ns, name)] = {"queue": queue}
        s, b = self.api.req("POST", f"{GROUP}/namespaces/{ns}/modelservices", ms_object(name, spec))
        if s >= 300 and s != 409:  # refused: not stored (a transport error may have stored it)
            with self.st.lock:
                self.st.ms.pop((ns, name), None)
        self.st.record_op(self.idx, "create", f"{ns}/{name}", s, "" if 200 <= s < 300 else reason_of(s, b))

    def op_version(self):
        key = self.pick_ms()
        if key:
            self.patch_ms("version", key, {"spec": {"version": str(self.rng.randint(1, 9))}})

    def op_image(self):
        key = self.pick_ms()
        if key:
            self.patch_ms("image", key, {"spec": {"image": f"registry.local/serve:1.{self.rng.randint(0, 9)}"}})

    def op_strategy(self):
        key = self.pick_ms()
        if not key:
            return
        strat = rand_strategy(self.rng)
        if strat["type"] == "Recreate":
            strat["rollingUpdate"] = None
        self.patch_ms("strategy", key, {"spec": {"strategy": strat}})

    def op_autoscaling(self):
        key = self.pick_ms()
        if not key:
            return
        if self.rng.random() < 0.35:
            self.patch_ms("autoscaling", key, {"spec": {"autoscaling": None}})
            return
        a = rand_autoscaling(self.rng)
        self.set_queue(*key, queue_for(self.rng, a))
        self.patch_ms("autoscaling", key, {"spec": {"autoscaling": a}})

    def op_queue(self):
        key = self.pick_ms()
        if not key:
            return
        s, b = self.api.get(f"{GROUP}/namespaces/{key[0]}/modelservices/{key[1]}")
        a = b.get("spec", {}).get("autoscaling") if s == 200 and isinstance(b, dict) else None
        if not a:
            return
        v = queue_for(self.rng, a)
        ok = self.set_queue(*key, v)
        self.st.record_op(self.idx, "queue", f"{key[0]}/{key[1]}", 200 if ok else 0, f"L={v}")

    def op_scale(self):
        key = self.pick_ms()
        if not key:
            return
        ns, name = key
        path = f"{GROUP}/namespaces/{ns}/modelservices/{name}/scale"
        s, b = self.api.get(path)
        if s != 200:
            self.st.record_op(self.idx, "scale", f"{ns}/{name}", s, reason_of(s, b))
            return
        s2, b2 = self.api.get(f"{GROUP}/namespaces/{ns}/modelservices/{name}")
        a = b2.get("spec", {}).get("autoscaling") if s2 == 200 and isinstance(b2, dict) else None
        hi = a["maxReplicas"] if a else 3
        lo = a.get("minReplicas", 1) if a else 1
        r = self.rng.randint(lo, hi)
        s, b = self.api.req("PATCH", path, {"spec": {"replicas": r}}, "application/merge-patch+json")
        self.st.record_op(self.idx, "scale", f"{ns}/{name}", s, f"replicas={r}" if 200 <= s < 300 else reason_of(s, b))

    def op_delete(self):
        key = self.pick_ms()
        if not key:
            return
        ns, name = key
        policy = self.rng.choice(["Background", "Foreground"])
        s, b = self.api.req("DELETE", f"{GROUP}/namespaces/{ns}/modelservices/{name}",
                            {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy})
        if 200 <= s < 300 or s == 404:
            with self.st.lock:
                self.st.ms.pop(key, None)
        self.st.record_op(self.idx, "delete", f"{ns}/{name}", s, policy if 200 <= s < 300 else reason_of(s, b))

    def refused(self, kind, target, desc, s, b, cleanup_path=None):
        if 200 <= s < 300:
            what = f"an invalid {kind} was admitted ({desc})"
            ev = f"{target}: HTTP {s}: {b[:600] if isinstance(b, str) else ''}"
            if isinstance(b, dict):
                md = b.get("metadata", {})
                if md.get("deletionTimestamp"):
                    what += " on a ModelService being deleted"
                ev += json.dumps({"kind": b.get("kind"), "metadata": {k: md.get(k) for k in (
                    "name", "uid", "generation", "deletionTimestamp", "finalizers")}, "spec": b.get("spec")})
            self.st.violation(f"admitted:{kind}:{target}:{desc}", what, ev)
            if cleanup_path:
                self.api.req("DELETE", cleanup_path)
        self.st.record_op(self.idx, kind, target, s, f"{desc}: {reason_of(s, b)}")

    def op_invalid_create(self):
        ns = self.pick_ns()
        if not ns:
            return
        desc, spec = self.rng.choice(INVALID_SPECS)
        self.counter += 1
        name = f"bad{self.idx}-{self.counter}"
        s, b = self.api.req("POST", f"{GROUP}/namespaces/{ns}/modelservices", ms_object(name, spec))
        self.refused("invalid-create", f"{ns}/{name}", desc, s, b, f"{GROUP}/namespaces/{ns}/modelservices/{name}")

    def op_invalid_update(self):
        key = self.pick_ms()
        if not key:
            return
        desc, patch = self.rng.choice(INVALID_PATCHES)
        s, b = self.api.req("PATCH", f"{GROUP}/namespaces/{key[0]}/modelservices/{key[1]}", patch,
                            "application/merge-patch+json")
        if s == 404:
            self.st.record_op(self.idx, "invalid-update", f"{key[0]}/{key[1]}", s, "gone")
            return
        self.refused("invalid-update", f"{key[0]}/{key[1]}", desc, s, b)

    def op_invalid_scale(self):
        key = self.pick_ms()
        if not key:
            return
        r = self.rng.choice([0, 101, -1])
        s, b = self.api.req("PATCH", f"{GROUP}/namespaces/{key[0]}/modelservices/{key[1]}/scale",
                            {"spec": {"replicas": r}}, "application/merge-patch+json")
        if s == 404:
            self.st.record_op(self.idx, "invalid-scale", f"{key[0]}/{key[1]}", s, "gone")
            return
        self.refused("invalid-scale", f"{key[0]}/{key[1]}", f"scale to {r}", s, b)

    def op_edit_deployment(self):
        key = self.pick_ms()
        if not key:
            return
        ns, name = key
        path = f"/apis/apps/v1/namespaces/{ns}/deployments/{name}"
        how = self.rng.choice(["scale", "image", "unlabel", "delete"])
        if how == "delete":
            s, b = self.api.req("DELETE", path)
        elif how == "scale":
            s, b = self.api.req("PATCH", path, {"spec": {"replicas": self.rng.randint(1, 7)}},
                                "application/merge-patch+json")
        elif how == "image":
            s, b = self.api.req("PATCH", path, [{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                                                 "value": "registry.local/hand-edited:0"}], "application/json-patch+json")
        else:
            s, b = self.api.req("PATCH", path, [{"op": "remove", "path": "/metadata/labels/" + MANAGED.replace("/", "~1")}],
                                "application/json-patch+json")
        self.st.record_op(self.idx, "edit-deployment", f"{ns}/{name}", s, how if 200 <= s < 300 else f"{how}: {reason_of(s, b)}")

    def op_edit_service(self):
        key = self.pick_ms()
        if not key:
            return
        ns, name = key
        path = f"/api/v1/namespaces/{ns}/services/{name}"
        if self.rng.random() < 0.5:
            how = "delete"
            s, b = self.api.req("DELETE", path)
        else:
            how = "port"
            s, b = self.api.req("PATCH", path, [{"op": "replace", "path": "/spec/ports/0/port",
                                                 "value": self.rng.randint(9000, 9999)}], "application/json-patch+json")
        self.st.record_op(self.idx, "edit-service", f"{ns}/{name}", s, how if 200 <= s < 300 else f"{how}: {reason_of(s, b)}")

    def op_delete_namespace(self):
        with self.st.lock:
            if len(self.st.namespaces) < 2:
                return
            ns = self.rng.choice(self.st.namespaces)
        s, b = self.api.req("DELETE", f"/api/v1/namespaces/{ns}")
        if 200 <= s < 300 or s == 404:
            with self.st.lock:
                self.st.namespaces.remove(ns)
                self.st.ns_deleted[ns] = now()
                for k in [k for k in self.st.ms if k[0] == ns]:
                    del self.st.ms[k]
        self.st.record_op(self.idx, "delete-namespace", ns, s, "" if 200 <= s < 300 else reason_of(s, b))
        new_namespace(self.st, self.api, self.idx)


def new_namespace(st, api, client):
    with st.lock:
        st.ns_counter += 1
        ns = f"soak-{st.seed}-{st.ns_counter}"
    for _ in range(30):
        s, b = api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns, "labels": {"modelops.dev/soak": "true"}}})
        st.record_op(client, "create-namespace", ns, s, "" if 200 <= s < 300 else reason_of(s, b))
        if 200 <= s < 300 or s == 409:
            with st.lock:
                st.namespaces.append(ns)
            return ns
        if st.stop.wait(1.0):
            return None
    return None


# ---------------------------------------------------------------- faults

class Injector(threading.Thread):
    KINDS = ["kill-leader", "pause-leader", "restart-apiserver", "restart-etcd", "restart-webhook",
             "blank-cabundle", "rotate-cert", "stop-prometheus"]

    def __init__(self, st, api, h, gap, out):
        super().__init__(name="injector", daemon=True)
        self.st, self.api, self.h = st, api, h
        self.rng = random.Random(f"{st.seed}:injector")
        self.gap = gap
        self.bundles = {}
        for res, name in WEBHOOK_CONFIGS:
            s, b = api.get(f"/apis/admissionregistration.k8s.io/v1/{res}/{name}")
            if s != 200:
                sys.exit(f"soak.py: cannot read {res}/{name}: {reason_of(s, b)}")
            self.bundles[(res, name)] = [w["clientConfig"].get("caBundle", "") for w in b["webhooks"]]
        # For --restore, should the soak die in the middle of a fault.
        with open(os.path.join(out, "cabundles.json"), "w") as f:
            json.dump([[res, name, bundles] for (res, name), bundles in self.bundles.items()], f)

    def run(self):
        deck = []
        while not self.st.stop.wait(self.rng.uniform(*self.gap)):
            if not deck:  # every kind once per round, in a random order
                deck = list(self.KINDS)
                self.rng.shuffle(deck)
            kind = deck.pop()
            hold = self.rng.uniform(3, 25)
            f = {"t": round(self.st.rel(), 1), "kind": kind, "detail": ""}
            t = now()
            try:
                f["detail"] = getattr(self, "do_" + kind.replace("-", "_"))(hold)
            except Exception as e:
                f["detail"] = f"soak error: {type(e).__name__}: {e}"
            f["seconds"] = round(now() - t, 1)
            with self.st.lock:
                self.st.faults.append(f)
            self.st.note(f"fault {kind}: {f['detail']} ({f['seconds']}s)")

    def hold_for(self, seconds):
        """Wait out a fault's duration; cut short when the soak ends."""
        self.st.stop.wait(seconds)

    def wait_leader(self, timeout=40):
        end = now() + timeout
        while now() < end:
            name, pid = self.h.leader()
            if name:
                return name, pid
            time.sleep(0.5)
        return None, None

    def do_kill_leader(self, _hold):
        name, pid = self.wait_leader()
        if not name:
            return "skipped: no leader for 40 s"
        with self.st.lock:
            self.st.killed[name] = pid
        os.kill(pid, signal.SIGKILL)
        t = now()
        other = [n for n in CONTROLLERS if n != name][0]
        end = t + 45
        while now() < end and not self.h.is_leader(other) and not (self.h.pid(name) and self.h.is_leader(name)):
            time.sleep(0.5)
        who = other if self.h.is_leader(other) else (name if self.h.is_leader(name) else "nobody")
        return f"kill -9 {name} (pid {pid}); leader after {now() - t:.1f}s: {who}"

    def do_pause_leader(self, hold):
        name, pid = self.wait_leader()
        if not name:
            return "skipped: no leader for 40 s"
        with self.st.lock:
            self.st.holds.add(name)
        try:
            os.kill(pid, signal.SIGSTOP)
            self.hold_for(hold)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            with self.st.lock:
                self.st.holds.discard(name)
        time.sleep(1)
        alive = self.h.pid(name) == pid
        return f"SIGSTOP {name} (pid {pid}) for {hold:.1f}s, then SIGCONT; it {'kept running' if alive else 'exited'}"

    def do_restart_apiserver(self, _hold):
        with self.st.lock:
            self.st.holds.add("kube-apiserver")
        try:
            rc, out = self.h.cluster("restart-apiserver")
        finally:
            with self.st.lock:
                self.st.holds.discard("kube-apiserver")
        return f"cluster.sh restart-apiserver: exit {rc}" + ("" if rc == 0 else f": {out[-300:]}")

    def do_restart_etcd(self, _hold):
        with self.st.lock:
            self.st.holds.add("etcd")
        try:
            rc, out = self.h.cluster("restart", "etcd")
        finally:
            with self.st.lock:
                self.st.holds.discard("etcd")
        return f"cluster.sh restart etcd: exit {rc}" + ("" if rc == 0 else f": {out[-300:]}")

    def do_restart_webhook(self, _hold):
        sig = self.rng.choice(["TERM", "KILL"])
        with self.st.lock:
            self.st.holds.add("webhook")
        try:
            rc1, out1 = self.h.lib(f"proc_stop webhook {sig} 10")
            rc2, out2 = self.h.lib("start_webhook", timeout=60)
        finally:
            with self.st.lock:
                self.st.holds.discard("webhook")
        return f"webhook stopped with SIG{sig} and started again: exit {rc1}/{rc2}" + ("" if rc2 == 0 else f": {out2[-300:]}")

    def patch_bundles(self, blank):
        codes = []
        for (res, name), bundles in self.bundles.items():
            ops = [{"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": "" if blank else b}
                   for i, b in enumerate(bundles)]
            for _ in range(60):
                s, body = self.api.req("PATCH", f"/apis/admissionregistration.k8s.io/v1/{res}/{name}", ops,
                                       "application/json-patch+json")
                if 200 <= s < 300 or blank:
                    break
                time.sleep(1)  # restoring must not give up while the API server is briefly away
            codes.append(s)
        return codes

    def do_blank_cabundle(self, hold):
        codes = self.patch_bundles(True)
        self.hold_for(hold)
        back = self.patch_bundles(False)
        return f"caBundle of both configurations blanked (HTTP {codes}) for {hold:.1f}s, restored by the injector (HTTP {back})"

    def do_rotate_cert(self, _hold):
        cmd = [os.path.join(self.h.root, "certs-scripts/gen-certs.sh"), "--out", env("CERT_DIR"),
               "--ip", "127.0.0.1", "--dns", "localhost", "--reuse-ca"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return f"gen-certs.sh --reuse-ca: exit {p.returncode}" + ("" if p.returncode == 0 else f": {p.stderr[-300:]}")

    def do_stop_prometheus(self, hold):
        pid = self.h.pid("prometheus")
        if not pid:
            return "skipped: prometheus not running"
        with self.st.lock:
            self.st.holds.add("prometheus")
        try:
            os.kill(pid, signal.SIGSTOP)
            self.hold_for(hold)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            with self.st.lock:
                self.st.holds.discard("prometheus")
        return f"SIGSTOP prometheus (pid {pid}) for {hold:.1f}s, then SIGCONT"


# ---------------------------------------------------------------- supervisor

class Supervisor(threading.Thread):
    """Restarts what exited, as a kubelet would; records why it exited."""

    def __init__(self, st, h):
        super().__init__(name="supervisor", daemon=True)
        self.st, self.h = st, h
        self.rng = random.Random(f"{st.seed}:supervisor")
        self.known = {}   # name -> pid last seen
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.once()
            self.done.wait(1.0)

    def once(self):
        for name in CONTROLLERS + ("webhook", "prometheus"):
            with self.st.lock:
                held = name in self.st.holds
            pid = self.h.pid(name)
            if pid:
                self.known[name] = pid
                continue
            if held:
                continue
            self.exited(name)
            if name in CONTROLLERS:
                self.done.wait(self.rng.uniform(1, 4))
                rc, out = self.h.lib(f"start_controller {name}", timeout=60)
            elif name == "webhook":
                rc, out = self.h.lib("start_webhook", timeout=60)
            else:
                rc, out = self.h.lib("start_prometheus", timeout=90)
            self.st.note(f"supervisor: started {name} again (exit {rc})" + ("" if rc == 0 else f": {out[-300:]}"))
            self.known[name] = self.h.pid(name)
        with self.st.lock:
            held = {"kube-apiserver", "etcd"} & self.st.holds
        if held:
            return
        down = [c for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
                if not self.h.cluster_pid(c)]
        if down:
            self.st.violation(f"cluster-died:{','.join(down)}:{int(self.st.rel())}",
                              f"cluster component(s) {', '.join(down)} died without the injector stopping them",
                              "cluster.sh heal restarts them")
            rc, out = self.h.cluster("heal")
            self.st.note(f"supervisor: cluster.sh heal: exit {rc}")

    def exited(self, name):
        pid = self.known.get(name)
        tail = self.h.log_tail(name, 3)
        with self.st.lock:
            killed = self.st.killed.pop(name, None)
        if pid is None:
            return
        clean = any("stopped (exit code" in l for l in tail)
        why = "killed by the injector (kill -9)" if killed == pid else ("exited: " + tail[-1][-160:] if clean else "died")
        with self.st.lock:
            self.st.exits.append((round(self.st.rel(), 1), name, pid, why))
        if killed != pid and not clean and name != "prometheus":
            self.st.violation(f"died:{name}:{pid}", f"{name} (pid {pid}) died without the injector killing it",
                              "last log lines:\n" + "\n".join(tail))


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


# ---------------------------------------------------------------- report

def mib(kb):
    return "-" if kb is None else f"{kb / 1024:.1f}"


def write_report(path, args, st, chk, timings, rss_rows, quiet, nc_final):
    L = []
    L.append("# Chaos soak report\n")
    L.append(f"- seed: `{args.seed}`, minutes: {args.minutes}, clients: {args.clients}, ModelServices at most: {args.max_ms}")
    L.append(f"- replay: `test/soak/run.sh --minutes {args.minutes:g} --seed {args.seed}`")
    L.append(f"- controller: `{subprocess.run([env('CONTROLLER_BIN'), '--version'], capture_output=True, text=True).stdout.strip()}`")
    L.append(f"- result: **soak: {st.ops} operations, {len(st.faults)} faults, {len(st.violations)} violations**\n")
    L.append("## Timings\n")
    for k, v in timings:
        L.append(f"- {k}: {v}")
    L.append("\n## Operations\n")
    L.append("| operation | outcomes |")
    L.append("|---|---|")
    for kind in sorted(st.op_kinds):
        L.append(f"| {kind} | " + ", ".join(f"{o} x{n}" for o, n in sorted(st.op_kinds[kind].items())) + " |")
    L.append("\nInvalid objects count as refused with any non-2xx answer (422 from the webhook or the schema, "
             "or 500 while the webhook was unreachable: failurePolicy Fail); an admitted one is a violation.\n")
    L.append("## Faults\n")
    L.append("| at (s) | fault | took (s) | what happened |")
    L.append("|---|---|---|---|")
    for f in st.faults:
        L.append(f"| {f['t']} | {f['kind']} | {f['seconds']} | {f['detail']} |")
    L.append("\n## Exits the supervisor saw (and restarted)\n")
    for t, name, pid, why in st.exits:
        L.append(f"- +{t}s {name} (pid {pid}): {why}")
    if not st.exits:
        L.append("- none")
    L.append("\n## Invariants\n")
    L.append(f"- checks while running and at the end: {chk.rounds} rounds, {chk.snapshots} consistent snapshots "
             f"(ModelServices, Deployments, Services, HPAs listed at one resourceVersion), "
             f"{chk.validated} stored ModelServices validated with `modelservice-webhook validate`")
    L.append(f"- audit log: {len(chk.audit.writes)} controller writes and {len(chk.audit.lease)} successful Lease writes read; "
             "each write must come from the Lease's holder, before its renewal + 10 s")
    L.append(f"- convergence after the faults stopped: {timings_dict(timings).get('convergence', '-')}")
    L.append(f"- controller writes during the 30 s quiet period: {quiet}")
    L.append("\n| program | processes | max RSS MiB | first third MiB | last third MiB | growth ok |")
    L.append("|---|---|---|---|---|---|")
    for r in rss_rows:
        L.append(f"| {r['name']} | {r['pids']} | {mib(r['max_kb'])} | {mib(r['first_kb'])} | {mib(r['last_kb'])} | "
                 f"{'NO' if r['violation'] else 'yes'} |")
    L.append("\nRSS (VmRSS from /proc, every 5 s): the median of the first third of the run against the median of the "
             "last third, counting only processes past their first 30 s; growth beyond 25 % and 16 MiB is a violation. "
             "'-' means no process of that program lived through the whole third (the faults restarted it).\n")
    L.append("## Violations\n")
    if not st.violations:
        L.append("None.")
    for v in st.violations:
        L.append(f"- +{v['t']}s **{v['what']}**\n\n```\n{v['evidence']}\n```")
    if nc_final:
        L.append("\n### ModelServices not converged\n")
        for k, why in sorted(nc_final.items()):
            L.append(f"- {k}: {why}")
    L.append("\n## Timeline\n")
    for t, text in st.events:
        L.append(f"- +{t}s {text}")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def timings_dict(timings):
    return dict(timings)


# ---------------------------------------------------------------- main

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


def main():
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
    if args.restore:
        return restore(args.out)
    if args.minutes is None or args.seed is None:
        ap.error("--minutes and --seed are required")
    os.makedirs(args.out, exist_ok=True)
    st = State(args.seed, args.max_ms)
    st.ops_file = open(os.path.join(args.out, "ops.jsonl"), "w", buffering=1)
    api = Api()
    h = Harness(st)
    audit = Audit(env("E2E_AUDIT_LOG"))
    timings = []
    st.note(f"soak: seed {args.seed}, {args.minutes:g} minutes, {args.clients} clients")

    for _ in range(args.namespaces):
        if not new_namespace(st, api, "setup"):
            sys.exit("soak.py: cannot create the namespaces")
    gap = tuple(float(x) for x in args.fault_gap.split(","))
    injector = Injector(st, api, h, gap, args.out)
    supervisor = Supervisor(st, h)
    checker = Checker(st, api, h, audit, args.out)
    clients = [Client(i, st, api, int(env("EXPORTER_PORT")), ns_client=(i == 0)) for i in range(args.clients)]
    supervisor.start()
    checker.start()
    for c in clients:
        c.start()
    injector.start()

    t_run = now()
    st.stop.wait(args.minutes * 60)
    st.stop.set()
    st.note("time is up: clients and faults stop")
    for c in clients:
        c.join(60)
    injector.join(120)
    t_end = now()
    timings.append(("chaos phase", f"{t_end - t_run:.0f} s"))
    missing = wait_components(h, st, 120)
    t_up = now()
    timings.append(("components running again", f"{t_up - t_end:.1f} s after the faults stopped"))
    if missing:
        st.violation("not-back", "components not running 120 s after the faults stopped", ", ".join(missing))
    supervisor.done.set()
    supervisor.join(90)
    checker.done.set()
    checker.join(90)

    # Convergence: within 60 s of the faults' end (and everything running).
    deadline = t_up + 60
    nc = {"?": "no snapshot"}
    terminating = []
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
    t_conv = now()
    conv = f"{t_conv - t_up:.1f} s" + (f" (then {len(nc)} not converged)" if nc else "")
    timings.append(("convergence", conv))
    st.note(f"convergence: {conv}")
    if nc:
        st.violation("converge", f"{len(nc)} ModelService(s) not converged 60 s after the faults stopped",
                     "\n".join(f"{k}: {v}" for k, v in sorted(nc.items())[:40]))
    if terminating:
        st.violation("ns-stuck", "namespaces still there 60 s after the faults stopped", ", ".join(terminating))

    # Quiet: zero controller writes for 30 s (after 3 s for in-flight work).
    time.sleep(3)
    audit.read()
    mark = now()
    time.sleep(30)
    time.sleep(1)
    audit.read()
    quiet_writes = [(t, u, w) for t, u, w, _ in audit.writes if t >= mark]
    quiet = f"{len(quiet_writes)}"
    if quiet_writes:
        st.violation("quiet", f"{len(quiet_writes)} controller writes during the 30 s quiet period after convergence",
                     "\n".join(f"{u} {w}" for t, u, w in quiet_writes[:40]))
    timings.append(("quiet period", "30 s"))

    checker.check(final=True)
    checker.sample_rss()
    rss_rows = rss_judgement(checker.rss, checker.started, t_run, t_end)
    for r in rss_rows:
        if r["violation"]:
            st.violation(f"rss:{r['name']}", f"RSS of {r['name']} grew from {mib(r['first_kb'])} MiB to {mib(r['last_kb'])} MiB",
                         "median of the first third vs the last third of the run (processes past 30 s)")
    timings.append(("total", f"{now() - st.t0:.0f} s"))
    report = os.path.join(args.out, "report.md")
    write_report(report, args, st, checker, timings, rss_rows, quiet, nc)
    st.ops_file.close()
    print(f"soak: {st.ops} operations, {len(st.faults)} faults, {len(st.violations)} violations")
    return 1 if st.violations else 0


if __name__ == "__main__":
    sys.exit(main())
