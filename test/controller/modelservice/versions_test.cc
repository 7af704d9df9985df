// Versions (issue 15): the serving version and since when, a failed rollout
// and the automatic rollback, through the pure reconciler (no network): each
// step gives the reconciler the ModelService with the status the previous
// step wrote and the Deployment as the Deployment controller would have it.
#include "controller/modelservice/versions.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller/modelservice/plan.h"
#include "controller/modelservice/status.h"
#include "shared/clock/timefmt.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1700000000);
const WallTime kT1 = kT0 + std::chrono::minutes(5);
const WallTime kT2 = kT0 + std::chrono::minutes(10);

json ModelService(const std::string& version, const std::string& image, const json& rollout = nullptr) {
  test::ModelServiceBuilder ms = test::ModelService().Finalizer().Version(version, image);
  if (!rollout.is_null()) ms.Spec({{"rollout", rollout}});
  return ms;
}

json WithStatus(json ms, const json& status) {
  ms["status"] = status;
  return ms;
}

// The Deployment the controller would write for `ms`, as the Deployment
// controller reports it: generation `gen`, `updated` of 2 replicas on the
// new template, `ready` ready (and available), `replicas` pods in all, and
// `progressing` as its Progressing condition (default: NewReplicaSetAvailable).
json Deployment(const json& ms, int64_t gen, int updated, int ready, int replicas, const json& progressing = nullptr) {
  const ResolvedSpec spec = ResolveSpec(ms, Options{});
  json d = test::Deployment(DesiredDeployment(spec, spec.replicas)).Generation(gen).Rollout(replicas, updated, ready);
  if (!progressing.is_null()) d["status"]["conditions"] = json::array({progressing});
  return d;
}

json Service(const json& ms) { return test::Service(DesiredService(ResolveSpec(ms, Options{}))); }

Actions Step(const json& ms, const json& deployment, WallTime now) {
  return Plan(ms, Observed{deployment, Service(ms), std::nullopt, std::nullopt}, Options{}, now);
}

const json* Condition(const json& status, const std::string& type) { return FindCondition(&status, type); }

std::string Reason(const json& status, const std::string& type) {
  const json* c = Condition(status, type);
  return c == nullptr ? "" : c->value("reason", "");
}

std::string Message(const json& status, const std::string& type) {
  const json* c = Condition(status, type);
  return c == nullptr ? "" : c->value("message", "");
}

const Action* DeploymentUpdate(const Actions& a) {
  for (const auto& w : a.writes) {
    if (w.type == ActionType::kUpdate && w.target.kind == Kind::kDeployment) return &w;
  }
  return nullptr;
}

std::vector<std::string> EventReasons(const Actions& a) {
  std::vector<std::string> out;
  for (const auto& e : a.events) out.push_back(e.type + " " + e.reason);
  return out;
}

const json& Container(const json& deployment) { return deployment["spec"]["template"]["spec"]["containers"][0]; }

const json kDeadline = {{"type", "Progressing"},
                        {"status", "False"},
                        {"reason", "ProgressDeadlineExceeded"},
                        {"message", "ReplicaSet \"bert-7d9c\" has timed out progressing."}};

// Version 3 rolled out at kT0: the status after that reconcile.
json Serving3(const json& rollout = nullptr) {
  const json ms = ModelService("3", "registry.local/serve:1.4", rollout);
  Actions a = Step(ms, Deployment(ms, 1, 2, 2, 2), kT0);
  EXPECT_TRUE(a.status.has_value());
  return *a.status;
}

TEST(Versions, ServingVersionAndLastUpdateTimeWhenARolloutCompletes) {
  const json ms = ModelService("3", "registry.local/serve:1.4");
  const json status = Serving3();
  EXPECT_EQ(status["phase"], "Ready");
  EXPECT_EQ(status["servingVersion"], "3");
  EXPECT_EQ(status["servingImage"], "registry.local/serve:1.4");
  EXPECT_EQ(status["lastUpdateTime"], clock::FormatTime(kT0));
  EXPECT_FALSE(status.contains("failedVersion"));
  // Nothing changes later: zero writes, the time stays.
  Actions again = Step(WithStatus(ms, status), Deployment(ms, 1, 2, 2, 2), kT1);
  EXPECT_EQ(again.NumWrites(), 0u) << (again.status ? again.status->dump() : "");
  EXPECT_TRUE(again.events.empty());
}

