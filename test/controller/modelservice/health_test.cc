// kstatus' conditions (docs/user/status.md, "Health"): Reconciling while
// the spec's generation is on its way, Stalled when it cannot be served
// without a change, Ready only when it is served; Reconciling and Stalled
// present only while True. The stages of status.md's table, through the
// plan as the executor calls it (versions_test.cc has the rollback).
#include <gtest/gtest.h>

#include "controller/modelservice/plan.h"
#include "controller/modelservice/status.h"
#include "shared/clock/timefmt.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

const WallTime kT0 = std::chrono::system_clock::from_time_t(1700000000);
const WallTime kT1 = kT0 + std::chrono::minutes(5);

json ModelService() {
  return test::ModelService().Finalizer().Defaulted().Version("3", "registry.local/serve:1.4").Spec({{"gpus", 1}});
}

Observed Served(json dep = test::ServedDeployment()) {
  return Observed{std::move(dep), test::ServedService(), std::nullopt, std::nullopt};
}

json StatusOf(const Actions& a) {
  EXPECT_TRUE(a.status.has_value());
  return a.status ? *a.status : json::object();
}

// "True REASON" of the condition, or "absent".
std::string Cond(const json& status, const char* type) {
  const json* c = FindCondition(&status, type);
  if (c == nullptr) return "absent";
  return c->value("status", "") + " " + c->value("reason", "");
}

json Steady() {
  json ms = ModelService();
  ms["status"] = StatusOf(Plan(ms, Served(), Options{}, kT0));
  return ms;
}

TEST(Health, CreatedIsReconcilingNotReady) {
  const json st = StatusOf(Plan(ModelService(), Observed{}, Options{}, kT0));
  EXPECT_EQ(Cond(st, "Reconciling"), "True RollingOut");
  EXPECT_EQ(Cond(st, "Stalled"), "absent");
  EXPECT_EQ(Cond(st, "Ready"), "False ReplicasNotReady");
  EXPECT_EQ(st["observedGeneration"], 1);
  EXPECT_EQ(FindCondition(&st, "Reconciling")->value("message", ""), "0/2 replicas updated, 0/2 replicas ready");
}

TEST(Health, ReadyHasNeitherReconcilingNorStalled) {
  const json ms = Steady();
  const json& st = ms["status"];
  EXPECT_EQ(Cond(st, "Ready"), "True Available");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Stalled"), "absent");
  EXPECT_EQ(st["conditions"].size(), 3u) << "a converged status is what it was before kstatus' conditions";
  EXPECT_EQ(Plan(ms, Served(), Options{}, kT1).NumWrites(), 0u);
}

TEST(Health, PodsNotYetReadyAreReconcilingThenReady) {
  json dep = test::ServedDeployment();
  dep["status"]["readyReplicas"] = 1;
  dep["status"]["availableReplicas"] = 1;
  json ms = Steady();
  const json st = StatusOf(Plan(ms, Served(dep), Options{}, kT1));
  EXPECT_EQ(Cond(st, "Reconciling"), "True RollingOut");
  EXPECT_EQ(Cond(st, "Ready"), "False ReplicasNotReady");
  ms["status"] = st;
  const json back = StatusOf(Plan(ms, Served(), Options{}, kT1 + std::chrono::seconds(10)));
  EXPECT_EQ(Cond(back, "Reconciling"), "absent");
  EXPECT_EQ(Cond(back, "Ready"), "True Available");
}

