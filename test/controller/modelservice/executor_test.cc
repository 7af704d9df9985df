#include "controller/modelservice/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/modelservice/handlers.h"
#include "controller/modelservice/ownership.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/builder.h"
#include "controller/runtime/controller.h"
#include "test/controller/modelservice/fakes.h"
#include "test/support/fake_clock.h"
#include "test/support/fake_source.h"
#include "test/support/objects.h"
#include "test/support/unread_metrics.h"
#include "test/support/verb_client.h"

namespace ms::modelservice {
namespace {

using Outcome = runtime::Result::Outcome;
using runtime::ReconcileMetrics;
using runtime::WorkQueue;
using runtime::WorkQueueMetrics;

using nlohmann::json;

using fakes::FakeApi;
using fakes::FakeRecorder;
using fakes::StripQuery;

// Called by several workers at once in the tests that start them: the
// counters are atomic and `forgotten` is written under a lock (the tests
// read it after the workers are joined).
class FakeAutoscaler final : public autoscale::Autoscaler {
 public:
  autoscale::Recommendation Recommend(const std::string&, const std::string&, const autoscale::Spec&,
                                      int current) override {
    calls++;
    last_current = current;
    return rec;
  }
  void Forget(const std::string& ns, const std::string& name) override {
    std::lock_guard<std::mutex> g(mu_);
    forgotten.insert(ns + "/" + name);
  }
  autoscale::GpuUtilization Gpu(const std::string&, const std::string&) override {
    gpu_calls++;
    return gpu;
  }
  void ForgetGpu(const std::string&, const std::string&) override { gpu_forgets++; }
  autoscale::Recommendation rec{true, "", "", 0, 3};
  autoscale::GpuUtilization gpu;
  std::atomic<int> calls{0}, last_current{-1}, gpu_calls{0}, gpu_forgets{0};
  std::set<std::string> forgotten;

 private:
  std::mutex mu_;
};

const runtime::Request kBert{"ml", "bert"};
const std::string kMsPath = "/apis/modelops.dev/v1/namespaces/ml/modelservices/bert";
const std::string kDepPath = "/apis/apps/v1/namespaces/ml/deployments/bert";
const std::string kSvcPath = "/api/v1/namespaces/ml/services/bert";

json NewModelService() { return test::ModelService().Defaulted(); }

struct Fixture : ::testing::Test {
  FakeClock clock;
  FakeApi api;
  FakeRecorder recorder;
  FakeAutoscaler autoscaler;
  Expectations expectations{clock};
  metrics::Registry registry;
  ModelServiceMetrics metrics{registry};
  Executor exec{api, recorder, autoscaler, expectations, clock, ExecutorOptions{}, metrics};
};

TEST_F(Fixture, FirstReconcileCreatesEverythingThenUnchangedIssuesZeroWrites) {
  api.Put(kMsPath, NewModelService());
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  auto writes = api.WritesList();
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[0].method, "PATCH");  // finalizer
  EXPECT_EQ(writes[1].method, "POST");
  EXPECT_EQ(writes[1].path, "/apis/apps/v1/namespaces/ml/deployments");
  EXPECT_EQ(writes[2].method, "POST");
  EXPECT_EQ(writes[3].method, "PUT");
  EXPECT_EQ(writes[3].path, kMsPath + "/status");
  EXPECT_EQ(api.objects[kMsPath]["metadata"]["finalizers"], json::array({"modelops.dev/cleanup"}));
  // The status is computed with the Deployment just created: Progressing at
  // once (one status write, not Pending then Progressing).
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Progressing");
  EXPECT_TRUE(recorder.Has("Created"));
  EXPECT_EQ(r.desired_replicas, 2);

  // The Deployment controller rolls it out.
  api.objects[kDepPath]["status"] = {{"observedGeneration", 1},
                                     {"replicas", 2},
                                     {"updatedReplicas", 2},
                                     {"readyReplicas", 2},
                                     {"availableReplicas", 2}};
  api.calls.clear();
  r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess);
  ASSERT_EQ(api.Writes(), 1);
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Ready");

  api.calls.clear();
  recorder.events.clear();
  r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess);
  EXPECT_EQ(api.Writes(), 0) << "an unchanged world must cause zero writes";
  EXPECT_EQ(r.writes, 0);
  EXPECT_TRUE(recorder.events.empty());
}

