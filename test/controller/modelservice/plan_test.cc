#include "controller/modelservice/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller/modelservice/resources.h"
#include "shared/clock/timefmt.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1700000000);
const WallTime kT1 = kT0 + std::chrono::minutes(5);

// ModelService ml/bert after its first reconcile (the finalizer), as
// kubectl apply leaves it.
json ModelService() {
  return test::ModelService()
      .Finalizer()
      .Defaulted()
      .Version("3", "registry.local/serve:1.4")
      .Spec({{"gpus", 1}})
      .Annotation("kubectl.kubernetes.io/last-applied-configuration", "{}");
}

// The owned objects as the API server returns them, rolled out.
json ServerDeployment() { return test::ServedDeployment(); }
json ServerService() { return test::ServedService(); }

Options Opts() { return Options{}; }

// The ModelService after a reconcile has written `status`.
json WithStatus(json ms, const json& status) {
  ms["status"] = status;
  return ms;
}

const Action* FindWrite(const Actions& a, ActionType type, const std::string& kind) {
  for (const auto& w : a.writes) {
    if (w.type == type && KindName(w.target.kind) == kind) return &w;
  }
  return nullptr;
}

bool HasEvent(const Actions& a, const std::string& reason) {
  return std::any_of(a.events.begin(), a.events.end(), [&](const Event& e) { return e.reason == reason; });
}

const json& Container(const json& deployment) { return deployment["spec"]["template"]["spec"]["containers"][0]; }

// Steady state: a ModelService whose status matches the world.
json SteadyModelService() {
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ModelService(), obs, Opts(), kT0);
  EXPECT_TRUE(a.status.has_value());
  return WithStatus(ModelService(), *a.status);
}

TEST(Plan, FirstReconcileAddsFinalizerWithPrecondition) {
  json ms = ModelService();
  ms["metadata"].erase("finalizers");
  Actions a = Plan(ms, Observed{}, Opts(), kT0);
  ASSERT_FALSE(a.writes.empty());
  const Action& w = a.writes.front();
  EXPECT_EQ(w.type, ActionType::kPatchModelService);
  EXPECT_EQ(PathOf(w.target), "/apis/modelops.dev/v1/namespaces/ml/modelservices/bert");
  EXPECT_EQ(w.body["metadata"]["finalizers"], json::array({"modelops.dev/cleanup"}));
  EXPECT_EQ(w.body["metadata"]["resourceVersion"], "100");
}