TEST(Health, RolloutFailedIsStalledAndNotReady) {
  json dep = test::ServedDeployment();
  dep["status"]["conditions"][1] = {
      {"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}, {"message", "too slow"}};
  dep["status"]["readyReplicas"] = 1;
  const json st = StatusOf(Plan(Steady(), Served(dep), Options{}, kT1));
  EXPECT_EQ(Cond(st, "Stalled"), "True RolloutFailed");
  EXPECT_EQ(FindCondition(&st, "Stalled")->value("message", ""), "too slow");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Ready"), "False RolloutFailed");
  EXPECT_EQ(Cond(st, "Degraded"), "True RolloutFailed");
}

TEST(Health, NameConflictIsStalled) {
  json dep = test::ServedDeployment();
  dep["metadata"].erase("ownerReferences");
  const json st = StatusOf(Plan(ModelService(), Served(dep), Options{}, kT0));
  EXPECT_EQ(st["phase"], "Failed");
  EXPECT_EQ(Cond(st, "Stalled"), "True NameConflict");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Ready"), "False NameConflict");
}

TEST(Health, CreateFailedIsStalled) {
  Observed obs;
  obs.failure = WriteFailure{"CreateFailed", "create Deployment ml/bert: 422 Invalid: bad"};
  const json st = StatusOf(Plan(ModelService(), obs, Options{}, kT0));
  EXPECT_EQ(Cond(st, "Stalled"), "True CreateFailed");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
}

// GPUs no node offers: Stalled with the scheduler's words, no write while
// it stays so, and Ready with neither condition once a node is added.
TEST(Health, UnschedulableIsStalledUntilANodeIsAdded) {
  json dep = test::ServedDeployment();
  dep["spec"]["replicas"] = 3;
  dep["status"] = {{"observedGeneration", 1},
                   {"replicas", 3},
                   {"updatedReplicas", 3},
                   {"readyReplicas", 2},
                   {"availableReplicas", 2}};
  json ms = Steady();
  ms["spec"]["replicas"] = 3;
  Observed obs = Served(dep);
  obs.pods = PodSummary{
      .pods = 3, .unschedulable = 1, .scheduler_message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu."};
  const json st = StatusOf(Plan(ms, obs, Options{}, kT1));
  EXPECT_EQ(Cond(st, "Stalled"), "True Unschedulable");
  EXPECT_EQ(FindCondition(&st, "Stalled")->value("message", ""),
            "1/3 pods cannot be scheduled: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Ready"), "False Unschedulable");
  EXPECT_EQ(st["readySummary"], "2/3") << "kubectl get ms' READY, as a Deployment's";
  ms["status"] = st;
  EXPECT_EQ(Plan(ms, obs, Options{}, kT1 + std::chrono::seconds(30)).NumWrites(), 0u);

  dep["status"]["readyReplicas"] = 3;
  dep["status"]["availableReplicas"] = 3;
  obs.deployment = dep;
  obs.pods = PodSummary{.pods = 3};
  const json placed = StatusOf(Plan(ms, obs, Options{}, kT1 + std::chrono::seconds(60)));
  EXPECT_EQ(Cond(placed, "Stalled"), "absent");
  EXPECT_EQ(Cond(placed, "Reconciling"), "absent");
  EXPECT_EQ(Cond(placed, "Ready"), "True Available");
  EXPECT_EQ(placed["readySummary"], "3/3");
}

TEST(Health, AnImageThatCannotBePulledIsStalled) {
  json dep = test::ServedDeployment();
  dep["status"]["readyReplicas"] = 1;
  dep["status"]["availableReplicas"] = 1;
  Observed obs = Served(dep);
  obs.pods = PodSummary{.pods = 2, .waiting = 1, .waiting_reason = "ImagePullBackOff", .waiting_container = "model"};
  const json st = StatusOf(Plan(Steady(), obs, Options{}, kT1));
  EXPECT_EQ(Cond(st, "Stalled"), "True ImagePullBackOff");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Ready"), "False ImagePullBackOff");
}

// The autoscaler cannot read Prometheus: Degraded, but the pods serve the
// spec at the replicas kept: Ready, neither Reconciling nor Stalled.
TEST(Health, MetricsUnavailableIsReadyAndDegraded) {
  json ms = Steady();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  Observed obs = Served();
  obs.recommendation = autoscale::Recommendation{false, "MetricsUnavailable", "prometheus: connection refused", 0, 0};
  const json st = StatusOf(Plan(ms, obs, Options{}, kT1));
  EXPECT_EQ(Cond(st, "Degraded"), "True MetricsUnavailable");
  EXPECT_EQ(Cond(st, "Ready"), "True Available");
  EXPECT_EQ(Cond(st, "Reconciling"), "absent");
  EXPECT_EQ(Cond(st, "Stalled"), "absent");
}

// A Stalled that clears and comes back gets a new lastTransitionTime; one
// that holds keeps it.
TEST(Health, StalledKeepsItsTransitionTimeWhileItHolds) {
  json dep = test::ServedDeployment();
  dep["status"]["conditions"][1] = {
      {"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}, {"message", "too slow"}};
  json ms = Steady();
  ms["status"] = StatusOf(Plan(ms, Served(dep), Options{}, kT1));
  const Actions again = Plan(ms, Served(dep), Options{}, kT1 + std::chrono::minutes(1));
  EXPECT_EQ(again.NumWrites(), 0u);
  EXPECT_EQ(FindCondition(&ms["status"], "Stalled")->value("lastTransitionTime", ""), clock::FormatTime(kT1));
}

}  // namespace
}  // namespace ms::modelservice