TEST_F(Fixture, StatusConflictRereadsAndRetriesWithoutClobbering) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kDepPath]["status"] = {{"observedGeneration", 1},
                                     {"replicas", 2},
                                     {"updatedReplicas", 2},
                                     {"readyReplicas", 2},
                                     {"availableReplicas", 2}};
  // Someone edits the ModelService (new label, new generation) just before
  // our status write lands.
  bool edited = false;
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "PUT" && p == kMsPath + "/status" && !edited) {
      edited = true;
      api.ExternalEdit(kMsPath, [](json& o) {
        o["metadata"]["labels"]["team"] = "search";
        o["metadata"]["generation"] = 2;
      });
      return kube::Result{409, json(), kube::Status{409, "Conflict", "the object has been modified"}};
    }
    return std::nullopt;
  };
  api.calls.clear();
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_TRUE(edited);
  int status_puts = 0, gets_of_ms = 0;
  for (const auto& c : api.calls) {
    status_puts += c.method == "PUT" && c.path == kMsPath + "/status";
    gets_of_ms += c.method == "GET" && c.path == kMsPath;
  }
  EXPECT_EQ(status_puts, 2);
  EXPECT_EQ(gets_of_ms, 2) << "re-read after the conflict";
  const json& ms = api.objects[kMsPath];
  EXPECT_EQ(ms["metadata"]["labels"]["team"], "search") << "the newer object was not overwritten";
  EXPECT_EQ(ms["status"]["observedGeneration"], 2) << "status computed from the re-read object";
  EXPECT_EQ(ms["status"]["phase"], "Ready");
}

TEST_F(Fixture, DeploymentUpdateConflictRereads) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kDepPath]["spec"]["replicas"] = 9;  // hand edit
  bool once = false;
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "PUT" && p == kDepPath && !once) {
      once = true;
      api.ExternalEdit(kDepPath, [](json& o) { o["metadata"]["annotations"]["x"] = "y"; });
      return kube::Result{409, json(), kube::Status{409, "Conflict", "modified"}};
    }
    return std::nullopt;
  };
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 2);
  EXPECT_EQ(api.objects[kDepPath]["metadata"]["annotations"]["x"], "y");
  EXPECT_TRUE(recorder.Has("Scaled"));
}

TEST_F(Fixture, FinalizerFlowDeletesOwnedObjectsThenRemovesFinalizer) {
  json ms = NewModelService();
  ms["metadata"]["finalizers"] = json::array({"modelops.dev/cleanup"});
  api.Put(kMsPath, ms);
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  ASSERT_TRUE(api.objects.count(kDepPath));
  ASSERT_TRUE(api.objects.count(kSvcPath));
  // The owned objects point back at the ModelService.
  EXPECT_EQ(OwnerKey(api.objects[kDepPath]), "ml/bert");

  api.objects[kMsPath]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  api.calls.clear();
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  auto writes = api.WritesList();
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[0].method, "DELETE");
  EXPECT_EQ(StripQuery(writes[0].path), kDepPath);
  EXPECT_EQ(writes[1].method, "DELETE");
  EXPECT_EQ(StripQuery(writes[1].path), kSvcPath);
  EXPECT_EQ(writes[2].method, "PATCH");
  EXPECT_FALSE(api.objects.count(kMsPath)) << "finalizer removed, object gone";
  EXPECT_TRUE(recorder.Has("Deleted"));

  r = exec.Run(kBert);
  EXPECT_TRUE(r.gone);
  EXPECT_EQ(autoscaler.forgotten.count("ml/bert"), 1u);
}

// Each delete names the object it was decided on (uid and resourceVersion):
// when that object changed meanwhile, here its ownerReference taken off by
// the garbage collector orphaning it, the API server answers 409 and the
// executor reads and decides again instead of deleting what is not its own.
TEST_F(Fixture, DeletesCarryPreconditionsAndAConflictIsDecidedAgain) {
  json ms = NewModelService();
  ms["metadata"]["finalizers"] = json::array({"modelops.dev/cleanup"});
  api.Put(kMsPath, ms);
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  const json dep_uid = api.objects[kDepPath]["metadata"]["uid"];
  const json svc = api.objects[kSvcPath];
  api.objects[kMsPath]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  bool orphaned = false;
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "DELETE" && StripQuery(p) == kDepPath && !orphaned) {
      orphaned = true;  // between our read and our delete
      api.ExternalEdit(kDepPath, [](json& o) { o["metadata"].erase("ownerReferences"); });
    }
    return std::nullopt;
  };
  api.calls.clear();
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  ASSERT_TRUE(orphaned);
  EXPECT_TRUE(api.objects.count(kDepPath)) << "the orphaned Deployment is not ours any more: kept";
  EXPECT_FALSE(api.objects.count(kSvcPath));
  EXPECT_FALSE(api.objects.count(kMsPath)) << "finalizer removed once nothing of ours is left";
  ASSERT_GE(api.deletes.size(), 2u);
  EXPECT_EQ(api.deletes[0]["preconditions"]["uid"], dep_uid);
  EXPECT_EQ(api.deletes[0]["propagationPolicy"], "Background");
  const json service_delete = api.deletes.back();
  EXPECT_EQ(service_delete["preconditions"],
            json({{"uid", svc["metadata"]["uid"]}, {"resourceVersion", svc["metadata"]["resourceVersion"]}}));
  int deployment_deletes = 0;
  for (const auto& c : api.calls) deployment_deletes += c.method == "DELETE" && StripQuery(c.path) == kDepPath;
  EXPECT_EQ(deployment_deletes, 1) << "refused once, then not ours: never sent again";
}

