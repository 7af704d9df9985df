// Autoscaling mode HPA (issue 15 part 3), as pure functions: the desired
// HorizontalPodAutoscaler, its repair against the object the API server
// returns (zero writes when unchanged), its deletion when the mode changes
// or the ModelService goes, and the ModelService's status from the HPA's.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller/modelservice/cached.h"
#include "controller/modelservice/desired.h"
#include "controller/modelservice/plan.h"
#include "controller/modelservice/resources.h"
#include "controller/modelservice/status.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1700000000);

Options Opts() {
  Options o;
  o.hpa_scale_down_stabilization_seconds = 10;
  return o;
}

json ModelService(const std::string& mode = "HPA", int target = 1000) {
  return test::ModelService()
      .Finalizer()
      .Defaulted()
      .Spec({{"image", "registry.local/serve:1.4"}, {"replicas", 5}})
      .Autoscaling(mode, 1, 10, target);
}

// The HPA as the API server returns it for DesiredHorizontalPodAutoscaler()
// with targetQueueLength 1000.
json ServerHpa() { return test::HorizontalPodAutoscaler(); }

// The owned Deployment and Service, rolled out at `replicas`.
Observed World(const json& ms, int replicas) {
  const ResolvedSpec spec = ResolveSpec(ms, Opts());
  Observed o;
  o.deployment = test::Deployment(DesiredDeployment(spec, replicas)).RolledOut(replicas).Build();
  o.service = test::Service(DesiredService(spec)).Build();
  o.hpa = ServerHpa();
  return o;
}

const Action* FindWrite(const Actions& a, ActionType type, const std::string& kind) {
  for (const auto& w : a.writes) {
    if (w.type == type && KindName(w.target.kind) == kind) return &w;
  }
  return nullptr;
}

const Event* FindEvent(const Actions& a, const std::string& reason) {
  for (const auto& e : a.events) {
    if (e.reason == reason) return &e;
  }
  return nullptr;
}

// The ModelService after the reconciler wrote the status it computes.
json Settled(json ms, const Observed& o) {
  const Actions a = Plan(ms, o, Opts(), kT0);
  if (a.status) ms["status"] = *a.status;
  return ms;
}

TEST(Hpa, DesiredObject) {
  const ResolvedSpec spec = ResolveSpec(ModelService("HPA", 5), Opts());
  EXPECT_TRUE(spec.hpa);
  EXPECT_EQ(DesiredHorizontalPodAutoscaler(spec, Opts()), json::parse(R"({
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
    "metadata": {
      "name": "bert", "namespace": "ml",
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "blockOwnerDeletion": true, "controller": true,
                           "kind": "ModelService", "name": "bert", "uid": "uid-1"}]
    },
    "spec": {
      "scaleTargetRef": {"apiVersion": "modelops.dev/v1", "kind": "ModelService", "name": "bert"},
      "minReplicas": 1, "maxReplicas": 10,
      "metrics": [{"type": "External", "external": {
        "metric": {"name": "modelservice_queue_length",
                   "selector": {"matchLabels": {"modelservice": "bert"}}},
        "target": {"type": "AverageValue", "averageValue": "5"}}}],
      "behavior": {"scaleDown": {"stabilizationWindowSeconds": 10}}
    }
  })"));
  // Mode Controller (the default) and no autoscaling: no HPA.
  EXPECT_FALSE(ResolveSpec(ModelService("Controller"), Opts()).hpa);
  json plain = ModelService();
  plain["spec"]["autoscaling"].erase("mode");
  EXPECT_FALSE(ResolveSpec(plain, Opts()).hpa);
}