TEST(Versions, NothingServesBeforeTheFirstRolloutCompletes) {
  const json ms = ModelService("3", "registry.local/serve:1.4");
  Actions a = Step(ms, Deployment(ms, 1, 1, 1, 2), kT0);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_FALSE(a.status->contains("servingVersion"));
  EXPECT_FALSE(a.status->contains("servingImage"));
  EXPECT_FALSE(a.status->contains("lastUpdateTime"));
  EXPECT_EQ(Message(*a.status, "Progressing"), "1/2 replicas updated, 1/2 replicas ready");
}

TEST(Versions, ANewVersionRollsOutThenServes) {
  const json v3 = Serving3();
  json ms = WithStatus(ModelService("4", "registry.local/serve:1.4"), v3);
  ms["metadata"]["generation"] = 2;
  // The Deployment is still on version 3: the controller updates it.
  Actions a = Step(ms, Deployment(ModelService("3", "registry.local/serve:1.4"), 1, 2, 2, 2), kT1);
  const Action* up = DeploymentUpdate(a);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(Container(up->body)["env"][1], json({{"name", "MODEL_VERSION"}, {"value", "4"}}));
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ((*a.status)["servingVersion"], "3");

  // Rolling: one pod of 2 on version 4, three pods in all, 2 ready.
  Actions rolling = Step(ms, Deployment(ms, 2, 1, 2, 3), kT1);
  ASSERT_TRUE(rolling.status.has_value());
  EXPECT_EQ((*rolling.status)["phase"], "Progressing");
  EXPECT_EQ(Reason(*rolling.status, "Progressing"), "RollingOut");
  EXPECT_EQ(Message(*rolling.status, "Progressing"), "version 3 → 4: 1/2 updated, 2 ready");
  EXPECT_EQ((*rolling.status)["servingVersion"], "3");
  EXPECT_EQ((*rolling.status)["lastUpdateTime"], clock::FormatTime(kT0));

  // Complete: version 4 serves, since now.
  Actions done = Step(WithStatus(ms, *rolling.status), Deployment(ms, 2, 2, 2, 2), kT2);
  ASSERT_TRUE(done.status.has_value());
  EXPECT_EQ((*done.status)["phase"], "Ready");
  EXPECT_EQ((*done.status)["servingVersion"], "4");
  EXPECT_EQ((*done.status)["lastUpdateTime"], clock::FormatTime(kT2));
  EXPECT_EQ(done.NumWrites(), 1u);  // the status only
}

TEST(Versions, AnImageChangeOfTheSameVersionSaysImage) {
  json ms = WithStatus(ModelService("3", "registry.local/serve:1.5"), Serving3());
  ms["metadata"]["generation"] = 2;
  Actions a = Step(ms, Deployment(ms, 2, 0, 2, 3), kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ(Message(*a.status, "Progressing"),
            "image registry.local/serve:1.4 → registry.local/serve:1.5: 0/2 updated, 2 ready");
}

TEST(Versions, ScalingIsNoNewRollout) {
  json ms = WithStatus(ModelService("3", "registry.local/serve:1.4"), Serving3());
  ms["spec"]["replicas"] = 3;
  ms["metadata"]["generation"] = 2;
  json d = Deployment(ms, 2, 3, 3, 3);
  Actions a = Step(ms, d, kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ((*a.status)["servingVersion"], "3");
  EXPECT_EQ((*a.status)["lastUpdateTime"], clock::FormatTime(kT0));
}

TEST(Versions, TimeoutSecondsIsTheProgressDeadline) {
  json ms = ModelService("3", "registry.local/serve:1.4", {{"timeoutSeconds", 30}});
  Actions create = Plan(ms, Observed{}, Options{}, kT0);
  ASSERT_FALSE(create.writes.empty());
  EXPECT_EQ(create.writes[0].body["spec"]["progressDeadlineSeconds"], 30);
  // A Deployment with the API server's default (600) is repaired.
  json d = Deployment(ModelService("3", "registry.local/serve:1.4"), 1, 2, 2, 2);
  EXPECT_EQ(d["spec"]["progressDeadlineSeconds"], 600);
  Actions a = Step(ms, d, kT0);
  const Action* up = DeploymentUpdate(a);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->body["spec"]["progressDeadlineSeconds"], 30);
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].message, "Updated Deployment ml/bert: spec.progressDeadlineSeconds");
}