// kubectl delete --cascade=orphan: the API server adds the "orphan"
// finalizer and the garbage collector takes the ownerReferences off; the
// controller deletes nothing and lets the ModelService go.
TEST_F(Fixture, DeletionWithPropagationOrphanDeletesNothing) {
  json ms = NewModelService();
  ms["metadata"]["finalizers"] = json::array({"modelops.dev/cleanup"});
  api.Put(kMsPath, ms);
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kMsPath]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  api.objects[kMsPath]["metadata"]["finalizers"] = json::array({"orphan", "modelops.dev/cleanup"});
  api.calls.clear();
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  auto writes = api.WritesList();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].method, "PATCH");
  EXPECT_EQ(api.objects[kMsPath]["metadata"]["finalizers"], json::array({"orphan"})) << "the GC's finalizer stays";
  EXPECT_TRUE(api.objects.count(kDepPath));
  EXPECT_TRUE(api.objects.count(kSvcPath));
  EXPECT_FALSE(recorder.Has("Deleted"));
}

// The reproduction of issue 13: an owned Deployment loses its managed-by
// label (so the label-selected cache no longer shows it), is scaled by hand,
// and the Service is deleted.
TEST_F(Fixture, OwnedDeploymentWithoutOurLabelIsRecognisedAndRepaired) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kDepPath]["metadata"]["labels"].erase("app.kubernetes.io/managed-by");
  api.objects[kDepPath]["spec"]["replicas"] = 7;
  api.objects.erase(kSvcPath);
  // The caches: the ModelService as written, no Deployment (label gone), no Service.
  CachedReads cache;
  cache.model_service = [&](const std::string&) -> std::optional<json> { return api.objects[kMsPath]; };
  cache.deployment = [](const std::string&) -> std::optional<json> { return std::nullopt; };
  cache.service = [](const std::string&) -> std::optional<json> { return std::nullopt; };
  Expectations cached_expectations{clock};  // its own, as a new process would have
  Executor cached(api, recorder, autoscaler, cached_expectations, clock, ExecutorOptions{}, metrics, nullptr, cache);
  api.calls.clear();
  Report r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  const json& dep = api.objects[kDepPath];
  EXPECT_EQ(dep["metadata"]["labels"]["app.kubernetes.io/managed-by"], "modelservice-controller") << "label restored";
  EXPECT_EQ(dep["spec"]["replicas"], 2) << "replicas back";
  EXPECT_TRUE(api.objects.count(kSvcPath)) << "Service recreated";
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Progressing");
  // One AlreadyExists, then the Deployment read through the API and updated.
  std::vector<std::string> writes;
  for (const auto& c : api.WritesList()) writes.push_back(c.method + " " + StripQuery(c.path));
  EXPECT_EQ(writes, (std::vector<std::string>{"POST /apis/apps/v1/namespaces/ml/deployments", "PUT " + kDepPath,
                                              "POST /api/v1/namespaces/ml/services"}));
  EXPECT_TRUE(recorder.Has("Scaled"));
}

TEST_F(Fixture, SameNamedDeploymentNotOursIsReportedNeverTouched) {
  api.Put(kMsPath, NewModelService());
  // A Deployment the user made earlier: no ownerReference, no labels of ours.
  api.Put(kDepPath, json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "bert", "namespace": "ml", "uid": "theirs", "labels": {"app": "bert"}},
      "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})"));
  const json before = api.objects[kDepPath];
  CachedReads cache;  // the label-selected caches do not show it
  cache.model_service = [&](const std::string&) -> std::optional<json> { return api.objects[kMsPath]; };
  cache.deployment = [](const std::string&) -> std::optional<json> { return std::nullopt; };
  cache.service = [](const std::string&) -> std::optional<json> { return std::nullopt; };
  Expectations cached_expectations{clock};  // its own, as a new process would have
  Executor cached(api, recorder, autoscaler, cached_expectations, clock, ExecutorOptions{}, metrics, nullptr, cache);
  Report r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kRequeueAfter) << r.result.error;
  EXPECT_EQ(r.result.after, cached.options().name_conflict_recheck);
  EXPECT_EQ(api.objects[kDepPath], before) << "not adopted, not changed";
  EXPECT_FALSE(api.objects.count(kSvcPath)) << "nothing created while the name is taken";
  const json& status = api.objects[kMsPath]["status"];
  EXPECT_EQ(status["phase"], "Failed");
  const json& ready = status["conditions"][0];
  EXPECT_EQ(ready["reason"], "NameConflict");
  EXPECT_EQ(ready["message"],
            "a Deployment named \"bert\" already exists in namespace \"ml\" and is not controlled by this "
            "ModelService, which leaves it alone: delete or rename it, or give the ModelService another name");
  ASSERT_TRUE(recorder.Has("NameConflict"));
  EXPECT_EQ(recorder.events.back().type, "Warning");

  // Looking again (after name_conflict_recheck): read through the API (no
  // create attempt), nothing written, no second Event: no hot loop.
  api.calls.clear();
  recorder.events.clear();
  r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kRequeueAfter);
  EXPECT_EQ(api.Writes(), 0);
  EXPECT_TRUE(recorder.events.empty());

  // The user deletes their Deployment: the next look creates ours.
  api.objects.erase(kDepPath);
  r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_EQ(ControllerUid(api.objects[kDepPath]), "uid-1");
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Progressing");
}

