"""The soak's judges can fail: each invariant check (invariants.py), fed a case it
must flag and one it must pass. Run before every soak by
test/e2e/cases/85-soak.sh (python3 -m unittest -v test_soak, in test/soak/);
the validate check runs the real `modelservice-webhook validate` when
WEBHOOK_BIN names it.
"""
import copy
import os
import tempfile
import unittest

import common
import invariants


def ms(name, uid, ns="soak-1-1", **spec):
    s = {"model": "m", "replicas": 1, "port": 8080, "strategy": {"type": "RollingUpdate"}}
    s.update(spec)
    return {"metadata": {"namespace": ns, "name": name, "uid": uid, "generation": 2},
            "spec": s,
            "status": {"observedGeneration": 2, "phase": "Ready", "readyReplicas": s["replicas"],
                       "desiredReplicas": s["replicas"]}}


def owned(kind_body, name, owner_uid, ns="soak-1-1", controller=True, labels=True):
    md = {"namespace": ns, "name": name, "uid": f"{name}-{owner_uid}-dep",
          "ownerReferences": [{"kind": "ModelService", "name": name, "uid": owner_uid, "controller": controller}]}
    if labels:
        md["labels"] = {common.MANAGED: "modelservice-controller"}
    o = {"metadata": md}
    o.update(kind_body)
    return o


def deployment(m, image="registry.local/model-server:e2e", replicas=None):
    return owned({"spec": {"replicas": m["status"]["desiredReplicas"] if replicas is None else replicas,
                           "strategy": {"type": "RollingUpdate"},
                           "template": {"spec": {"containers": [{"image": image, "env": []}]}}}},
                 m["metadata"]["name"], m["metadata"]["uid"])


def service(m, port=8080):
    return owned({"spec": {"ports": [{"port": port}]}}, m["metadata"]["name"], m["metadata"]["uid"])


def snap(mss, deps, svcs, hpas=()):
    return {"rv": "1", "ms": list(mss), "deployments": list(deps), "services": list(svcs), "hpas": list(hpas)}


class Ownership(unittest.TestCase):
    def test_clean(self):
        a = ms("a", "u1")
        self.assertEqual(invariants.ownership_violations(snap([a], [deployment(a)], [service(a)])), [])

    def test_orphan_left_behind_two_owners_no_owner(self):
        a, b = ms("a", "u1"), ms("b", "u2-new")
        orphan = deployment(ms("gone", "u9"))
        left = deployment(ms("b", "u2-old"))
        two = service(a)
        two["metadata"]["ownerReferences"].append({"kind": "ReplicaSet", "name": "x", "uid": "x", "controller": True})
        nolabel_owner = service(b)
        nolabel_owner["metadata"]["ownerReferences"] = []
        got = [w for _, w, _ in invariants.ownership_violations(snap([a, b], [orphan, left], [two, nolabel_owner]))]
        self.assertEqual(len(got), 4, got)
        self.assertTrue(any("orphaned" in w and "gone" in w for w in got), got)
        self.assertTrue(any("left behind by a deleted ModelService b" in w for w in got), got)
        self.assertTrue(any("2 controller owners" in w for w in got), got)
        self.assertTrue(any("has no owner" in w for w in got), got)


