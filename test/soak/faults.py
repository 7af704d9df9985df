"""The fault injector and the supervisor that restarts what exited."""
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

from common import CONTROLLERS, WEBHOOK_CONFIGS, env, now, reason_of

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

    @contextlib.contextmanager
    def holding(self, name):
        """The supervisor leaves NAME alone meanwhile (the fault stops it on purpose)."""
        with self.st.lock:
            self.st.holds.add(name)
        try:
            yield
        finally:
            with self.st.lock:
                self.st.holds.discard(name)

    def paused(self, name, pid, hold):
        """SIGSTOP for HOLD seconds (cut short when the soak ends), then SIGCONT."""
        with self.holding(name):
            os.kill(pid, signal.SIGSTOP)
            try:
                self.hold_for(hold)
            finally:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

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
        self.paused(name, pid, hold)
        time.sleep(1)
        alive = self.h.pid(name) == pid
        return f"SIGSTOP {name} (pid {pid}) for {hold:.1f}s, then SIGCONT; it {'kept running' if alive else 'exited'}"

    def do_restart_apiserver(self, _hold):
        with self.holding("kube-apiserver"):
            rc, out = self.h.cluster("restart-apiserver")
        return f"cluster.sh restart-apiserver: exit {rc}" + ("" if rc == 0 else f": {out[-300:]}")

    def do_restart_etcd(self, _hold):
        with self.holding("etcd"):
            rc, out = self.h.cluster("restart", "etcd")
        return f"cluster.sh restart etcd: exit {rc}" + ("" if rc == 0 else f": {out[-300:]}")

    def do_restart_webhook(self, _hold):
        sig = self.rng.choice(["TERM", "KILL"])
        with self.holding("webhook"):
            rc1, out1 = self.h.lib(f"proc_stop webhook {sig} 10")
            rc2, out2 = self.h.lib("start_webhook", timeout=60)
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
        self.paused("prometheus", pid, hold)
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