TEST_F(Fixture, FinalizerStaysWhileAnOwnedObjectTheCacheMissesStillExists) {
  json ms = NewModelService();
  ms["metadata"]["finalizers"] = json::array({"modelops.dev/cleanup"});
  api.Put(kMsPath, ms);
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kDepPath]["metadata"]["labels"] = json::object();  // invisible to the label-selected cache
  api.objects[kMsPath]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  // Deleting the Deployment leaves it terminating (a foreground finalizer).
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "DELETE" && StripQuery(p) == kDepPath) {
      api.objects[kDepPath]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:01Z";
      return kube::Result{200, json::object(), std::nullopt};
    }
    return std::nullopt;
  };
  CachedReads cache;
  cache.model_service = [&](const std::string&) -> std::optional<json> { return api.objects[kMsPath]; };
  cache.deployment = [](const std::string&) -> std::optional<json> { return std::nullopt; };
  cache.service = [&](const std::string&) -> std::optional<json> { return api.objects[kSvcPath]; };
  cache.hpa = [&](const std::string&) -> std::optional<json> { return std::nullopt; };
  Expectations cached_expectations{clock};  // its own, as a new process would have
  Executor cached(api, recorder, autoscaler, cached_expectations, clock, ExecutorOptions{}, metrics, nullptr, cache);
  Report r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kRequeueAfter) << r.result.error;
  ASSERT_TRUE(api.objects.count(kMsPath));
  EXPECT_EQ(api.objects[kMsPath]["metadata"]["finalizers"], json::array({"modelops.dev/cleanup"}))
      << "the Deployment still exists";
  EXPECT_FALSE(api.objects.count(kSvcPath));

  // Really gone: the finalizer goes.
  api.hook = nullptr;
  api.objects.erase(kDepPath);
  r = cached.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_FALSE(api.objects.count(kMsPath));
}

TEST_F(Fixture, InvalidOnCreateReportsFailed) {
  api.Put(kMsPath, NewModelService());
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "POST" && p == "/apis/apps/v1/namespaces/ml/deployments") {
      return kube::Result{422, json(), kube::Status{422, "Invalid", "spec.template: bad"}};
    }
    return std::nullopt;
  };
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kError);
  EXPECT_NE(r.result.error.find("422"), std::string::npos);
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Failed");
  EXPECT_TRUE(recorder.Has("CreateFailed"));
}

TEST_F(Fixture, UpdateNotFoundRequeues) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  api.objects[kDepPath]["spec"]["replicas"] = 9;
  api.hook = [&](const std::string& m, const std::string& p, const json&) -> std::optional<kube::Result> {
    if (m == "PUT" && p == kDepPath) return kube::Result{404, json(), kube::Status{404, "NotFound", "gone"}};
    return std::nullopt;
  };
  EXPECT_EQ(exec.Run(kBert).result.outcome, Outcome::kRequeue);
}

TEST_F(Fixture, AutoscalerAskedWithCurrentReplicasAndApplied) {
  json ms = NewModelService();
  ms["spec"]["autoscaling"] = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  api.Put(kMsPath, ms);
  autoscaler.rec = {true, "", "", 12, 3};
  Report r = exec.Run(kBert);
  ASSERT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_TRUE(r.autoscaled);
  EXPECT_EQ(autoscaler.last_current, 2);
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 3);

  autoscaler.rec = {false, "MetricsUnavailable", "connection refused", 0, 0};
  r = exec.Run(kBert);
  EXPECT_EQ(autoscaler.last_current, 3);
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 3) << "kept";
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Degraded");
}