class Convergence(unittest.TestCase):
    def setUp(self):
        self.st = common.State(1, 10)

    def test_converged(self):
        a = ms("a", "u1", version="3")
        d = deployment(a)
        d["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "MODEL_VERSION", "value": "3"}]
        self.assertEqual(invariants.not_converged(snap([a], [d], [service(a)]), self.st, "registry.local/model-server:e2e"), {})

    def test_each_difference_is_seen(self):
        a = ms("a", "u1")
        cases = {
            "observedGeneration": lambda m, d, s: m["status"].update(observedGeneration=1),
            "phase": lambda m, d, s: m["status"].update(phase="Progressing"),
            "being deleted": lambda m, d, s: m["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z"),
            "Deployment image": lambda m, d, s: d["spec"]["template"]["spec"]["containers"][0].update(image="x"),
            "Deployment replicas": lambda m, d, s: d["spec"].update(replicas=7),
            "Deployment strategy": lambda m, d, s: d["spec"].update(strategy={"type": "Recreate"}),
            "managed-by": lambda m, d, s: d["metadata"].pop("labels"),
            "Service port": lambda m, d, s: s["spec"]["ports"][0].update(port=9000),
            "no Service": lambda m, d, s: s["metadata"].update(ownerReferences=[]),
            "HPA expected": lambda m, d, s: m["spec"].update(autoscaling={"mode": "HPA", "maxReplicas": 2,
                                                                         "targetQueueLength": 5}),
        }
        for want, change in cases.items():
            m, d, s = copy.deepcopy(a), deployment(a), service(a)
            change(m, d, s)
            got = invariants.not_converged(snap([m], [d], [s]), self.st, "registry.local/model-server:e2e")
            self.assertIn(want, got.get("soak-1-1/a", ""), want)

    def test_autoscaled_replicas_follow_the_queue(self):
        a = ms("a", "u1", autoscaling={"mode": "Controller", "minReplicas": 1, "maxReplicas": 3, "targetQueueLength": 5})
        self.st.ms[("soak-1-1", "a")] = {"queue": 10}
        got = invariants.not_converged(snap([a], [deployment(a)], [service(a)]), self.st, "registry.local/model-server:e2e")
        self.assertIn("desiredReplicas 1, expected 2", got["soak-1-1/a"])
        self.assertEqual(invariants.expected_replicas(a, 0), 1)
        self.assertEqual(invariants.expected_replicas(a, 100), 3)


class LeaseRule(unittest.TestCase):
    def audit(self, lease, writes):
        a = invariants.Audit.__new__(invariants.Audit)
        a.lease, a.t_start = lease, 0.0
        a.writes = [(t, u, "update deployments ns/x 200", f"id{i}") for i, (t, u) in enumerate(writes)]
        return a

    def test_holder_writes_pass(self):
        a = self.audit([(100.0, "e2e:controller", True), (102.0, "e2e:controller", True)], [(101.0, "e2e:controller"), (111.5, "e2e:controller")])
        self.assertEqual(a.writes_after_loss(1e12), [])

    def test_after_takeover_after_deadline_after_release(self):
        lease = [(100.0, "e2e:controller", True), (120.0, "e2e:controller-b", True),
                 (130.0, "e2e:controller-b", True), (131.0, "e2e:controller-b", False)]
        a = self.audit(lease, [(112.5, "e2e:controller"), (121.0, "e2e:controller"), (132.0, "e2e:controller-b"),
                               (125.0, "e2e:controller-b")])
        why = [b[4] for b in a.writes_after_loss(1e12)]
        self.assertEqual(len(why), 3, why)
        self.assertIn("deadline", why[0])
        self.assertIn("took the Lease", why[1])
        self.assertIn("released", why[2])

    def test_timestamps(self):
        self.assertAlmostEqual(invariants.Audit.ts("1970-01-01T00:00:10.250000Z"), 10.25)
        self.assertEqual(invariants.Audit.ts("1970-01-02T00:00:00Z"), 86400)


class Rss(unittest.TestCase):
    def test_growth_is_judged_on_warm_processes(self):
        samples = []
        for i in range(60):
            t = 100 + i * 5
            samples.append((t, "controller", 1, 30000 + (i * 1000)))   # +59 MiB over the run
            samples.append((t, "webhook", 2, 15000 + (i % 3) * 100))   # flat
        started = {("controller", 1): 0, ("webhook", 2): 0}
        rows = {r["name"]: r for r in invariants.rss_judgement(samples, started, 100, 400)}
        self.assertTrue(rows["controller"]["violation"])
        self.assertFalse(rows["webhook"]["violation"])


@unittest.skipUnless(os.environ.get("WEBHOOK_BIN"), "WEBHOOK_BIN not set")
class Validate(unittest.TestCase):
    def test_the_real_command_rejects_an_invalid_stored_object(self):
        good = {"apiVersion": "modelops.dev/v1", "kind": "ModelService", "metadata": {"name": "a", "namespace": "n"},
                "spec": {"model": "m"}}
        bad = copy.deepcopy(good)
        bad["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}
        with tempfile.TemporaryDirectory() as d:
            rc, out = invariants.validate_stored(os.environ["WEBHOOK_BIN"], [good], os.path.join(d, "s.yaml"))
            self.assertEqual(rc, 0, out)
            rc, out = invariants.validate_stored(os.environ["WEBHOOK_BIN"], [good, bad], os.path.join(d, "s.yaml"))
            self.assertEqual(rc, 1, out)
            self.assertIn("maxUnavailable", out)


if __name__ == "__main__":
    unittest.main()
