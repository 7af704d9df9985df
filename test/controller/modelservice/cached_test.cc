#include "controller/modelservice/cached.h"

#include <gtest/gtest.h>

#include "controller/modelservice/plan.h"
#include "controller/runtime/projection.h"

namespace ms::modelservice {
namespace {

using runtime::Project;

using nlohmann::json;

TEST(Projection, KeepsOnlyMaskedPaths) {
  const json v = json::parse(R"({"a": 1, "b": {"c": 2, "d": 3}, "l": [{"x": 1, "y": 2}, {"x": 3}], "s": "str"})");
  EXPECT_EQ(Project(v, json::parse(R"({"b": {"c": true}, "l": {"x": true}, "s": {"z": true}, "nope": true})")),
            json::parse(R"({"b": {"c": 2}, "l": [{"x": 1}, {"x": 3}], "s": "str"})"));
  EXPECT_EQ(Project(v, true), v);
}

// A Deployment as the API server sends it in a watch event.
json WatchedDeployment() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "bert", "namespace": "ml", "uid": "d1", "resourceVersion": "9", "generation": 2,
      "creationTimestamp": "2023-11-14T22:13:20Z",
      "annotations": {"deployment.kubernetes.io/revision": "1", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice", "team": "search"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "blockOwnerDeletion": true, "controller": true,
                           "kind": "ModelService", "name": "bert", "uid": "uid-1"}],
      "managedFields": [{"manager": "modelservice-controller", "operation": "Update", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"replicas": 2, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
      "selector": {"matchLabels": {"app.kubernetes.io/instance": "bert"}},
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
      "template": {"metadata": {"labels": {"app.kubernetes.io/instance": "bert", "pod-template-hash": "x"}},
        "spec": {"containers": [{"name": "model", "image": "m:1", "imagePullPolicy": "IfNotPresent",
                                 "env": [{"name": "MODEL_NAME", "value": "bert"}],
                                 "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                                 "terminationMessagePath": "/dev/termination-log"}],
                 "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler"}}},
    "status": {"observedGeneration": 2, "replicas": 2, "readyReplicas": 1, "updatedReplicas": 2,
               "availableReplicas": 1, "collisionCount": 0,
               "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                               "message": "m", "lastUpdateTime": "t", "lastTransitionTime": "t"}]}
  })");
}

TEST(CachedObjects, DeploymentKeepsWhatTheReconcilerReadsOnly) {
  const json full = WatchedDeployment();
  const json c = CachedDeployment(full);
  EXPECT_FALSE(c["metadata"].contains("managedFields"));
  EXPECT_EQ(c["metadata"]["annotations"], json::object());  // only modelops.dev/pod-template-keys is kept
  EXPECT_FALSE(c["metadata"]["labels"].contains("team"));
  EXPECT_EQ(c["metadata"]["labels"].size(), 3u);
  EXPECT_EQ(c["metadata"]["ownerReferences"], full["metadata"]["ownerReferences"]);
  EXPECT_EQ(c["metadata"]["resourceVersion"], "9");
  EXPECT_FALSE(c["spec"].contains("selector"));
  EXPECT_EQ(c["spec"]["progressDeadlineSeconds"], 600);  // spec.rollout.timeoutSeconds
  EXPECT_FALSE(c["spec"]["template"]["spec"].contains("dnsPolicy"));
  EXPECT_FALSE(c["spec"]["template"]["spec"]["containers"][0].contains("imagePullPolicy"));
  EXPECT_EQ(c["spec"]["template"]["spec"]["containers"][0]["image"], "m:1");
  EXPECT_FALSE(c["status"].contains("collisionCount"));
  EXPECT_FALSE(c["status"]["conditions"][0].contains("lastUpdateTime"));
  // Well under the whole object's size, even for this one whose managedFields
  // are one line (a real Deployment's are kilobytes).
  EXPECT_LT(json::to_msgpack(c).size() * 100, full.dump().size() * 55) << c.dump();
}

// A Deployment with every pod field, as written: its cached form has no
// drift either (else every pass would read it through the API).
TEST(CachedObjects, PodFieldsAreCached) {
  const ResolvedSpec spec = ResolveSpec(json::parse(R"({"metadata": {"name": "llm", "namespace": "ml", "uid": "u"},
    "spec": {"model": "m", "gpus": 1, "resources": {"limits": {"memory": "1Gi"}}, "env": [{"name": "A", "value": "1"}],
             "args": ["-v"], "nodeSelector": {"pool": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}],
             "imagePullSecrets": [{"name": "r"}], "serviceAccountName": "sa", "priorityClassName": "high",
             "podLabels": {"team": "t"}, "podAnnotations": {"a": "b"}}})"),
                                        Options{});
  json written = DesiredDeployment(spec, 1);
  written["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "1";
  json cached = CachedDeployment(written);
  EXPECT_EQ(RepairDeployment(spec, 1, cached), Drift{});
  EXPECT_FALSE(cached["metadata"]["annotations"].contains("deployment.kubernetes.io/revision"));
}

TEST(CachedObjects, ThePlanIsTheSameOnCachedAndFullObjects) {
  // The reconciler's decision (what drifted, the status) must not depend on
  // the fields the cache drops.
  json ms = json::parse(R"({"apiVersion": "modelops.dev/v1", "kind": "ModelService",
    "metadata": {"name": "bert", "namespace": "ml", "uid": "uid-1", "resourceVersion": "5", "generation": 1,
                 "finalizers": ["modelops.dev/cleanup"], "managedFields": [{"manager": "kubectl"}],
                 "annotations": {"a": "b"}},
    "spec": {"model": "bert", "image": "m:1", "replicas": 3, "port": 8080}})");
  json svc = json::parse(R"({"apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "bert", "namespace": "ml", "uid": "s1", "resourceVersion": "8",
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "controller": true, "kind": "ModelService",
                           "name": "bert", "uid": "uid-1"}]},
    "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.1", "sessionAffinity": "None",
             "selector": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/name": "modelservice"},
             "ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]}})");
  const auto now = std::chrono::system_clock::from_time_t(1700000000);
  const Actions full = Plan(ms, Observed{WatchedDeployment(), svc, std::nullopt, std::nullopt}, Options{}, now);
  const Actions cached = Plan(
      CachedModelService(ms),
      Observed{CachedDeployment(WatchedDeployment()), CachedService(svc), std::nullopt, std::nullopt}, Options{}, now);
  ASSERT_EQ(full.writes.size(), cached.writes.size());
  for (size_t i = 0; i < full.writes.size(); ++i) {
    EXPECT_EQ(full.writes[i].type, cached.writes[i].type);
    EXPECT_EQ(full.writes[i].target, cached.writes[i].target);
  }
  // The Deployment (replicas 2 -> 3, template labels) and the Service (its
  // ownerReference lacks blockOwnerDeletion).
  EXPECT_EQ(full.writes.size(), 2u);
  EXPECT_EQ(full.status, cached.status);
  EXPECT_EQ(full.events, cached.events);
  EXPECT_FALSE(CachedModelService(ms)["metadata"].contains("managedFields"));
}

}  // namespace
}  // namespace ms::modelservice