TEST_F(Fixture, CachedReadsUsedFirstAndApiOnRetry) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);  // creates
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);  // Pending -> Progressing
  int cache_hits = 0;
  CachedReads cache;
  cache.model_service = [&](const std::string&) -> std::optional<json> {
    cache_hits++;
    return api.objects[kMsPath];
  };
  cache.deployment = [&](const std::string&) -> std::optional<json> { return api.objects[kDepPath]; };
  cache.service = [&](const std::string&) -> std::optional<json> { return api.objects[kSvcPath]; };
  cache.hpa = [&](const std::string&) -> std::optional<json> { return std::nullopt; };
  Expectations cached_expectations{clock};  // its own, as a new process would have
  Executor cached(api, recorder, autoscaler, cached_expectations, clock, ExecutorOptions{}, metrics, nullptr, cache);
  api.calls.clear();
  EXPECT_EQ(cached.Run(kBert).result.outcome, Outcome::kSuccess);
  EXPECT_EQ(cache_hits, 1);
  EXPECT_TRUE(api.calls.empty()) << "no API call at all for an unchanged object read from caches";

  // A stale cache: the status write conflicts, the retry reads through the API.
  json stale = api.objects[kMsPath];
  api.ExternalEdit(kMsPath, [](json& o) { o["metadata"]["generation"] = 2; });
  cache.model_service = [&](const std::string&) -> std::optional<json> { return stale; };
  Expectations stale_exec_expectations{clock};  // its own, as a new process would have
  Executor stale_exec(api, recorder, autoscaler, stale_exec_expectations, clock, ExecutorOptions{}, metrics, nullptr,
                      cache);
  api.calls.clear();
  // Stale object has observedGeneration 1 == generation 1: nothing to write,
  // so make it look outdated to force a status write.
  stale["status"]["phase"] = "Pending";
  EXPECT_EQ(stale_exec.Run(kBert).result.outcome, Outcome::kSuccess);
  ASSERT_FALSE(api.calls.empty());
  EXPECT_EQ(api.calls[0].method, "PUT");
  EXPECT_EQ(api.calls[1].method, "GET") << "re-read after 409";
  EXPECT_EQ(api.objects[kMsPath]["status"]["observedGeneration"], 2);
}

TEST_F(Fixture, PodSummaryFromTheCacheReachesTheStatus) {
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);  // creates
  PodSummary pods{
      .pods = 2, .unschedulable = 1, .scheduler_message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu."};
  std::vector<std::string> asked;
  CachedReads cache;
  cache.pods = [&](const std::string& key) {
    asked.push_back(key);
    return pods;
  };
  Expectations with_pods_expectations{clock};  // its own, as a new process would have
  Executor with_pods(api, recorder, autoscaler, with_pods_expectations, clock, ExecutorOptions{}, metrics, nullptr,
                     cache);
  recorder.events.clear();
  ASSERT_EQ(with_pods.Run(kBert).result.outcome, Outcome::kSuccess);
  EXPECT_EQ(asked, std::vector<std::string>{"ml/bert"});
  const json& st = api.objects[kMsPath]["status"];
  EXPECT_EQ(st["phase"], "Degraded");
  EXPECT_EQ(st["conditions"][2]["reason"], "Unschedulable");
  EXPECT_EQ(st["conditions"][2]["message"],
            "1/2 pods cannot be scheduled: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu.");
  EXPECT_TRUE(recorder.Has("Unschedulable"));

  api.calls.clear();
  recorder.events.clear();
  ASSERT_EQ(with_pods.Run(kBert).result.outcome, Outcome::kSuccess);
  EXPECT_EQ(api.Writes(), 0) << "the pod still cannot be scheduled: nothing to write";
  EXPECT_TRUE(recorder.events.empty());

  pods = PodSummary{.pods = 2};
  ASSERT_EQ(with_pods.Run(kBert).result.outcome, Outcome::kSuccess);
  EXPECT_EQ(api.objects[kMsPath]["status"]["conditions"][2]["status"], "False");
  EXPECT_EQ(api.objects[kMsPath]["status"]["phase"], "Progressing");
}

TEST_F(Fixture, HpaModeCreatesTheHpaNeverAsksTheAutoscalerAndDeletesItWhenTheModeChanges) {
  const std::string hpa_path = "/apis/autoscaling/v2/namespaces/ml/horizontalpodautoscalers/bert";
  json ms = NewModelService();
  ms["spec"]["autoscaling"] = {{"mode", "HPA"}, {"minReplicas", 1}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  api.Put(kMsPath, ms);
  Report r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_FALSE(r.autoscaled) << "no periodic resync: the HPA scales";
  EXPECT_EQ(autoscaler.calls, 0);
  EXPECT_TRUE(autoscaler.forgotten.count("ml/bert"));
  auto writes = api.WritesList();
  ASSERT_EQ(writes.size(), 5u);
  EXPECT_EQ(writes[3].method, "POST");
  EXPECT_EQ(writes[3].path, "/apis/autoscaling/v2/namespaces/ml/horizontalpodautoscalers");
  ASSERT_TRUE(api.objects.count(hpa_path));
  EXPECT_EQ(api.objects[hpa_path]["spec"]["scaleTargetRef"]["kind"], "ModelService");
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 2) << "spec.replicas";
  api.calls.clear();
  r = exec.Run(kBert);
  EXPECT_EQ(api.Writes(), 0) << "an unchanged world must cause zero writes";

  // The HPA scales through /scale (spec.replicas): the Deployment follows.
  api.ExternalEdit(kMsPath, [](json& o) { o["spec"]["replicas"] = 4; });
  r = exec.Run(kBert);
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 4);
  EXPECT_EQ(autoscaler.calls, 0);

  // Back to mode Controller: the HPA is deleted, the autoscaler asked.
  api.ExternalEdit(kMsPath, [](json& o) { o["spec"]["autoscaling"]["mode"] = "Controller"; });
  api.calls.clear();
  r = exec.Run(kBert);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.result.error;
  EXPECT_TRUE(r.autoscaled);
  EXPECT_EQ(api.objects.count(hpa_path), 0u);
  EXPECT_EQ(autoscaler.calls, 1);
  EXPECT_EQ(api.objects[kDepPath]["spec"]["replicas"], 3) << "the autoscaler's recommendation";
}