TEST(Hpa, WithAGpuTargetTheHpaGetsTheSecondMetric) {
  json ms = ModelService("HPA", 5);
  ms["spec"]["gpus"] = 1;
  ms["spec"]["autoscaling"]["targetGPUUtilization"] = 60;
  const ResolvedSpec spec = ResolveSpec(ms, Opts());
  const json hpa = DesiredHorizontalPodAutoscaler(spec, Opts());
  ASSERT_EQ(hpa["spec"]["metrics"].size(), 2u);
  EXPECT_EQ(hpa["spec"]["metrics"][1], json::parse(R"({"type": "External", "external": {
      "metric": {"name": "modelservice_gpu_utilization", "selector": {"matchLabels": {"modelservice": "bert"}}},
      "target": {"type": "Value", "value": "60"}}})"));
  // As the API server returns it: nothing to repair; the GPU metric missing
  // (the target was just added), or a hand edit of its target: repaired.
  json server = hpa;
  EXPECT_TRUE(RepairHorizontalPodAutoscaler(spec, Opts(), server).empty());
  json one = hpa;
  one["spec"]["metrics"].erase(1);
  EXPECT_EQ(RepairHorizontalPodAutoscaler(spec, Opts(), one), Drift{"spec.metrics"});
  EXPECT_EQ(one, hpa);
  json edited = hpa;
  edited["spec"]["metrics"][1]["external"]["target"]["value"] = "80";
  EXPECT_EQ(RepairHorizontalPodAutoscaler(spec, Opts(), edited), Drift{"spec.metrics"});
  json as_quantity = hpa;
  as_quantity["spec"]["metrics"][1]["external"]["target"]["value"] = "60000m";
  EXPECT_TRUE(RepairHorizontalPodAutoscaler(spec, Opts(), as_quantity).empty()) << "compared as quantities";
  // Without the target: one metric again.
  json two = hpa;
  EXPECT_EQ(RepairHorizontalPodAutoscaler(ResolveSpec(ModelService("HPA", 5), Opts()), Opts(), two),
            Drift{"spec.metrics"});
  EXPECT_EQ(two["spec"]["metrics"].size(), 1u);
}

TEST(Hpa, ServerObjectHasNoDriftAndAnUnchangedWorldGivesZeroWrites) {
  const ResolvedSpec spec = ResolveSpec(ModelService(), Opts());
  json hpa = ServerHpa();
  EXPECT_TRUE(RepairHorizontalPodAutoscaler(spec, Opts(), hpa).empty());
  EXPECT_EQ(hpa, ServerHpa());

  const json ms = ModelService();
  const Observed o = World(ms, 5);
  const json settled = Settled(ms, o);
  const Actions a = Plan(settled, o, Opts(), kT0 + std::chrono::minutes(1));
  EXPECT_EQ(a.NumWrites(), 0u);
  EXPECT_TRUE(a.events.empty());
}