TEST(Versions, ManualRolloutFailureIsDegradedAndLeftAlone) {
  json ms = WithStatus(ModelService("4", "registry.local/never-ready:4"), Serving3());
  ms["metadata"]["generation"] = 2;
  const json stuck = Deployment(ms, 2, 1, 2, 3, kDeadline);
  Actions a = Step(ms, stuck, kT1);
  EXPECT_TRUE(a.writes.empty());
  ASSERT_TRUE(a.status.has_value());
  const json& s = *a.status;
  EXPECT_EQ(s["phase"], "Degraded");
  EXPECT_EQ(Reason(s, "Degraded"), "RolloutFailed");
  EXPECT_EQ(Message(s, "Degraded"), "ReplicaSet \"bert-7d9c\" has timed out progressing.");
  EXPECT_EQ(Reason(s, "Progressing"), "RolloutFailed");
  EXPECT_EQ(Condition(s, "Progressing")->value("status", ""), "False");
  EXPECT_EQ(s["servingVersion"], "3");
  EXPECT_FALSE(s.contains("failedVersion"));
  EXPECT_FALSE(s.contains("failedSpecHash"));
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0],
            (Event{"Warning", "RolloutFailed", "Reconcile", "ReplicaSet \"bert-7d9c\" has timed out progressing."}));
  // And stays so: no write, no Event.
  Actions again = Step(WithStatus(ms, s), stuck, kT2);
  EXPECT_EQ(again.NumWrites(), 0u);
  EXPECT_TRUE(again.events.empty());
}