TEST(Resync, SpreadsKeysOverTheInterval) {
  const auto interval = std::chrono::seconds(15);
  const clock::Clock::TimePoint now{std::chrono::seconds(1000)};
  std::map<long, int> per_second;
  for (int i = 0; i < 1000; ++i) {
    const auto d = ResyncDelay("ns/obj-" + std::to_string(i), interval, now);
    EXPECT_GE(d, std::chrono::milliseconds(7500));
    EXPECT_LT(d, std::chrono::milliseconds(22500));
    per_second[std::chrono::duration_cast<std::chrono::seconds>(now + d - clock::Clock::TimePoint{}).count() % 15]++;
  }
  ASSERT_EQ(per_second.size(), 15u);
  for (const auto& [s, n] : per_second) EXPECT_LT(n, 120) << "second " << s;
  // A key keeps its slot: asked again one interval later, the same phase.
  const auto d1 = ResyncDelay("ns/a", interval, now);
  const auto d2 = ResyncDelay("ns/a", interval, now + d1);
  EXPECT_EQ(d2, interval);
}

TEST(Expectations, ACachedCopyBehindOurWriteWaitsAndOneTooOldIsReadThroughTheApi) {
  FakeClock clock;
  Expectations e(clock);
  const ObjectRef dep{Kind::kDeployment, "ml", "bert"};
  e.Wrote(dep, "5", "6");  // updated the copy read at 5; the server answered 6
  EXPECT_EQ(e.Check(dep, "5"), Expectations::Cache::kBehind);
  EXPECT_EQ(e.Check(dep, "6"), Expectations::Cache::kCurrent);
  EXPECT_EQ(e.Check(dep, "4"), Expectations::Cache::kUnknown) << "neither ours nor what ours followed";
  e.Wrote(dep, "6", "7");
  EXPECT_EQ(e.Check(dep, "6"), Expectations::Cache::kBehind) << "an earlier write of ours";
  EXPECT_EQ(e.Check({Kind::kService, "ml", "bert"}, ""), Expectations::Cache::kCurrent) << "per object";
  clock.Advance(Expectations::kTtl + std::chrono::seconds(1));
  EXPECT_EQ(e.Check(dep, "6"), Expectations::Cache::kUnknown) << "the event may have been lost to a relist";
  e.Observe(test::Deployment(json{{"kind", "Deployment"}, {"metadata", {{"name", "bert"}, {"namespace", "ml"}}}})
                .ResourceVersion("7"),
            false);
  EXPECT_EQ(e.size(), 0u) << "the informer showed our last write";
}

TEST(OwnerKey, MapsControllerReferenceOfModelService) {
  json d = {{"metadata",
             {{"namespace", "ml"},
              {"ownerReferences",
               {{{"apiVersion", "modelops.dev/v1"},
                 {"kind", "ModelService"},
                 {"name", "bert"},
                 {"uid", "u1"},
                 {"controller", true}}}}}}};
  EXPECT_EQ(OwnerKey(d), "ml/bert");
  EXPECT_EQ(ControllerUid(d), "u1");
  EXPECT_TRUE(IsControlledBy(d, "u1"));
  // A ModelService of any version of the group; not of a group that merely
  // starts with the same letters.
  d["metadata"]["ownerReferences"][0]["apiVersion"] = "modelops.dev/v2beta1";
  EXPECT_EQ(OwnerKey(d), "ml/bert");
  for (const char* other : {"modelops.devx/v1", "modelops.dev", "example.com/v1", ""}) {
    d["metadata"]["ownerReferences"][0]["apiVersion"] = other;
    EXPECT_EQ(OwnerKey(d), "") << other;
  }
  d["metadata"]["ownerReferences"][0]["apiVersion"] = "modelops.dev/v1";
  EXPECT_FALSE(IsControlledBy(d, ""));
  // Malformed references are no controller reference, never an exception.
  d["metadata"]["ownerReferences"][0]["controller"] = "yes";
  EXPECT_EQ(OwnerKey(d), "");
  EXPECT_EQ(ControllerUid(d), "");
  d["metadata"]["ownerReferences"][0]["controller"] = true;
  d["metadata"]["ownerReferences"][0]["name"] = 5;
  EXPECT_EQ(OwnerKey(d), "");
  d["metadata"]["ownerReferences"] = "x";
  EXPECT_EQ(OwnerKey(d), "");
  d["metadata"]["ownerReferences"] = {{{"kind", "ReplicaSet"}, {"apiVersion", "apps/v1"}, {"controller", true}}};
  EXPECT_EQ(OwnerKey(d), "");
  EXPECT_EQ(OwnerKey(json::object()), "");
  EXPECT_EQ(OwnerKey(json("str")), "");
}