TEST(Hpa, DriftOfOwnedFieldsIsRepairedTheRestLeftAlone) {
  const ResolvedSpec spec = ResolveSpec(ModelService(), Opts());
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    std::vector<std::string> drift;
  };
  const std::vector<Case> cases = {
      {"maxReplicas", [](json& h) { h["spec"]["maxReplicas"] = 20; }, {"spec.maxReplicas"}},
      {"minReplicas", [](json& h) { h["spec"]["minReplicas"] = 2; }, {"spec.minReplicas"}},
      {"target",
       [](json& h) { h["spec"]["metrics"][0]["external"]["target"]["averageValue"] = "6"; },
       {"spec.metrics"}},
      {"target type",
       [](json& h) {
         h["spec"]["metrics"][0]["external"]["target"] = {{"type", "Value"}, {"value", "1k"}};
       },
       {"spec.metrics"}},
      {"selector",
       [](json& h) { h["spec"]["metrics"][0]["external"]["metric"]["selector"] = json::object(); },
       {"spec.metrics"}},
      {"another metric",
       [](json& h) {
         h["spec"]["metrics"].push_back(
             {{"type", "Resource"},
              {"resource", {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 80}}}}}});
       },
       {"spec.metrics"}},
      {"scaleTargetRef", [](json& h) { h["spec"]["scaleTargetRef"]["kind"] = "Deployment"; }, {"spec.scaleTargetRef"}},
      {"window",
       [](json& h) { h["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 300; },
       {"spec.behavior.scaleDown.stabilizationWindowSeconds"}},
      {"behavior removed",
       [](json& h) { h["spec"].erase("behavior"); },
       {"spec.behavior.scaleDown.stabilizationWindowSeconds"}},
      {"label", [](json& h) { h["metadata"]["labels"].erase("app.kubernetes.io/managed-by"); }, {"metadata.labels"}},
  };
  for (const auto& c : cases) {
    json hpa = ServerHpa();
    c.edit(hpa);
    EXPECT_EQ(RepairHorizontalPodAutoscaler(spec, Opts(), hpa), c.drift) << c.what;
    EXPECT_TRUE(RepairHorizontalPodAutoscaler(spec, Opts(), hpa).empty()) << c.what << ": repaired once";
  }
  // Not owned: the scale-up policies, other labels and annotations, the status.
  json hpa = ServerHpa();
  hpa["spec"]["behavior"]["scaleUp"]["policies"] =
      json::array({{{"type", "Pods"}, {"value", 1}, {"periodSeconds", 60}}});
  hpa["metadata"]["labels"]["team"] = "ml";
  hpa["metadata"]["annotations"] = {{"note", "x"}};
  hpa["status"]["desiredReplicas"] = 7;
  const json before = hpa;
  EXPECT_TRUE(RepairHorizontalPodAutoscaler(spec, Opts(), hpa).empty());
  EXPECT_EQ(hpa, before);

  // Through the reconciler: one PUT of the object with its resourceVersion, an Event.
  const json ms = ModelService();
  Observed o = World(ms, 5);
  const json settled = Settled(ms, o);
  o.hpa->at("spec")["maxReplicas"] = 20;
  const Actions a = Plan(settled, o, Opts(), kT0);
  ASSERT_EQ(a.writes.size(), 1u);
  EXPECT_EQ(a.writes[0].type, ActionType::kUpdate);
  EXPECT_EQ(PathOf(a.writes[0].target), "/apis/autoscaling/v2/namespaces/ml/horizontalpodautoscalers/bert");
  EXPECT_EQ(a.writes[0].body["metadata"]["resourceVersion"], "3001");
  EXPECT_EQ(a.writes[0].body["spec"]["maxReplicas"], 10);
  ASSERT_NE(FindEvent(a, "Updated"), nullptr);
  EXPECT_EQ(FindEvent(a, "Updated")->message, "Updated HorizontalPodAutoscaler ml/bert: spec.maxReplicas");
}

TEST(Hpa, CreatedWithTheOtherObjectsAndDeploymentFollowsSpecReplicas) {
  const json ms = ModelService("HPA", 5);
  Observed o;
  // The controller's own autoscaler is not asked in mode HPA; were a
  // recommendation there, it would not set the replicas.
  o.recommendation = autoscale::Recommendation{true, "", "", 100, 9};
  const Actions a = Plan(ms, o, Opts(), kT0);
  const Action* create = FindWrite(a, ActionType::kCreate, "HorizontalPodAutoscaler");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(CollectionPathOf(create->target), "/apis/autoscaling/v2/namespaces/ml/horizontalpodautoscalers");
  EXPECT_EQ(create->body, DesiredHorizontalPodAutoscaler(ResolveSpec(ms, Opts()), Opts()));
  const Action* dep = FindWrite(a, ActionType::kCreate, "Deployment");
  ASSERT_NE(dep, nullptr);
  EXPECT_EQ(dep->body["spec"]["replicas"], 5) << "spec.replicas, which the HPA sets through /scale";
  EXPECT_EQ(a.desired_replicas, 5);
  bool hpa_event = false;
  for (const auto& e : a.events) {
    hpa_event |= e.message ==
                 "Created HorizontalPodAutoscaler ml/bert (1..10 replicas, External metric modelservice_queue_length, "
                 "target 5 per replica)";
  }
  EXPECT_TRUE(hpa_event);

  // The HPA scaled spec.replicas to 7: the Deployment follows.
  json scaled = ModelService("HPA", 1000);
  Observed w = World(scaled, 5);
  scaled = Settled(scaled, w);
  scaled["spec"]["replicas"] = 7;
  const Actions b = Plan(scaled, w, Opts(), kT0);
  const Action* up = FindWrite(b, ActionType::kUpdate, "Deployment");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->body["spec"]["replicas"], 7);
  ASSERT_NE(FindEvent(b, "Scaled"), nullptr);
  EXPECT_EQ(FindEvent(b, "Scaled")->message, "Scaled Deployment ml/bert from 5 to 7 replicas");
}