// Automatic: record, then roll back, then stay; a new spec is tried.
TEST(Versions, AutomaticRollbackGoesBackToTheServingVersionOnce) {
  const json rollout = {{"timeoutSeconds", 30}, {"rollback", "Automatic"}};
  json ms = WithStatus(ModelService("4", "registry.local/never-ready:4", rollout), Serving3(rollout));
  ms["metadata"]["generation"] = 2;
  const std::string hash = ResolveSpec(ms, Options{}).spec_hash;

  // 1. The Deployment reports the deadline: the failure is recorded first.
  Actions first = Step(ms, Deployment(ms, 2, 1, 2, 3, kDeadline), kT1);
  EXPECT_TRUE(first.writes.empty());
  ASSERT_TRUE(first.status.has_value());
  EXPECT_EQ(Reason(*first.status, "Degraded"), "RolloutFailed");
  EXPECT_EQ((*first.status)["failedVersion"], "4");
  EXPECT_EQ((*first.status)["failedSpecHash"], hash);
  EXPECT_EQ(EventReasons(first), std::vector<std::string>{"Warning RolloutFailed"});

  // 2. The record read back: the pod template goes back to version 3.
  ms = WithStatus(ms, *first.status);
  Actions second = Step(ms, Deployment(ms, 2, 1, 2, 3, kDeadline), kT1);
  const Action* up = DeploymentUpdate(second);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(Container(up->body)["image"], "registry.local/serve:1.4");
  EXPECT_EQ(Container(up->body)["env"][1], json({{"name", "MODEL_VERSION"}, {"value", "3"}}));
  EXPECT_EQ(up->body["spec"]["progressDeadlineSeconds"], 30);
  ASSERT_TRUE(second.status.has_value());
  const json& s2 = *second.status;
  EXPECT_EQ(s2["phase"], "Degraded");
  EXPECT_EQ(Reason(s2, "Degraded"), "RolledBack");
  const std::string rolled_back =
      "the rollout of version 4 made no progress for 30s; rolled back to version 3 (the pod template of generation "
      "1), which serves; version 4 is not rolled out again until the spec changes";
  EXPECT_EQ(Message(s2, "Degraded"), rolled_back);
  EXPECT_EQ(s2["failedVersion"], "4");
  EXPECT_EQ(s2["servingVersion"], "3");
  // The status is that of the Deployment once updated: rolling back.
  EXPECT_EQ(Reason(s2, "Progressing"), "RollingBack");
  EXPECT_EQ(Message(s2, "Progressing"), "version 4 → 3: 1/2 updated, 2 ready");
  // kstatus: version 4 will not serve without a change: Stalled, not Reconciling.
  EXPECT_EQ(Reason(s2, "Stalled"), "RolledBack");
  EXPECT_EQ(Condition(s2, "Reconciling"), nullptr);
  EXPECT_EQ(EventReasons(second), (std::vector<std::string>{"Normal Updated", "Warning RolledBack"}));
  EXPECT_EQ(second.events[1].message, rolled_back);

  // 3. Rolling back, then back on version 3: nothing more is written.
  ms = WithStatus(ms, s2);
  json back = Deployment(ModelService("3", "registry.local/serve:1.4", rollout), 3, 1, 2, 3);
  Actions rolling = Step(ms, back, kT1);
  EXPECT_TRUE(rolling.writes.empty());
  EXPECT_FALSE(rolling.status.has_value()) << "still what the rollback's status says";
  back = Deployment(ModelService("3", "registry.local/serve:1.4", rollout), 3, 2, 2, 2);
  Actions done = Step(ms, back, kT2);
  EXPECT_TRUE(done.writes.empty());
  ASSERT_TRUE(done.status.has_value());
  EXPECT_EQ((*done.status)["phase"], "Degraded");
  EXPECT_EQ(Reason(*done.status, "Progressing"), "RolledBack");
  // The old version's pods are all back, but the spec's generation does
  // not serve: Ready stays False, Stalled True (docs/user/status.md, "Health").
  EXPECT_EQ(Condition(*done.status, "Ready")->value("status", ""), "False");
  EXPECT_EQ(Reason(*done.status, "Ready"), "RolledBack");
  EXPECT_EQ(Reason(*done.status, "Stalled"), "RolledBack");
  EXPECT_EQ(Condition(*done.status, "Stalled")->value("message", ""), Message(*done.status, "Degraded"));
  EXPECT_EQ(Condition(*done.status, "Reconciling"), nullptr);
  EXPECT_EQ((*done.status)["lastUpdateTime"], clock::FormatTime(kT0));  // version 3 since kT0
  ms = WithStatus(ms, *done.status);
  Actions quiet = Step(ms, back, kT2 + std::chrono::minutes(30));
  EXPECT_EQ(quiet.NumWrites(), 0u) << (quiet.status ? quiet.status->dump() : quiet.writes[0].body.dump());
  EXPECT_TRUE(quiet.events.empty());

  // Scaling (spec.replicas, as kubectl scale or an HPA) is no new attempt.
  json scaled = ms;
  scaled["spec"]["replicas"] = 3;
  EXPECT_EQ(ResolveSpec(scaled, Options{}).spec_hash, hash);
  const Actions scaling = Step(scaled, back, kT2);
  const Action* up3 = DeploymentUpdate(scaling);
  ASSERT_NE(up3, nullptr);
  EXPECT_EQ(Container(up3->body)["env"][1]["value"], "3");

  // 4. The spec changes: the record goes, the new spec rolls out.
  json next = ms;
  next["spec"]["version"] = "5";
  next["spec"]["image"] = "registry.local/serve:1.5";
  Actions retry = Step(next, back, kT2);
  const Action* up5 = DeploymentUpdate(retry);
  ASSERT_NE(up5, nullptr);
  EXPECT_EQ(Container(up5->body)["image"], "registry.local/serve:1.5");
  ASSERT_TRUE(retry.status.has_value());
  EXPECT_FALSE(retry.status->contains("failedVersion"));
  EXPECT_FALSE(retry.status->contains("failedSpecHash"));
  // So does a longer timeout for the same version: another attempt.
  json longer = ms;
  longer["spec"]["rollout"]["timeoutSeconds"] = 300;
  const Actions again = Step(longer, back, kT2);
  const Action* up4 = DeploymentUpdate(again);
  ASSERT_NE(up4, nullptr);
  EXPECT_EQ(Container(up4->body)["image"], "registry.local/never-ready:4");
}

