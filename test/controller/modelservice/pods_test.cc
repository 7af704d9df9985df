#include "controller/modelservice/pods.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ms::modelservice {
namespace {

using nlohmann::json;

const char* kSchedulerMessage =
    "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
    "helpful for scheduling.";

// A pod of ModelService ml/llm as the API server sends it in a watch event.
json WatchedPod(const std::string& name) {
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "", "generateName": "llm-6d4cf56db6-", "namespace": "ml", "uid": "p1",
      "resourceVersion": "77", "creationTimestamp": "2026-11-30T17:00:00Z",
      "labels": {"app.kubernetes.io/instance": "llm", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice", "pod-template-hash": "6d4cf56db6"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "llm-6d4cf56db6", "uid": "rs1",
                           "controller": true, "blockOwnerDeletion": true}],
      "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"containers": [{"name": "model", "image": "registry.local/serve:1.4",
                             "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
             "schedulerName": "default-scheduler"},
    "status": {"phase": "Pending", "qosClass": "BestEffort"}
  })");
  pod["metadata"]["name"] = name;
  return pod;
}

json Unschedulable(json pod, const std::string& message = kSchedulerMessage) {
  pod["status"]["conditions"] = json::array({{{"type", "PodScheduled"},
                                              {"status", "False"},
                                              {"reason", "Unschedulable"},
                                              {"message", message},
                                              {"lastProbeTime", nullptr},
                                              {"lastTransitionTime", "2026-11-30T17:00:01Z"}}});
  return pod;
}