TEST(Hpa, SwitchingToModeHpaHandsTheRunningReplicasOverWithoutDroppingPods) {
  // Mode Controller had scaled the Deployment to 8 (spec.replicas 5); the
  // user switches to mode HPA. spec.replicas takes 8 for the HPA to start
  // from, in one patch guarded by the resourceVersion; the Deployment keeps 8.
  const json ms = ModelService("HPA", 5);
  Observed o = World(ms, 8);
  o.hpa.reset();
  Actions a = Plan(ms, o, Opts(), kT0);
  ASSERT_FALSE(a.writes.empty());
  EXPECT_EQ(a.writes[0].type, ActionType::kPatchModelService) << "before the HPA is created";
  EXPECT_EQ(PathOf(a.writes[0].target), "/apis/modelops.dev/v1/namespaces/ml/modelservices/bert");
  EXPECT_EQ(a.writes[0].body, json::parse(R"({"metadata": {"resourceVersion": "100"}, "spec": {"replicas": 8}})"));
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr) << "the Deployment keeps its 8 pods";
  EXPECT_NE(FindWrite(a, ActionType::kCreate, "HorizontalPodAutoscaler"), nullptr);
  EXPECT_EQ(a.desired_replicas, 8);
  ASSERT_NE(FindEvent(a, "HandedOverToHPA"), nullptr);
  EXPECT_EQ(FindEvent(a, "HandedOverToHPA")->message,
            "Set spec.replicas from 5 to 8, the Deployment's current replicas, for the HorizontalPodAutoscaler to "
            "start from (spec.autoscaling.mode HPA)");

  // Outside the HPA's bounds: clamped, and the Deployment follows.
  o = World(ms, 14);
  o.hpa.reset();
  a = Plan(ms, o, Opts(), kT0);
  ASSERT_FALSE(a.writes.empty());
  EXPECT_EQ(a.writes[0].body["spec"], json::parse(R"({"replicas": 10})"));
  const Action* dep = FindWrite(a, ActionType::kUpdate, "Deployment");
  ASSERT_NE(dep, nullptr);
  EXPECT_EQ(dep->body["spec"]["replicas"], 10);
  EXPECT_EQ(FindEvent(a, "HandedOverToHPA")->message,
            "Set spec.replicas from 5 to 10, the Deployment's current replicas (14) clamped into 1..10, for the "
            "HorizontalPodAutoscaler to start from (spec.autoscaling.mode HPA)");

  // Nothing to hand over: the same count, no Deployment yet, or the HPA
  // already there (then spec.replicas is the HPA's and the Deployment follows it).
  o = World(ms, 5);
  o.hpa.reset();
  EXPECT_EQ(FindWrite(Plan(ms, o, Opts(), kT0), ActionType::kPatchModelService, "ModelService"), nullptr);
  o = Observed{};
  EXPECT_EQ(FindWrite(Plan(ms, o, Opts(), kT0), ActionType::kPatchModelService, "ModelService"), nullptr);
  o = World(ms, 8);
  a = Plan(ms, o, Opts(), kT0);
  EXPECT_EQ(FindWrite(a, ActionType::kPatchModelService, "ModelService"), nullptr);
  ASSERT_NE(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment")->body["spec"]["replicas"], 5);
  // Mode Controller: the controller's own autoscaler decides; no hand-over.
  const json controller = ModelService("Controller", 5);
  o = World(controller, 8);
  o.hpa.reset();
  o.recommendation = autoscale::Recommendation{true, "", "", 40, 8};
  EXPECT_EQ(FindWrite(Plan(controller, o, Opts(), kT0), ActionType::kPatchModelService, "ModelService"), nullptr);
}

