"""Constants, the API server, the harness and the state the soak's threads share."""
import http.client
import json
import os
import re
import ssl
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
        self.refusals = {}            # (operation, answer with names elided) -> count, valid operations only

    def rel(self, t=None):
        return (t or now()) - self.t0

    def record_op(self, client, kind, target, status, detail=""):
        outcome = "ok" if 200 <= status < 300 else ("transport-error" if status == 0 else str(status))
        with self.lock:
            self.ops += 1
            self.op_kinds.setdefault(kind, {}).setdefault(outcome, 0)
            self.op_kinds[kind][outcome] += 1
            if not kind.startswith("invalid") and status >= 300 and status != 404:
                k = (kind, re.sub(r'"[^"]*"', '"…"', str(detail))[:220])
                self.refusals[k] = self.refusals.get(k, 0) + 1
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
