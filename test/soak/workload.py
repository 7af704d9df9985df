"""The clients: random valid specs, the invalid objects, the operations."""
import http.client
import json
import random
import threading

from common import GROUP, MANAGED, now, reason_of

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
            what = f"an invalid {kind.removeprefix('invalid-')} was admitted ({desc})"
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