TEST(Hpa, DeletedWhenTheModeIsNoLongerHpaOrTheModelServiceGoes) {
  for (const char* change : {"Controller", "no autoscaling"}) {
    json ms = ModelService("Controller");
    if (std::string(change) == "no autoscaling") ms["spec"].erase("autoscaling");
    Observed o = World(ms, 5);
    o.recommendation = autoscale::Recommendation{true, "", "", 23, 5};
    const Actions a = Plan(ms, o, Opts(), kT0);
    const Action* del = FindWrite(a, ActionType::kDelete, "HorizontalPodAutoscaler");
    ASSERT_NE(del, nullptr) << change;
    EXPECT_EQ(PathOf(del->target), "/apis/autoscaling/v2/namespaces/ml/horizontalpodautoscalers/bert");
    ASSERT_NE(FindEvent(a, "Deleted"), nullptr);
    EXPECT_EQ(FindEvent(a, "Deleted")->message,
              "Deleted HorizontalPodAutoscaler ml/bert: spec.autoscaling.mode is not HPA any more");
    // Terminating already: not deleted twice.
    o.hpa->at("metadata")["deletionTimestamp"] = "2023-11-14T22:20:00Z";
    EXPECT_EQ(FindWrite(Plan(ms, o, Opts(), kT0), ActionType::kDelete, "HorizontalPodAutoscaler"), nullptr);
  }

  // An HPA of that name that is not ours is left alone in mode Controller.
  json ms = ModelService("Controller");
  Observed o = World(ms, 5);
  o.recommendation = autoscale::Recommendation{true, "", "", 23, 5};
  o.hpa->at("metadata")["ownerReferences"] = json::array();
  Actions a = Plan(ms, o, Opts(), kT0);
  EXPECT_EQ(FindWrite(a, ActionType::kDelete, "HorizontalPodAutoscaler"), nullptr);
  EXPECT_FALSE(a.name_conflict);

  // Deleting the ModelService deletes the HPA; the finalizer stays until it is gone.
  json deleting = ModelService();
  deleting["metadata"]["deletionTimestamp"] = "2023-11-14T22:20:00Z";
  Observed gone;
  gone.hpa = ServerHpa();
  a = Plan(deleting, gone, Opts(), kT0);
  ASSERT_EQ(a.writes.size(), 1u);
  EXPECT_EQ(a.writes[0].type, ActionType::kDelete);
  EXPECT_EQ(KindName(a.writes[0].target.kind), "HorizontalPodAutoscaler");
  gone.hpa->at("metadata")["deletionTimestamp"] = "2023-11-14T22:20:01Z";
  a = Plan(deleting, gone, Opts(), kT0);
  EXPECT_TRUE(a.writes.empty());
  EXPECT_TRUE(a.requeue);
  gone.hpa.reset();
  a = Plan(deleting, gone, Opts(), kT0);
  ASSERT_EQ(a.writes.size(), 1u);
  EXPECT_EQ(a.writes[0].type, ActionType::kPatchModelService) << "the finalizer, once the HPA is gone";
}