// The watches (handlers.h) wired by runtime::Builder, with events delivered by hand.
struct Watched {
  explicit Watched(WorkQueue& queue, Expectations& expectations) {
    runtime::Builder builder(queue);
    Watch(builder, {model_services, deployments, services, hpas, pods}, expectations, index, queue);
    builder.Complete();
  }
  test::FakeSource model_services, deployments, services, hpas, pods;
  PodIndex index;
};

TEST_F(Fixture, AnOwnedObjectQueuesItsOwnerOrTheSameNamedModelService) {
  WorkQueue queue("modelservice", clock, test::Unread<WorkQueueMetrics>());
  Watched watched(queue, expectations);
  json foreign = {{"kind", "Deployment"}, {"metadata", {{"name", "bert"}, {"namespace", "ml"}}}};
  foreign["metadata"]["ownerReferences"] = {{{"kind", "ModelService"}, {"controller", "yes"}}};
  watched.deployments.Add(foreign);
  ASSERT_EQ(queue.Len(), 1u);
  auto key = queue.Get();
  EXPECT_EQ(key, "ml/bert");
  queue.Done(*key);

  // A Service now controlled by ModelService ml/other: its old owner and the new one.
  json owned = foreign;
  owned["kind"] = "Service";
  owned["metadata"]["ownerReferences"] = {
      {{"apiVersion", "modelops.dev/v1"}, {"kind", "ModelService"}, {"name", "other"}, {"controller", true}}};
  watched.services.Update(foreign, owned);
  EXPECT_EQ(queue.Get(), "ml/other");
  EXPECT_EQ(queue.Get(), "ml/bert");
}

TEST_F(Fixture, EveryWatchedEventMeetsTheWriteExpectations) {
  WorkQueue queue("modelservice", clock, test::Unread<WorkQueueMetrics>());
  Watched watched(queue, expectations);
  api.Put(kMsPath, NewModelService());
  ASSERT_EQ(exec.Run(kBert).result.outcome, Outcome::kSuccess);
  ASSERT_EQ(expectations.size(), 3u) << "the ModelService (finalizer, status), its Deployment and Service";
  watched.deployments.Add(api.objects[kDepPath]);
  watched.services.Add(api.objects[kSvcPath]);
  watched.model_services.Update(api.objects[kMsPath], api.objects[kMsPath]);
  EXPECT_EQ(expectations.size(), 0u);
  EXPECT_EQ(queue.Len(), 1u) << "all three queue ml/bert, once";
}