json RunningReady(json pod) {
  pod["spec"]["nodeName"] = "kwok-gpu-1";
  pod["status"] = json::parse(R"({
    "phase": "Running", "podIP": "10.0.0.5", "startTime": "2026-11-30T17:00:01Z",
    "conditions": [
      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T17:00:01Z"},
      {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-30T17:00:01Z"},
      {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-30T17:00:02Z"},
      {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-30T17:00:02Z"}],
    "containerStatuses": [{"name": "model", "ready": true, "restartCount": 0, "image": "registry.local/serve:1.4",
                           "state": {"running": {"startedAt": "2026-11-30T17:00:02Z"}}}]
  })");
  return pod;
}

json Waiting(json pod, const std::string& reason, const std::string& message) {
  pod["spec"]["nodeName"] = "kwok-gpu-1";
  pod["status"]["conditions"] = json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
  pod["status"]["containerStatuses"] = json::array(
      {{{"name", "model"}, {"ready", false}, {"state", {{"waiting", {{"reason", reason}, {"message", message}}}}}}});
  return pod;
}

// A container that exited with `code` and was restarted `restarts` times;
// `running`: between two crashes (state running, not ready yet), else
// waiting in CrashLoopBackOff.
json Crashing(json pod, int restarts, int code = 1, bool running = false, bool ready = false) {
  pod["spec"]["nodeName"] = "kwok-gpu-1";
  pod["status"]["phase"] = "Running";
  pod["status"]["conditions"] = json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
  json state = running ? json{{"running", {{"startedAt", "2026-11-30T17:03:0" + std::to_string(restarts) + "Z"}}}}
                       : json{{"waiting",
                               {{"reason", "CrashLoopBackOff"},
                                {"message", "back-off " + std::to_string(10 << restarts) +
                                                "s restarting failed container=model pod=llm-a_ml(p1)"}}}};
  pod["status"]["containerStatuses"] = json::array({{{"name", "model"},
                                                     {"ready", ready},
                                                     {"restartCount", restarts},
                                                     {"state", std::move(state)},
                                                     {"lastState",
                                                      {{"terminated",
                                                        {{"exitCode", code},
                                                         {"reason", code == 0 ? "Completed" : "Error"},
                                                         {"finishedAt", "2026-11-30T17:02:00Z"}}}}}}});
  return pod;
}

TEST(CachedPod, KeepsOnlyWhatTheStatusReads) {
  EXPECT_EQ(CachedPod(Unschedulable(WatchedPod("llm-6d4cf56db6-abcde"))), json::parse(R"({
    "metadata": {"name": "llm-6d4cf56db6-abcde", "namespace": "ml",
                 "labels": {"app.kubernetes.io/instance": "llm"}},
    "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                               "message": ")" + std::string(kSchedulerMessage) + R"("}]}
  })"));
}

TEST(CachedPod, AScheduledRunningReadyPodIsItsNameOnly) {
  // Created, scheduled, started and Ready: the projection never changes, so
  // these steps re-queue nothing.
  const json created = CachedPod(WatchedPod("llm-a"));
  EXPECT_EQ(created, json::parse(R"({"metadata": {"name": "llm-a", "namespace": "ml",
                                                  "labels": {"app.kubernetes.io/instance": "llm"}}})"));
  EXPECT_EQ(CachedPod(RunningReady(WatchedPod("llm-a"))), created);
}

TEST(CachedPod, ImagePullRetriesGiveOneProjection) {
  const json pull = CachedPod(Waiting(WatchedPod("llm-a"), "ErrImagePull", "rpc error: pull access denied"));
  const json backoff =
      CachedPod(Waiting(WatchedPod("llm-a"), "ImagePullBackOff", "Back-off pulling image \"registry.local/x\""));
  EXPECT_EQ(pull, backoff);
  EXPECT_EQ(backoff["status"]["containerStatuses"],
            json::parse(R"([{"name": "model", "state": {"waiting": {"reason": "ImagePullBackOff"}}}])"));
  // Passing states are not kept.
  EXPECT_FALSE(CachedPod(Waiting(WatchedPod("llm-a"), "ContainerCreating", "")).contains("status"));
  EXPECT_FALSE(CachedPod(Waiting(WatchedPod("llm-a"), "CrashLoopBackOff", "back-off 40s")).contains("status"));
}

TEST(CachedPod, ACrashLoopingContainerIsOneProjectionAcrossRestarts) {
  const json waiting = CachedPod(Crashing(WatchedPod("llm-a"), 3));
  EXPECT_EQ(waiting["status"]["containerStatuses"],
            json::parse(R"([{"name": "model", "crashLooping": {"exitCode": 1, "reason": "Error"}}])"));
  // Restarted once more, running again until its next crash: the same.
  EXPECT_EQ(CachedPod(Crashing(WatchedPod("llm-a"), 4, 1, /*running=*/true)), waiting);
  EXPECT_EQ(CachedPod(Crashing(WatchedPod("llm-a"), 9)), waiting);
  // Not (yet) crash-looping: fewer restarts, Ready again, or restarted after
  // exiting with 0.
  const json plain = CachedPod(WatchedPod("llm-a"));
  EXPECT_EQ(CachedPod(Crashing(WatchedPod("llm-a"), kCrashLoopRestarts - 1)), plain);
  EXPECT_EQ(CachedPod(Crashing(WatchedPod("llm-a"), 5, 1, true, /*ready=*/true)), plain);
  EXPECT_EQ(CachedPod(Crashing(WatchedPod("llm-a"), 5, 0)), plain);
  // OOMKilled is kept as the reason.
  json oom = Crashing(WatchedPod("llm-a"), 3, 137);
  oom["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"] = "OOMKilled";
  EXPECT_EQ(CachedPod(oom)["status"]["containerStatuses"][0]["crashLooping"],
            json::parse(R"({"exitCode": 137, "reason": "OOMKilled"})"));
}

TEST(CachedPod, TerminalPhaseAndDeletionKept) {
  json pod = RunningReady(WatchedPod("llm-a"));
  pod["status"]["phase"] = "Failed";
  pod["metadata"]["deletionTimestamp"] = "2026-11-30T17:05:00Z";
  const json c = CachedPod(pod);
  EXPECT_EQ(c["status"], json::parse(R"({"phase": "Failed"})"));
  EXPECT_EQ(c["metadata"]["deletionTimestamp"], "2026-11-30T17:05:00Z");
}

TEST(CachedPod, MalformedPodsDoNotThrow) {
  for (const char* text : {R"(null)", R"({"metadata": 3})", R"({"status": {"conditions": "x"}})",
                           R"({"status": {"containerStatuses": [1, {"state": "x"}]}})"}) {
    EXPECT_NO_THROW(CachedPod(json::parse(text))) << text;
  }
}

std::map<std::string, json> Pods(const std::vector<json>& pods) {
  std::map<std::string, json> out;
  for (const json& p : pods) out[p["metadata"]["name"].get<std::string>()] = CachedPod(p);
  return out;
}

TEST(PodProblem, OneOfThreePodsUnschedulable) {
  const PodSummary s = SummarizePods(
      Pods({RunningReady(WatchedPod("llm-a")), RunningReady(WatchedPod("llm-b")), Unschedulable(WatchedPod("llm-c"))}));
  EXPECT_EQ(s.pods, 3);
  EXPECT_EQ(s.unschedulable, 1);
  const auto p = FindPodProblem(s);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "Unschedulable");
  EXPECT_EQ(p->message, "1/3 pods cannot be scheduled: " + std::string(kSchedulerMessage));
}

TEST(PodProblem, FirstPodByNameGivesTheMessageAndUnschedulableComesFirst) {
  const PodSummary s =
      SummarizePods(Pods({Unschedulable(WatchedPod("llm-b"), "b says"), Unschedulable(WatchedPod("llm-a"), "a says"),
                          Waiting(WatchedPod("llm-c"), "InvalidImageName", "")}));
  EXPECT_EQ(s.unschedulable, 2);
  EXPECT_EQ(s.waiting, 1);
  EXPECT_EQ(FindPodProblem(s)->message, "2/3 pods cannot be scheduled: a says");
}

TEST(PodProblem, ContainerWaiting) {
  const auto p = FindPodProblem(
      SummarizePods(Pods({RunningReady(WatchedPod("llm-a")), Waiting(WatchedPod("llm-b"), "ErrImagePull", "denied")})));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "ImagePullBackOff");
  EXPECT_EQ(p->message, "1/2 pods cannot start: container model is waiting (ImagePullBackOff)");
}