TEST(Hpa, SameNamedHpaNotOursIsANameConflictInModeHpa) {
  const json ms = ModelService();
  Observed o;
  o.hpa = ServerHpa();
  o.hpa->at("metadata")["ownerReferences"] = json::array();
  const Actions a = Plan(ms, o, Opts(), kT0);
  EXPECT_TRUE(a.name_conflict);
  EXPECT_TRUE(a.writes.empty()) << "nothing created meanwhile";
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Failed");
  const json* ready = FindCondition(&*a.status, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ((*ready)["reason"], "NameConflict");
  EXPECT_EQ((*ready)["message"],
            "a HorizontalPodAutoscaler named \"bert\" already exists in namespace \"ml\" and is not controlled by this "
            "ModelService, which leaves it alone: delete or rename it, or give the ModelService another name");
}

TEST(Hpa, StatusReportsTheHpasState) {
  const json ms = ModelService();
  Observed o = World(ms, 5);
  o.hpa->at("status")["desiredReplicas"] = 8;
  Actions a = Plan(ms, o, Opts(), kT0);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["desiredReplicas"], 8) << "the HPA's status.desiredReplicas";
  EXPECT_EQ((*a.status)["phase"], "Ready") << "the Deployment is rolled out at spec.replicas";
  EXPECT_EQ(FindWrite(a, ActionType::kUpdate, "Deployment"), nullptr);

  // No status yet (just created): spec.replicas.
  o.hpa->erase("status");
  a = Plan(ms, o, Opts(), kT0);
  EXPECT_EQ((*a.status)["desiredReplicas"], 5);

  // The HPA cannot read its metric: Degraded with its reason and message, a Warning.
  o.hpa = ServerHpa();
  json& cond = o.hpa->at("status")["conditions"][1];
  cond["status"] = "False";
  cond["reason"] = "FailedGetExternalMetric";
  cond["message"] = "the HPA was unable to compute the replica count: unable to get external metric";
  a = Plan(ms, o, Opts(), kT0);
  ASSERT_TRUE(a.status);
  EXPECT_EQ((*a.status)["phase"], "Degraded");
  const json* degraded = FindCondition(&*a.status, "Degraded");
  ASSERT_NE(degraded, nullptr);
  EXPECT_EQ((*degraded)["status"], "True");
  EXPECT_EQ((*degraded)["reason"], "FailedGetExternalMetric");
  EXPECT_EQ((*degraded)["message"],
            "HorizontalPodAutoscaler bert: ScalingActive False: the HPA was unable to compute the replica count: "
            "unable to get external metric");
  const Event* warning = FindEvent(a, "FailedGetExternalMetric");
  ASSERT_NE(warning, nullptr);
  EXPECT_EQ(warning->type, "Warning");

  // AbleToScale False comes first.
  o.hpa->at("status")["conditions"][0] = {
      {"type", "AbleToScale"}, {"status", "False"}, {"reason", "FailedGetScale"}, {"message", "no scale"}};
  a = Plan(ms, o, Opts(), kT0);
  EXPECT_EQ((*FindCondition(&*a.status, "Degraded"))["reason"], "FailedGetScale");

  // An HPA that is not ours says nothing about this ModelService in mode Controller.
  json ctrl = ModelService("Controller");
  Observed c = World(ctrl, 5);
  c.recommendation = autoscale::Recommendation{true, "", "", 23, 5};
  c.hpa->at("metadata")["ownerReferences"] = json::array();
  c.hpa->at("status")["desiredReplicas"] = 9;
  a = Plan(ctrl, c, Opts(), kT0);
  EXPECT_EQ((*a.status)["desiredReplicas"], 5);
  EXPECT_EQ((*a.status)["phase"], "Ready");
}

// The informer's cache keeps only what the reconciler reads of an HPA: the
// same decisions (none here) and the same status from the cached copy.
TEST(Hpa, CachedCopyGivesTheSameReconcile) {
  const json ms = ModelService();
  Observed full = World(ms, 5);
  full.hpa->at("status")["conditions"][1]["status"] = "False";
  full.hpa->at("status")["conditions"][1]["reason"] = "FailedGetExternalMetric";
  const json settled = Settled(ms, full);
  Observed cached = full;
  cached.hpa = CachedHorizontalPodAutoscaler(*full.hpa);
  EXPECT_FALSE(cached.hpa->at("spec").at("behavior").contains("scaleUp"));
  EXPECT_FALSE(cached.hpa->at("status").contains("currentMetrics"));
  const Actions a = Plan(settled, full, Opts(), kT0);
  const Actions b = Plan(settled, cached, Opts(), kT0);
  EXPECT_EQ(a.NumWrites(), 0u);
  EXPECT_EQ(b.NumWrites(), 0u);
  EXPECT_EQ(Plan(ms, full, Opts(), kT0).status, Plan(ms, cached, Opts(), kT0).status);
}

TEST(Hpa, Quantities) {
  EXPECT_EQ(ParseQuantity("5"), 5.0);
  EXPECT_EQ(ParseQuantity("1k"), 1000.0);
  EXPECT_EQ(ParseQuantity("1500m"), 1.5);
  EXPECT_EQ(ParseQuantity("2Ki"), 2048.0);
  EXPECT_EQ(ParseQuantity("1e3"), 1000.0);
  EXPECT_EQ(ParseQuantity("1E"), 1e18);
  EXPECT_EQ(ParseQuantity("-2"), -2.0);
  EXPECT_EQ(ParseQuantity(".5"), 0.5);
  for (const char* bad : {"", "k", "5x", "nan", "inf", "0x10", "5 ", "+"}) EXPECT_FALSE(ParseQuantity(bad)) << bad;
}

}  // namespace
}  // namespace ms::modelservice