TEST_F(Fixture, WorkersCountReconcilesAndTheReplicaGaugesGoWithTheObject) {
  WorkQueue queue("modelservice", clock, test::Unread<WorkQueueMetrics>());
  ReconcileMetrics reconcile_metrics(registry);
  runtime::Controller ctl({"modelservice", 1}, exec, queue, clock, reconcile_metrics);
  Watched watched(queue, expectations);
  api.Put(kMsPath, NewModelService());
  watched.model_services.Add(api.objects[kMsPath]);
  watched.model_services.Add(api.objects[kMsPath]);  // deduplicated
  EXPECT_EQ(queue.Len(), 1u);
  ASSERT_TRUE(ctl.ProcessNextItem());
  std::string text = metrics::Serialize(registry);
  EXPECT_NE(text.find("controller_runtime_reconcile_total{controller=\"modelservice\",result=\"success\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("modelservice_replicas{kind=\"desired\",name=\"bert\",namespace=\"ml\"} 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("controller_runtime_reconcile_time_seconds_count{controller=\"modelservice\"} 1"),
            std::string::npos);
  // One condition series per condition type of the status written, and the info series.
  auto lines_of = [](const std::string& t, const std::string& prefix) {
    std::vector<std::string> out;
    for (size_t at = t.find("\n" + prefix); at != std::string::npos; at = t.find("\n" + prefix, at + 1))
      out.push_back(t.substr(at + 1, t.find('\n', at + 1) - at - 1));
    return out;
  };
  const json status = api.objects[kMsPath]["status"];
  std::vector<std::string> want;
  for (const auto& c : status["conditions"]) {
    // Ready, Progressing and Degraded: kstatus' Reconciling and Stalled
    // (here Reconciling, rolling out) say nothing those do not, and are no series.
    if (c["type"] == "Reconciling" || c["type"] == "Stalled") continue;
    want.push_back("modelservice_status_condition{name=\"bert\",namespace=\"ml\",reason=\"" +
                   c["reason"].get<std::string>() + "\",status=\"" + c["status"].get<std::string>() + "\",type=\"" +
                   c["type"].get<std::string>() + "\"} 1");
  }
  std::sort(want.begin(), want.end());
  auto got = lines_of(text, "modelservice_status_condition{");
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want) << text;
  EXPECT_EQ(want.size(), 3u) << status.dump();
  EXPECT_EQ(status["conditions"].size(), 4u) << "and Reconciling, while the pods roll out";
  EXPECT_EQ(lines_of(text, "modelservice_info{"),
            std::vector<std::string>{"modelservice_info{name=\"bert\",namespace=\"ml\",version=\"" +
                                     status.value("servingVersion", std::string()) + "\"} 1"});

  // A Deployment event re-queues its owner.
  watched.deployments.Update(api.objects[kDepPath], api.objects[kDepPath]);
  EXPECT_EQ(queue.Len(), 1u);
  ASSERT_TRUE(ctl.ProcessNextItem());

  // Errors count and requeue with backoff.
  api.hook = [&](const std::string& m, const std::string&, const json&) -> std::optional<kube::Result> {
    if (m == "GET") return kube::Result{0, json(), kube::Status{0, "Transport", "refused"}};
    return std::nullopt;
  };
  queue.Add("ml/bert");
  ASSERT_TRUE(ctl.ProcessNextItem());
  EXPECT_EQ(queue.NumRequeues("ml/bert"), 1);
  text = metrics::Serialize(registry);
  EXPECT_NE(text.find("controller_runtime_reconcile_errors_total{controller=\"modelservice\"} 1"), std::string::npos);
  api.hook = nullptr;

  // Gone: gauges removed.
  api.objects.erase(kMsPath);
  queue.Add("ml/bert");
  ASSERT_TRUE(ctl.ProcessNextItem());
  text = metrics::Serialize(registry);
  EXPECT_EQ(text.find("modelservice_replicas{"), std::string::npos) << text;
  EXPECT_EQ(text.find("modelservice_status_condition{"), std::string::npos) << text;
  EXPECT_EQ(text.find("modelservice_info{"), std::string::npos) << text;
}

// A status written by someone else cannot add condition series: only the
// controller's condition types are exported, one series each.
TEST_F(Fixture, ConditionSeriesAreTheControllersTypesOnly) {
  api.Put(kMsPath, NewModelService());
  exec.Reconcile(runtime::Request{"ml", "bert"});
  for (int i = 0; i < 50; ++i)
    api.objects[kMsPath]["status"]["conditions"].push_back(
        {{"type", "Evil" + std::to_string(i)}, {"status", "True"}, {"reason", "Spam"}});
  api.objects[kMsPath]["status"]["conditions"].push_back({{"type", "Ready"}, {"status", "True"}, {"reason", "Dup"}});
  exec.Reconcile(runtime::Request{"ml", "bert"});
  const std::string text = metrics::Serialize(registry);
  size_t n = 0;
  for (size_t at = text.find("\nmodelservice_status_condition{"); at != std::string::npos;
       at = text.find("\nmodelservice_status_condition{", at + 1))
    ++n;
  EXPECT_LE(n, 3u) << text;
  EXPECT_EQ(text.find("Evil"), std::string::npos) << text;
}

TEST_F(Fixture, StartedWorkersReconcileQueuedKeysAndStopJoinsThem) {
  WorkQueue queue("modelservice", clock, test::Unread<WorkQueueMetrics>());
  runtime::Controller ctl({"modelservice", 3}, exec, queue, clock, test::Unread<ReconcileMetrics>());
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  for (const auto& n : names) {
    json ms = NewModelService();
    ms["metadata"]["name"] = n;
    ms["metadata"]["uid"] = "uid-" + n;
    api.Put("/apis/modelops.dev/v1/namespaces/ml/modelservices/" + n, ms);
    queue.Add("ml/" + n);
  }
  // Each write tells the clock, whose Eventually() below looks again then.
  api.hook = [&](const std::string&, const std::string&, const json&) -> std::optional<kube::Result> {
    clock.Notify();
    return std::nullopt;
  };
  ctl.Start();
  // Every key is taken by a worker and reconciled: each ModelService gets its Deployment.
  auto all_done = [&] {
    std::lock_guard<std::mutex> g(api.mu());
    for (const auto& n : names) {
      if (!api.objects.count("/apis/apps/v1/namespaces/ml/deployments/" + n)) return false;
    }
    return true;
  };
  EXPECT_TRUE(clock.Eventually(all_done));
  ctl.Stop();
  EXPECT_TRUE(queue.ShuttingDown());
  // Stopped: a key added now is not reconciled by anyone.
  queue.Add("ml/a");
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_FALSE(ctl.ProcessNextItem());
}

}  // namespace
}  // namespace ms::modelservice