TEST(Versions, AFailedRolloutIsNotProgressingWhateverDegradedSaysFirst) {
  json ms = WithStatus(ModelService("4", "registry.local/serve:1.5"), Serving3());
  json d = Deployment(ms, 1, 1, 2, 3, kDeadline);
  d["status"]["conditions"].push_back({{"type", "ReplicaFailure"},
                                       {"status", "True"},
                                       {"reason", "FailedCreate"},
                                       {"message", "exceeded quota: compute"}});
  Actions a = Step(ms, d, kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ(Reason(*a.status, "Degraded"), "ReplicaFailure");
  EXPECT_EQ(Reason(*a.status, "Progressing"), "RolloutFailed");
  EXPECT_EQ(Message(*a.status, "Progressing"), "ReplicaSet \"bert-7d9c\" has timed out progressing.");
}

TEST(Versions, WhatThePodsSayComesBeforeARollbackInEffect) {
  const json rollout = {{"rollback", "Automatic"}};
  const json ms = ModelService("4", "registry.local/never-ready:4", rollout);
  const ResolvedSpec spec = ResolveSpec(ms, Options{});
  json current = Serving3(rollout);
  current["failedVersion"] = "4";
  current["failedSpecHash"] = spec.spec_hash;
  const json d = Deployment(ModelService("3", "registry.local/serve:1.4", rollout), 1, 2, 1, 2);
  StatusInput in;
  in.current_status = &current;
  in.generation = 1;
  in.deployment = &d;
  in.desired_replicas = 2;
  in.pod_problem = PodProblem{"Unschedulable", "1/2 pods cannot be scheduled: 0/3 nodes are available"};
  EXPECT_EQ(Reason(ComputeStatus(spec, in, kT1), "Degraded"), "Unschedulable");
  in.pod_problem.reset();
  const json s = ComputeStatus(spec, in, kT1);
  EXPECT_EQ(Reason(s, "Degraded"), "RolledBack");
  EXPECT_EQ(s["failedVersion"], "4");
}

TEST(Versions, NoRollbackWithoutAServingVersion) {
  const json ms = ModelService("4", "registry.local/never-ready:4", {{"rollback", "Automatic"}});
  Actions a = Step(ms, Deployment(ms, 1, 0, 0, 2, kDeadline), kT0);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ(Reason(*a.status, "Degraded"), "RolloutFailed");
  EXPECT_FALSE(a.status->contains("failedSpecHash"));
  EXPECT_TRUE(a.writes.empty());
}

TEST(Versions, ADeadlineOfAnOlderDeploymentSpecIsNotAFailure) {
  // The Deployment controller has not seen generation 3 yet: its condition is about generation 2.
  const json rollout = {{"rollback", "Automatic"}};
  json ms = WithStatus(ModelService("4", "registry.local/serve:1.5", rollout), Serving3(rollout));
  json d = Deployment(ms, 3, 1, 2, 3, kDeadline);
  d["status"]["observedGeneration"] = 2;
  Actions a = Step(ms, d, kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_NE(Reason(*a.status, "Degraded"), "RolloutFailed");
  EXPECT_FALSE(a.status->contains("failedSpecHash"));
}

TEST(Versions, SpecHashSeesOnlyWhatDiffersFromTheDefaults) {
  const auto parse = [](const json& spec) { return api::ParseSpec(spec).spec.Defaulted(); };
  const json minimal = {{"model", "m"}};
  // No default takes part: a release that adds a defaulted field leaves
  // every hash as it was (so no rolled-back version is tried again).
  EXPECT_EQ(SpecHashInput(parse(minimal), "img"), json::parse(R"({"model": "m", "image": "img"})"));
  EXPECT_EQ(SpecHash(parse({{"model", "m"},
                            {"port", 8080},
                            {"strategy", {{"type", "RollingUpdate"}}},
                            {"rollout", {{"timeoutSeconds", 600}, {"rollback", "Manual"}}}}),
                     "img"),
            SpecHash(parse(minimal), "img"))
      << "defaults written out hash as defaults left out";
  EXPECT_EQ(SpecHashInput(parse({{"model", "m"},
                                 {"version", "2"},
                                 {"gpus", 1},
                                 {"strategy", {{"rollingUpdate", {{"maxSurge", 1}}}}},
                                 {"rollout", {{"rollback", "Automatic"}}},
                                 {"autoscaling", {{"maxReplicas", 4}, {"targetQueueLength", 5}}}}),
                          "img"),
            json::parse(R"({"model": "m", "version": "2", "gpus": 1, "strategy": {"rollingUpdate": {"maxSurge": 1}},
                            "rollout": {"rollback": "Automatic"},
                            "autoscaling": {"maxReplicas": 4, "targetQueueLength": 5}, "image": "img"})"));
  // Autoscaling with its defaults only is not no autoscaling; replicas never
  // counts; the resolved image does.
  EXPECT_EQ(SpecHashInput(parse({{"model", "m"}, {"autoscaling", json::object()}}), "img")["autoscaling"],
            json::object());
  EXPECT_EQ(SpecHash(parse({{"model", "m"}, {"replicas", 7}}), "img"), SpecHash(parse(minimal), "img"));
  EXPECT_NE(SpecHash(parse(minimal), "img:2"), SpecHash(parse(minimal), "img"));
}

TEST(Versions, TemplateVersionOfADeployment) {
  const json ms = ModelService("", "registry.local/serve:1.4");
  const json d = Deployment(ms, 1, 2, 2, 2);
  EXPECT_EQ(DeploymentTemplate(d), (TemplateVersion{"", "registry.local/serve:1.4"}));
  EXPECT_FALSE(DeploymentTemplate(json::object()));
  // No version: servingVersion is absent (a blank VERSION in kubectl get ms), the image is kept.
  Actions a = Step(ms, d, kT0);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_FALSE(a.status->contains("servingVersion"));
  EXPECT_EQ((*a.status)["servingImage"], "registry.local/serve:1.4");
}

// Issue 43: a rollback restores the whole pod template that served, as
// kubectl rollout undo does (version 1 with args [--a] served; version 2
// with args [--b] never became ready: the template gets [--a] back), and the
// status says which generation it restored.
TEST(Versions, AutomaticRollbackRestoresTheWholeTemplateThatServed) {
  const json rollout = {{"timeoutSeconds", 30}, {"rollback", "Automatic"}};
  json v1 = ModelService("1", "registry.local/serve:1", rollout);
  v1["spec"]["args"] = {"--a"};
  v1["metadata"]["generation"] = 1;
  Actions served = Step(v1, Deployment(v1, 1, 2, 2, 2), kT0);
  ASSERT_TRUE(served.status.has_value());
  EXPECT_EQ((*served.status)["servingSpec"]["args"], json({"--a"}));
  EXPECT_EQ((*served.status)["servingSpec"]["image"], "registry.local/serve:1");
  EXPECT_FALSE((*served.status)["servingSpec"].contains("replicas"));
  EXPECT_FALSE((*served.status)["servingSpec"].contains("rollout"));
  EXPECT_EQ((*served.status)["servingGeneration"], 1);
  // Converged: nothing more is written.
  EXPECT_EQ(Step(WithStatus(v1, *served.status), Deployment(v1, 1, 2, 2, 2), kT1).NumWrites(), 0u);

  json v2 = ModelService("2", "registry.local/never-ready:2", rollout);
  v2["spec"]["args"] = {"--b"};
  v2["spec"]["replicas"] = 3;  // scaled meanwhile: the count stays the spec's
  v2["metadata"]["generation"] = 2;
  v2 = WithStatus(v2, *served.status);
  Actions first = Step(v2, Deployment(v2, 2, 1, 2, 3, kDeadline), kT1);
  ASSERT_TRUE(first.status.has_value());
  v2 = WithStatus(v2, *first.status);
  Actions second = Step(v2, Deployment(v2, 2, 1, 2, 3, kDeadline), kT1);
  const Action* up = DeploymentUpdate(second);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(Container(up->body)["image"], "registry.local/serve:1");
  EXPECT_EQ(Container(up->body)["args"], json({"--a"}));
  EXPECT_EQ(Container(up->body)["env"][1], json({{"name", "MODEL_VERSION"}, {"value", "1"}}));
  EXPECT_EQ(up->body["spec"]["replicas"], 3);
  ASSERT_TRUE(second.status.has_value());
  EXPECT_EQ(Reason(*second.status, "Degraded"), "RolledBack");
  EXPECT_EQ(Message(*second.status, "Degraded"),
            "the rollout of version 2 made no progress for 30s; rolled back to version 1 (the pod template of "
            "generation 1), which serves; version 2 is not rolled out again until the spec changes");
  EXPECT_EQ((*second.status)["servingGeneration"], 1);
  EXPECT_EQ((*second.status)["servingSpec"], (*served.status)["servingSpec"]);

  // Back on the served template: the rolled-back object is converged.
  json back = Deployment(v1, 3, 3, 3, 3);
  back["spec"]["replicas"] = 3;
  const json settled = WithStatus(v2, *second.status);
  Actions third = Step(settled, back, kT2);
  if (third.status) v2 = WithStatus(v2, *third.status);
  EXPECT_EQ(Step(v2, back, kT2).NumWrites(), 0u);
  EXPECT_EQ(v2["status"]["servingSpec"]["args"], json({"--a"}));
}

// An object that served under a controller that did not record servingSpec:
// no write of its own for it (an upgrade costs no writes); it rides along
// with the next status write there is anyway.
TEST(Versions, TheServingSpecOfAnOlderObjectRidesAlongWithTheNextWrite) {
  json ms = ModelService("3", "registry.local/serve:1.4");
  json status = Serving3();
  status.erase("servingSpec");
  status.erase("servingGeneration");
  ms = WithStatus(ms, status);
  EXPECT_EQ(Step(ms, Deployment(ms, 1, 2, 2, 2), kT1).NumWrites(), 0u);
  Actions a = Step(ms, Deployment(ms, 1, 2, 2, 2), kT1);
  EXPECT_FALSE(a.status.has_value());
  // A status write there is anyway (one pod not ready): recorded with it.
  a = Step(ms, Deployment(ms, 1, 2, 1, 2), kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ((*a.status)["readyReplicas"], 1);
  // (Not rolled out: a pod is not available, so nothing is recorded yet.)
  EXPECT_FALSE(a.status->contains("servingSpec"));
  ms["metadata"]["generation"] = 2;  // a new generation, same template (a label)
  a = Step(ms, Deployment(ms, 1, 2, 2, 2), kT1);
  ASSERT_TRUE(a.status.has_value());
  EXPECT_EQ((*a.status)["observedGeneration"], 2);
  EXPECT_EQ((*a.status)["servingSpec"]["image"], "registry.local/serve:1.4");
  EXPECT_EQ((*a.status)["servingGeneration"], 2);
}

}  // namespace
}  // namespace ms::modelservice