TEST(PodProblem, CrashLoopingAfterWhatCannotStart) {
  auto p = FindPodProblem(SummarizePods(Pods({RunningReady(WatchedPod("llm-a")), Crashing(WatchedPod("llm-c"), 3),
                                              Crashing(WatchedPod("llm-b"), 5, 2, true)})));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "CrashLoopBackOff");
  EXPECT_EQ(p->message, "2/3 pods are crash-looping: container model keeps exiting (last exit code 2, Error)");
  // An image that cannot be pulled is said first; each pod counts once.
  p = FindPodProblem(SummarizePods(
      Pods({Crashing(WatchedPod("llm-a"), 3), Waiting(WatchedPod("llm-b"), "ImagePullBackOff", "denied")})));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "ImagePullBackOff");
  EXPECT_EQ(p->message, "1/2 pods cannot start: container model is waiting (ImagePullBackOff)");
  const PodSummary s = SummarizePods(Pods({Crashing(WatchedPod("llm-a"), 3)}));
  EXPECT_EQ(s.crash_looping, 1);
  EXPECT_EQ(s.waiting, 0);
}

TEST(PodProblem, NoneWhenAllScheduledAndTerminatingPodsNotCounted) {
  EXPECT_FALSE(FindPodProblem(SummarizePods(Pods({RunningReady(WatchedPod("llm-a"))}))));
  json leaving = Unschedulable(WatchedPod("llm-b"));
  leaving["metadata"]["deletionTimestamp"] = "2026-11-30T17:05:00Z";
  const PodSummary s = SummarizePods(Pods({RunningReady(WatchedPod("llm-a")), leaving}));
  EXPECT_EQ(s.pods, 1);
  EXPECT_FALSE(FindPodProblem(s));
}

// The pod informer's handler, driven as the informer drives it.
struct IndexFixture : ::testing::Test {
  PodIndex index;
  std::vector<std::string> queued;
  runtime::EventHandler h = index.Handler([this](const std::string& key) { queued.push_back(key); });

  void Add(const json& pod) { h.on_add(CachedPod(pod)); }
  void Update(const json& before, const json& after) { h.on_update(CachedPod(before), CachedPod(after)); }
  void Delete(const json& pod) { h.on_delete(CachedPod(pod)); }
};

TEST_F(IndexFixture, QueuesTheModelServiceOnlyWhenWhatItsStatusSaysChanges) {
  const json a = WatchedPod("llm-a"), b = WatchedPod("llm-b"), c = WatchedPod("llm-c");
  Add(a);
  Add(b);
  Add(c);
  Update(a, RunningReady(a));
  Update(b, RunningReady(b));
  EXPECT_TRUE(queued.empty()) << "pods created and started as usual re-queue nothing";
  EXPECT_EQ(index.Summary("ml/llm").pods, 3);

  Update(c, Unschedulable(c));
  EXPECT_EQ(queued, std::vector<std::string>{"ml/llm"});
  EXPECT_EQ(FindPodProblem(index.Summary("ml/llm"))->reason, "Unschedulable");
  // The scheduler retries and writes the same condition: nothing new.
  Update(Unschedulable(c), Unschedulable(c));
  EXPECT_EQ(queued.size(), 1u);

  // The fleet grows: the pod is scheduled and the problem is gone.
  Update(Unschedulable(c), RunningReady(c));
  EXPECT_EQ(queued.size(), 2u);
  EXPECT_FALSE(FindPodProblem(index.Summary("ml/llm")));

  // Another ModelService's pods are filed under their own key.
  json other = WatchedPod("big-x");
  other["metadata"]["labels"]["app.kubernetes.io/instance"] = "big";
  Add(Unschedulable(other));
  EXPECT_EQ(queued.back(), "ml/big");
  EXPECT_EQ(index.Summary("ml/llm").unschedulable, 0);
  EXPECT_EQ(index.Summary("ml/big").unschedulable, 1);

  Delete(Unschedulable(other));
  EXPECT_EQ(queued.back(), "ml/big");
  EXPECT_EQ(index.Summary("ml/big").pods, 0);
  for (const json& p : {a, b, c}) Delete(p);
  EXPECT_EQ(index.size(), 0u);
}

TEST_F(IndexFixture, PodsWithoutTheInstanceLabelAreIgnored) {
  json pod = Unschedulable(WatchedPod("x"));
  pod["metadata"]["labels"].erase("app.kubernetes.io/instance");
  Add(pod);
  EXPECT_TRUE(queued.empty());
  EXPECT_EQ(index.size(), 0u);
}

}  // namespace
}  // namespace ms::modelservice