TEST(Plan, CreatesDeploymentAndServiceWhenMissing) {
  Actions a = Plan(ModelService(), Observed{}, Opts(), kT0);
  const Action* d = FindWrite(a, ActionType::kCreate, "Deployment");
  const Action* s = FindWrite(a, ActionType::kCreate, "Service");
  ASSERT_NE(d, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(CollectionPathOf(d->target), "/apis/apps/v1/namespaces/ml/deployments");
  EXPECT_EQ(CollectionPathOf(s->target), "/api/v1/namespaces/ml/services");
  EXPECT_EQ(d->target, (ObjectRef{Kind::kDeployment, "ml", "bert"}));
  const json& dep = d->body;
  EXPECT_EQ(dep["metadata"]["labels"]["app.kubernetes.io/managed-by"], "modelservice-controller");
  EXPECT_EQ(dep["metadata"]["ownerReferences"][0], json({{"apiVersion", "modelops.dev/v1"},
                                                         {"kind", "ModelService"},
                                                         {"name", "bert"},
                                                         {"uid", "uid-1"},
                                                         {"controller", true},
                                                         {"blockOwnerDeletion", true}}));
  EXPECT_EQ(dep["spec"]["replicas"], 2);
  const json& c = Container(dep);
  EXPECT_EQ(c["name"], "model");
  EXPECT_EQ(c["image"], "registry.local/serve:1.4");
  EXPECT_EQ(c["env"][0], json({{"name", "MODEL_NAME"}, {"value", "bert-base"}}));
  EXPECT_EQ(c["env"][1], json({{"name", "MODEL_VERSION"}, {"value", "3"}}));
  EXPECT_EQ(c["ports"][0]["containerPort"], 8080);
  EXPECT_EQ(c["ports"][0]["name"], "http");
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(c["readinessProbe"]["httpGet"], json({{"path", "/healthz"}, {"port", "http"}, {"scheme", "HTTP"}}));
  EXPECT_EQ(dep["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
  const json& svc = s->body;
  EXPECT_EQ(svc["spec"]["type"], "ClusterIP");
  EXPECT_EQ(svc["spec"]["ports"][0],
            json({{"name", "http"}, {"port", 8080}, {"targetPort", "http"}, {"protocol", "TCP"}}));
  EXPECT_EQ(svc["spec"]["selector"],
            json({{"app.kubernetes.io/name", "modelservice"}, {"app.kubernetes.io/instance", "bert"}}));
  // One Event for both.
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0],
            (Event{"Normal", "Created", "Create", "Created Deployment ml/bert with 2 replicas and Service ml/bert"}));
  // The status is that of the world with these objects created: one status
  // write, Progressing at once (not Pending until the next event).
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ((*a.status)["phase"], "Progressing");
  EXPECT_EQ((*a.status)["conditions"][1]["reason"], "RollingOut");
  EXPECT_EQ((*a.status)["conditions"][1]["message"], "0/2 replicas updated, 0/2 replicas ready");
  EXPECT_EQ((*a.status)["url"], "http://bert.ml.svc:8080");
}

TEST(Plan, DefaultImageWhenSpecHasNone) {
  json ms = ModelService();
  ms["spec"].erase("image");
  Options o;
  o.default_image = "registry.local/default:7";
  Actions a = Plan(ms, Observed{}, o, kT0);
  EXPECT_EQ(Container(FindWrite(a, ActionType::kCreate, "Deployment")->body)["image"], "registry.local/default:7");
}

TEST(Plan, UnchangedWorldGivesZeroWrites) {
  json ms = SteadyModelService();
  EXPECT_EQ(ms["status"]["phase"], "Ready");
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  EXPECT_EQ(a.NumWrites(), 0u) << (a.writes.empty() ? a.status->dump() : a.writes[0].body.dump());
  EXPECT_TRUE(a.events.empty());
}

TEST(Plan, UnchangedWithoutVersionAndGpusGivesZeroWrites) {
  // MODEL_VERSION with an empty value comes back without "value"; no gpus
  // comes back as "resources": {}; Recreate without rollingUpdate.
  json ms = ModelService();
  ms["spec"].erase("version");
  ms["spec"]["gpus"] = 0;
  ms["spec"]["strategy"] = {{"type", "Recreate"}};
  json dep = ServerDeployment();
  json& c = dep["spec"]["template"]["spec"]["containers"][0];
  c["env"][1] = {{"name", "MODEL_VERSION"}};
  c["resources"] = json::object();
  dep["spec"]["template"]["spec"].erase("tolerations");  // no GPUs: no GPU toleration
  dep["spec"]["strategy"] = {{"type", "Recreate"}};
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  Actions first = Plan(ms, obs, Opts(), kT0);
  EXPECT_TRUE(first.writes.empty()) << first.writes[0].body.dump();
  ASSERT_TRUE(first.status);
  Actions again = Plan(WithStatus(ms, *first.status), obs, Opts(), kT1);
  EXPECT_EQ(again.NumWrites(), 0u);
}

TEST(Plan, RepairsHandEditedImage) {
  json dep = ServerDeployment();
  dep["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:1";
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(SteadyModelService(), obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(PathOf(u->target), "/apis/apps/v1/namespaces/ml/deployments/bert");
  EXPECT_EQ(Container(u->body)["image"], "registry.local/serve:1.4");
  // Sent with its resourceVersion, server defaults kept.
  EXPECT_EQ(u->body["metadata"]["resourceVersion"], "2001");
  EXPECT_EQ(Container(u->body)["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(u->body["spec"]["revisionHistoryLimit"], 10);
  EXPECT_TRUE(HasEvent(a, "Updated"));
  EXPECT_FALSE(HasEvent(a, "Scaled"));
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Service"), nullptr);
}

TEST(Plan, RepairsReplicasAndRemovedLabelButKeepsUnrelatedAnnotation) {
  json dep = ServerDeployment();
  dep["spec"]["replicas"] = 5;
  dep["metadata"]["labels"].erase("app.kubernetes.io/managed-by");
  dep["metadata"]["annotations"]["team"] = "search";
  dep["metadata"]["labels"]["extra"] = "kept";
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(SteadyModelService(), obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->body["spec"]["replicas"], 2);
  EXPECT_EQ(u->body["metadata"]["labels"]["app.kubernetes.io/managed-by"], "modelservice-controller");
  EXPECT_EQ(u->body["metadata"]["labels"]["extra"], "kept");
  EXPECT_EQ(u->body["metadata"]["annotations"]["team"], "search");
  EXPECT_TRUE(HasEvent(a, "Scaled"));
  EXPECT_TRUE(HasEvent(a, "Updated"));
}

TEST(Plan, UnrelatedAnnotationAloneIsNotDrift) {
  json dep = ServerDeployment();
  dep["metadata"]["annotations"]["team"] = "search";
  dep["spec"]["template"]["spec"]["containers"][0]["env"].push_back({{"name", "EXTRA"}, {"value", "1"}});
  dep["spec"]["template"]["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  json svc = ServerService();
  svc["metadata"]["annotations"] = {{"team", "search"}};
  Observed obs{dep, svc, std::nullopt, std::nullopt};
  Actions a = Plan(SteadyModelService(), obs, Opts(), kT1);
  EXPECT_EQ(a.NumWrites(), 0u);
}

TEST(Plan, ServiceDriftRepaired) {
  json svc = ServerService();
  svc["spec"]["ports"][0]["port"] = 9999;
  svc["spec"]["selector"]["app.kubernetes.io/instance"] = "other";
  Observed obs{ServerDeployment(), svc, std::nullopt, std::nullopt};
  Actions a = Plan(SteadyModelService(), obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Service");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->body["spec"]["ports"][0]["port"], 8080);
  EXPECT_EQ(u->body["spec"]["selector"]["app.kubernetes.io/instance"], "bert");
  EXPECT_EQ(u->body["spec"]["clusterIP"], "10.0.0.17");
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);
}

TEST(Plan, ScaleSpecReplicas) {
  json ms = SteadyModelService();
  ms["spec"]["replicas"] = 4;
  ms["metadata"]["generation"] = 2;
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->body["spec"]["replicas"], 4);
  EXPECT_TRUE(HasEvent(a, "Scaled"));
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Progressing");
  EXPECT_EQ((*a.status)["desiredReplicas"], 4);
  EXPECT_EQ((*a.status)["observedGeneration"], 2);
}

TEST(Plan, StrategyRollingUpdateToRecreateDropsRollingUpdate) {
  json ms = SteadyModelService();
  ms["spec"]["strategy"] = {{"type", "Recreate"}};
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->body["spec"]["strategy"], json({{"type", "Recreate"}}));
}

TEST(Plan, GpusOneToZeroRemovesLimit) {
  json ms = SteadyModelService();
  ms["spec"]["gpus"] = 0;
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  const json& res = Container(u->body)["resources"];
  EXPECT_FALSE(res.contains("limits") && res["limits"].contains("nvidia.com/gpu")) << res.dump();
}

TEST(Plan, GpuQuantityAsNumberIsNotDrift) {
  json dep = ServerDeployment();
  dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 1;
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  EXPECT_EQ(Plan(SteadyModelService(), obs, Opts(), kT1).NumWrites(), 0u);
}

TEST(Plan, DeletionDeletesOwnedObjectsThenRemovesFinalizer) {
  json ms = SteadyModelService();
  ms["metadata"]["deletionTimestamp"] = "2023-11-14T23:00:00Z";
  ms["metadata"]["finalizers"] = json::array({"other.io/x", "modelops.dev/cleanup"});
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  ASSERT_EQ(a.writes.size(), 2u);
  EXPECT_EQ(a.writes[0].type, ActionType::kDelete);
  EXPECT_EQ(PathOf(a.writes[0].target), "/apis/apps/v1/namespaces/ml/deployments/bert");
  EXPECT_EQ(a.writes[1].type, ActionType::kDelete);
  EXPECT_EQ(KindName(a.writes[1].target.kind), "Service");
  EXPECT_FALSE(a.status.has_value());
  EXPECT_TRUE(HasEvent(a, "Deleted"));
  EXPECT_TRUE(a.look_again) << "deleted: look again at once";
  // Each delete is conditional on the object as observed.
  const json dep = ServerDeployment();
  EXPECT_EQ(a.writes[0].body,
            json({{"apiVersion", "v1"},
                  {"kind", "DeleteOptions"},
                  {"propagationPolicy", "Background"},
                  {"preconditions",
                   {{"uid", dep["metadata"]["uid"]}, {"resourceVersion", dep["metadata"]["resourceVersion"]}}}}));
  EXPECT_EQ(a.writes[1].body["preconditions"]["uid"], ServerService()["metadata"]["uid"]);

  // Both gone: the finalizer goes, other finalizers stay.
  Actions b = Plan(ms, Observed{}, Opts(), kT1);
  ASSERT_EQ(b.writes.size(), 1u);
  EXPECT_EQ(b.writes[0].type, ActionType::kPatchModelService);
  EXPECT_EQ(b.writes[0].body["metadata"]["finalizers"], json::array({"other.io/x"}));
  EXPECT_EQ(b.writes[0].body["metadata"]["resourceVersion"], "100");

  // Without our finalizer there is nothing to do.
  ms["metadata"]["finalizers"] = json::array({"other.io/x"});
  EXPECT_EQ(Plan(ms, obs, Opts(), kT1).NumWrites(), 0u);
}

TEST(Plan, DeletionLeavesObjectsOwnedBySomeoneElse) {
  json ms = SteadyModelService();
  ms["metadata"]["deletionTimestamp"] = "2023-11-14T23:00:00Z";
  json dep = ServerDeployment();
  dep["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
  Observed obs{dep, std::nullopt, std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  ASSERT_EQ(a.writes.size(), 1u);
  EXPECT_EQ(a.writes[0].type, ActionType::kPatchModelService);
}

TEST(Plan, DeletionWithPropagationOrphanDeletesNothingAndLetsGo) {
  json ms = SteadyModelService();
  ms["metadata"]["deletionTimestamp"] = "2023-11-14T23:00:00Z";
  ms["metadata"]["finalizers"] = json::array({"orphan", "modelops.dev/cleanup"});
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  ASSERT_EQ(a.writes.size(), 1u);
  EXPECT_EQ(a.writes[0].type, ActionType::kPatchModelService);
  EXPECT_EQ(a.writes[0].body["metadata"]["finalizers"], json::array({"orphan"}));
  EXPECT_FALSE(HasEvent(a, "Deleted"));
}

TEST(Plan, StatusProgressingThenReady) {
  json ms = ModelService();
  Actions a = Plan(ms, Observed{}, Opts(), kT0);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Progressing") << "the Deployment this plan creates is rolling out";
  ms["status"] = *a.status;

  json dep = ServerDeployment();
  dep["status"] = {{"observedGeneration", 1},
                   {"replicas", 2},
                   {"updatedReplicas", 2},
                   {"readyReplicas", 1},
                   {"availableReplicas", 1}};
  Actions b =
      Plan(ms, Observed{dep, ServerService(), std::nullopt, std::nullopt}, Opts(), kT0 + std::chrono::seconds(10));
  ASSERT_TRUE(b.status);
  EXPECT_EQ((*b.status)["phase"], "Progressing");
  EXPECT_EQ((*b.status)["readyReplicas"], 1);
  EXPECT_EQ(b.NumWrites(), 1u) << "only the status";
  ms["status"] = *b.status;

  Actions c = Plan(ms, Observed{ServerDeployment(), ServerService(), std::nullopt, std::nullopt}, Opts(),
                   kT0 + std::chrono::seconds(20));
  ASSERT_TRUE(c.status);
  const json& st = *c.status;
  EXPECT_EQ(st["phase"], "Ready");
  EXPECT_EQ(st["replicas"], 2);
  EXPECT_EQ(st["readyReplicas"], 2);
  EXPECT_EQ(st["desiredReplicas"], 2);
  EXPECT_EQ(st["observedGeneration"], 1);
  ASSERT_EQ(st["conditions"].size(), 3u);
  EXPECT_EQ(st["conditions"][0]["type"], "Ready");
  EXPECT_EQ(st["conditions"][0]["status"], "True");
  EXPECT_EQ(st["conditions"][0]["lastTransitionTime"], clock::FormatTime(kT0 + std::chrono::seconds(20)));
  // Degraded stayed False since the first reconcile: its time is kept.
  EXPECT_EQ(st["conditions"][2]["type"], "Degraded");
  EXPECT_EQ(st["conditions"][2]["status"], "False");
  EXPECT_EQ(st["conditions"][2]["lastTransitionTime"], clock::FormatTime(kT0));
  EXPECT_EQ(st["conditions"][2]["observedGeneration"], 1);
}

TEST(Plan, DeploymentProgressDeadlineExceededIsDegraded) {
  json dep = ServerDeployment();
  dep["status"]["conditions"][1] = {
      {"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}, {"message", "too slow"}};
  dep["status"]["readyReplicas"] = 1;
  Actions a = Plan(SteadyModelService(), Observed{dep, ServerService(), std::nullopt, std::nullopt}, Opts(), kT1);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Degraded");
  EXPECT_TRUE(HasEvent(a, "RolloutFailed"));  // versions_test.cc has the rest
}

TEST(Plan, FailureToCreateIsFailed) {
  Observed obs;
  obs.failure = WriteFailure{"CreateFailed", "create Deployment ml/bert: 422 Invalid: bad"};
  Actions a = Plan(ModelService(), obs, Opts(), kT0);
  EXPECT_EQ(FindWrite(a, ActionType::kCreate, "Deployment"), nullptr);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Failed");
  EXPECT_TRUE(HasEvent(a, "CreateFailed"));
}

TEST(Plan, AutoscaleRecommendationApplied) {
  json ms = SteadyModelService();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  Observed obs{ServerDeployment(), ServerService(), autoscale::Recommendation{true, "", "", 31, 7}, std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  const Action* u = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->body["spec"]["replicas"], 7);
  EXPECT_TRUE(HasEvent(a, "Scaled"));
  EXPECT_EQ((*a.status)["desiredReplicas"], 7);
  EXPECT_EQ(a.desired_replicas, 7);
}

TEST(Plan, GpuUtilizationInTheStatusWrittenWhenItChanges) {
  json ms = SteadyModelService();
  Observed obs{ServerDeployment(), ServerService(), std::nullopt, std::nullopt};
  obs.gpu = autoscale::GpuUtilization{89.6, 2, kT0, "", false};
  Actions a = Plan(ms, obs, Opts(), kT1);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["gpuUtilization"], 90);
  EXPECT_EQ((*a.status)["gpuUtilizationObservedAt"], clock::FormatTime(kT0));
  EXPECT_FALSE(a.status->contains("gpuUtilizationMessage"));
  EXPECT_EQ((*a.status)["phase"], ms["status"]["phase"]) << "nothing else changes";
  EXPECT_TRUE(a.writes.empty());
  // Read again later, the same rounded value: the status stays as written.
  const json settled = WithStatus(ms, *a.status);
  obs.gpu = autoscale::GpuUtilization{90.2, 2, kT1, "", false};
  EXPECT_FALSE(Plan(settled, obs, Opts(), kT1 + std::chrono::seconds(15)).status);
  // While a new poller waits for its first answer: as written.
  obs.gpu = autoscale::GpuUtilization{std::nullopt, 0, {}, "", true};
  EXPECT_FALSE(Plan(settled, obs, Opts(), kT1 + std::chrono::seconds(15)).status);
  // Another value: written with its time.
  obs.gpu = autoscale::GpuUtilization{60, 2, kT1, "", false};
  a = Plan(settled, obs, Opts(), kT1 + std::chrono::seconds(15));
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["gpuUtilization"], 60);
  EXPECT_EQ((*a.status)["gpuUtilizationObservedAt"], clock::FormatTime(kT1));
  // Unreadable: the value goes, the message says why, the phase stays.
  obs.gpu = autoscale::GpuUtilization{
      std::nullopt, 0, {}, "cannot read the GPU utilization from Prometheus: no series", false};
  a = Plan(settled, obs, Opts(), kT1 + std::chrono::seconds(15));
  ASSERT_TRUE(a.status);
  EXPECT_FALSE(a.status->contains("gpuUtilization"));
  EXPECT_FALSE(a.status->contains("gpuUtilizationObservedAt"));
  EXPECT_EQ((*a.status)["gpuUtilizationMessage"], "cannot read the GPU utilization from Prometheus: no series");
  EXPECT_EQ((*a.status)["phase"], ms["status"]["phase"]);
  EXPECT_TRUE(a.events.empty());
}

TEST(Plan, APendingFirstReadingKeepsReplicasAndIsNotDegraded) {
  json ms = SteadyModelService();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  autoscale::Recommendation pending{false, "", "waiting for the first queue length", 0, 2};
  pending.pending = true;
  Observed obs{ServerDeployment(), ServerService(), pending, std::nullopt};  // 2 replicas
  Actions a = Plan(ms, obs, Opts(), kT1);
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);
  EXPECT_FALSE(a.status) << "the steady status (Ready, 2 desired) stays: no Degraded while the first read is pending";
  EXPECT_FALSE(HasEvent(a, "MetricsUnavailable"));
}

// A restarted controller, or a new leader, starts a new poller: its first
// look at an autoscaled object comes before any answer (pending). The status
// the last one wrote says MetricsUnavailable; nothing known now says
// otherwise, so that condition stays as it is: no status write (a flip to
// Ready, then back to Degraded at the first failed read, was two writes and
// a new Warning Event per object after every restart).
TEST(Plan, APendingFirstReadingKeepsAMetricsUnavailableTheStatusReports) {
  json ms = SteadyModelService();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  const autoscale::Recommendation unavailable{false, "MetricsUnavailable", "cannot read the queue length", 0, 0};
  Observed obs{ServerDeployment(), ServerService(), unavailable, std::nullopt};
  Actions before = Plan(ms, obs, Opts(), kT1);
  ASSERT_TRUE(before.status);
  ms = WithStatus(ms, *before.status);

  autoscale::Recommendation pending{false, "", "waiting for the first answer from Prometheus", 0, 2};
  pending.pending = true;
  obs.recommendation = pending;
  Actions a = Plan(ms, obs, Opts(), kT1 + std::chrono::minutes(10));
  EXPECT_FALSE(a.status) << (a.status ? a.status->dump() : "");
  EXPECT_TRUE(a.events.empty());
  EXPECT_EQ(a.NumWrites(), 0u);
  // The first answer, the same failure: still nothing to write.
  obs.recommendation = unavailable;
  Actions b = Plan(ms, obs, Opts(), kT1 + std::chrono::minutes(10));
  EXPECT_EQ(b.NumWrites(), 0u);
  EXPECT_TRUE(b.events.empty());
  // The first answer is a value: Degraded clears, as it would have anyway.
  obs.recommendation = autoscale::Recommendation{true, "", "queue length 10", 10, 2};
  Actions c = Plan(ms, obs, Opts(), kT1 + std::chrono::minutes(10));
  ASSERT_TRUE(c.status);
  EXPECT_EQ((*c.status)["phase"], "Ready");
  EXPECT_EQ((*c.status)["conditions"][2]["status"], "False");
}

TEST(Plan, MetricsUnavailableKeepsReplicasAndIsDegraded) {
  json ms = SteadyModelService();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  ms["spec"]["replicas"] = 9;     // ignored with autoscaling
  json dep = ServerDeployment();  // 2 replicas
  Observed obs{dep, ServerService(),
               autoscale::Recommendation{false, "MetricsUnavailable", "prometheus: connection refused", 0, 0},
               std::nullopt};
  Actions a = Plan(ms, obs, Opts(), kT1);
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Degraded");
  EXPECT_EQ((*a.status)["desiredReplicas"], 2);
  const json& degraded = (*a.status)["conditions"][2];
  EXPECT_EQ(degraded["status"], "True");
  EXPECT_EQ(degraded["reason"], "MetricsUnavailable");
  EXPECT_EQ(degraded["message"], "prometheus: connection refused");
  EXPECT_TRUE(HasEvent(a, "MetricsUnavailable"));

  // Still unavailable at the next resync: no new write, no new event.
  Actions b = Plan(WithStatus(ms, *a.status), obs, Opts(), kT1 + std::chrono::seconds(15));
  EXPECT_EQ(b.NumWrites(), 0u);
  EXPECT_TRUE(b.events.empty());
}

// Pods that the scheduler cannot place (pods.h): Degraded, reason
// Unschedulable, with the scheduler's message, one Warning Event; nothing
// written while it stays so; Ready once they are placed.
TEST(Plan, UnschedulablePodsAreDegradedUntilScheduled) {
  json dep = ServerDeployment();
  dep["spec"]["replicas"] = 3;
  dep["status"] = {{"observedGeneration", 1},
                   {"replicas", 3},
                   {"updatedReplicas", 3},
                   {"readyReplicas", 2},
                   {"availableReplicas", 2}};
  json ms = SteadyModelService();
  ms["spec"]["replicas"] = 3;
  const std::string scheduler = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match.";
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  obs.pods = PodSummary{.pods = 3, .unschedulable = 1, .scheduler_message = scheduler};
  Actions a = Plan(ms, obs, Opts(), kT1);
  ASSERT_TRUE(a.status);
  EXPECT_TRUE(a.writes.empty());
  EXPECT_EQ((*a.status)["phase"], "Degraded");
  EXPECT_EQ((*a.status)["readyReplicas"], 2);
  const json& degraded = (*a.status)["conditions"][2];
  EXPECT_EQ(degraded["type"], "Degraded");
  EXPECT_EQ(degraded["status"], "True");
  EXPECT_EQ(degraded["reason"], "Unschedulable");
  EXPECT_EQ(degraded["message"], "1/3 pods cannot be scheduled: " + scheduler);
  EXPECT_EQ((*a.status)["conditions"][0]["status"], "False");
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].type, "Warning");
  EXPECT_EQ(a.events[0].reason, "Unschedulable");
  EXPECT_EQ(a.events[0].message, "1/3 pods cannot be scheduled: " + scheduler);

  // Still Pending, the scheduler says the same: no write, no Event.
  ms = WithStatus(ms, *a.status);
  Actions b = Plan(ms, obs, Opts(), kT1 + std::chrono::seconds(30));
  EXPECT_EQ(b.NumWrites(), 0u);
  EXPECT_TRUE(b.events.empty());

  // A node is added: the pod is placed and becomes Ready.
  dep["status"]["readyReplicas"] = 3;
  dep["status"]["availableReplicas"] = 3;
  obs.deployment = dep;
  obs.pods = PodSummary{.pods = 3};
  Actions c = Plan(ms, obs, Opts(), kT1 + std::chrono::seconds(60));
  ASSERT_TRUE(c.status);
  EXPECT_EQ((*c.status)["phase"], "Ready");
  EXPECT_EQ((*c.status)["conditions"][2]["status"], "False");
  EXPECT_EQ((*c.status)["conditions"][2]["reason"], "AsExpected");
  EXPECT_TRUE(c.events.empty());
}

// The Deployment controller's own verdicts come first.
TEST(Plan, DeploymentVerdictsComeBeforeWhatThePodsSay) {
  json dep = ServerDeployment();
  dep["status"]["conditions"][1] = {
      {"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}, {"message", "too slow"}};
  dep["status"]["readyReplicas"] = 1;
  Observed obs{dep, ServerService(), std::nullopt, std::nullopt};
  obs.pods = PodSummary{.pods = 2, .unschedulable = 1, .scheduler_message = "0/3 nodes are available"};
  Actions a = Plan(SteadyModelService(), obs, Opts(), kT1);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["conditions"][2]["reason"], "RolloutFailed");  // versions.h
}

TEST(Plan, NotOwnedDeploymentIsNotTouched) {
  json dep = ServerDeployment();
  dep["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
  dep["spec"]["replicas"] = 7;
  Actions a = Plan(SteadyModelService(), Observed{dep, ServerService(), std::nullopt, std::nullopt}, Opts(), kT1);
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);
  EXPECT_TRUE(a.name_conflict);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Failed");
  EXPECT_EQ((*a.status)["conditions"][0]["reason"], "NameConflict");
  // The foreign Deployment's replicas are not reported as ours.
  EXPECT_EQ((*a.status)["replicas"], 0);
}

TEST(Plan, SameNamedObjectsWithoutOwnerAreNotAdopted) {
  // A Deployment and a Service the user made before, with our labels even:
  // no controller ownerReference, so not ours.
  json dep = ServerDeployment();
  dep["metadata"].erase("ownerReferences");
  json svc = ServerService();
  svc["metadata"]["ownerReferences"][0]["controller"] = false;
  Actions a = Plan(ModelService(), Observed{dep, svc, std::nullopt, std::nullopt}, Opts(), kT0);
  EXPECT_TRUE(a.name_conflict);
  for (const auto& w : a.writes) EXPECT_EQ(w.type, ActionType::kPatchModelService) << KindName(w.target.kind);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Failed");
  const json& ready = (*a.status)["conditions"][0];
  EXPECT_EQ(ready["reason"], "NameConflict");
  EXPECT_EQ(ready["message"],
            "a Deployment and a Service named \"bert\" already exist in namespace \"ml\" and are not controlled by "
            "this ModelService, which leaves them alone: delete or rename them, or give the ModelService another "
            "name");
  EXPECT_EQ((*a.status)["conditions"][2]["type"], "Degraded");
  EXPECT_EQ((*a.status)["conditions"][2]["status"], "True");
  ASSERT_TRUE(HasEvent(a, "NameConflict"));
  EXPECT_EQ(a.events.back().type, "Warning");

  // Looked at again: same status, no write, no second Warning.
  Actions b = Plan(WithStatus(ModelService(), *a.status), Observed{dep, svc, std::nullopt, std::nullopt}, Opts(), kT1);
  EXPECT_EQ(b.NumWrites(), 0u);
  EXPECT_TRUE(b.events.empty());

  // Only the Service is someone else's: the Deployment is still not created.
  Actions c = Plan(ModelService(), Observed{std::nullopt, svc, std::nullopt, std::nullopt}, Opts(), kT0);
  EXPECT_EQ(FindWrite(c, ActionType::kCreate, "Deployment"), nullptr);
  EXPECT_EQ((*c.status)["conditions"][0]["message"].get<std::string>().rfind("a Service named", 0), 0u);
}

TEST(Plan, DeletionWaitsForTerminatingOwnedObjects) {
  json ms = SteadyModelService();
  ms["metadata"]["deletionTimestamp"] = "2023-11-14T23:00:00Z";
  json dep = ServerDeployment();
  dep["metadata"]["deletionTimestamp"] = "2023-11-14T23:00:01Z";
  Actions a = Plan(ms, Observed{dep, std::nullopt, std::nullopt, std::nullopt}, Opts(), kT1);
  EXPECT_EQ(a.NumWrites(), 0u) << "neither deleted again nor the finalizer removed";
  EXPECT_TRUE(a.requeue);
  EXPECT_FALSE(a.look_again);
}

TEST(TimeFormat, RoundTrip) {
  const WallTime t = kT0 + std::chrono::microseconds(123456);
  EXPECT_EQ(clock::FormatTime(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(clock::FormatMicroTime(t), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(clock::ParseTime("2023-11-14T22:13:20.123456Z"), t);
  EXPECT_EQ(clock::ParseTime("2023-11-14T22:13:20Z"), kT0);
  EXPECT_FALSE(clock::ParseTime("yesterday").has_value());
}

}  // namespace
}  // namespace ms::modelservice
