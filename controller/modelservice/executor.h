// The ModelService reconciler (a runtime::Reconciler, called by the worker
// pool): reads the world, asks for the plan (plan.h) once per attempt, makes
// its writes through the Kubernetes API, writes the status and records the
// Events (design.md §3).
//
// Rules:
//  - reads come from the informer caches (CachedReads), except: every retry
//    reads through the API; a ModelService being deleted, or one reporting a
//    NameConflict, has its Deployment, Service and HorizontalPodAutoscaler
//    read through the API; an object this process wrote is read through the
//    API until the cache shows that write (Expectations: read-your-writes,
//    so a stale cache causes no conflicting write); and an update is always
//    computed on an object read through the API (the caches hold only the
//    fields the plan reads); what the pods say (pods.h) always comes from
//    the pod cache (this controller writes no pods, so none of its writes
//    can be missing there);
//  - creates POST the object; AlreadyExists (the cache did not show it, e.g.
//    its labels were removed) -> read it through the API and plan again:
//    ours is repaired, a same-named object that is not ours is a
//    NameConflict, looked at again every `name_conflict_recheck`; any other
//    4xx on create -> the ModelService is reported Failed (status + Warning
//    event) and the key is retried with backoff;
//  - updates PUT the whole object with its resourceVersion; 409 Conflict or
//    404 -> re-read everything from the API and plan again (never overwrite
//    a newer object);
//  - the status goes through the /status subresource with the
//    ModelService's resourceVersion (409 handled as above); it is the one
//    the plan computed for the world after its writes;
//  - deletes carry preconditions (uid and resourceVersion of the object as
//    read); 409 Conflict -> re-read everything from the API and decide again
//    (the object changed, e.g. it is not ours any more);
//  - the finalizer is removed only when the Deployment, Service and
//    HorizontalPodAutoscaler it owns, read through the API, are gone (or at
//    once when the ModelService is deleted with propagationPolicy Orphan).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "controller/autoscale/autoscaler.h"
#include "controller/kube/client.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/expectations.h"
#include "controller/modelservice/metrics.h"
#include "controller/modelservice/plan.h"
#include "controller/runtime/reconciler.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::modelservice {

// Informer-backed reads by "ns/name" (nullopt: not in the cache = not
// found). Any may be empty: that kind is read through the API. Cached
// objects may hold only the fields the plan reads.
struct CachedReads {
  using Read = std::function<std::optional<nlohmann::json>(const std::string& key)>;
  Read model_service;
  Read deployment;
  Read service;
  // What the ModelService's pods say (pods.h); empty: not watched.
  std::function<PodSummary(const std::string& key)> pods;
  Read hpa;  // HorizontalPodAutoscalers
};

// What one reconcile of a ModelService did.
struct Report {
  runtime::Result result;
  bool gone = false;        // the ModelService no longer exists
  bool autoscaled = false;  // has spec.autoscaling in mode Controller and is not being deleted
  bool polled = false;      // its GPU utilization is read (gpus > 0), so it is looked at again like autoscaled ones
  std::optional<int> desired_replicas, ready_replicas;
  // The status as it stands after this attempt (written or unchanged);
  // nullopt while the ModelService is being deleted.
  std::optional<nlohmann::json> status;
  int writes = 0;  // API writes issued (Events not counted)
};

struct ExecutorOptions {
  Options plan;  // what the plan builds with
  // How often an autoscaled ModelService is looked at again (ResyncDelay).
  clock::Clock::Duration autoscale_interval = std::chrono::seconds(15);
  // How often a ModelService whose name is taken by an object it does not
  // own looks again (the object may have no label we watch).
  clock::Clock::Duration name_conflict_recheck = std::chrono::seconds(30);
  int max_attempts = 5;  // reads and plans per reconcile (conflicts, deletion steps)
};

class Executor final : public runtime::Reconciler {
 public:
  Executor(kube::Client& client, EventRecorder& events, autoscale::Autoscaler& autoscaler, Expectations& expectations,
           const clock::Clock& clock, ExecutorOptions options, ModelServiceMetrics& metrics,
           std::shared_ptr<spdlog::logger> logger = nullptr, CachedReads cache = {});

  // runtime::Reconciler: Run(), the modelservice_replicas gauges, and an
  // autoscaled (or GPU) object looked at again at its slot of every autoscale_interval.
  runtime::Result Reconcile(const runtime::Request& request) override;
  // One reconcile, without the gauges and the resync.
  Report Run(const runtime::Request& request);

  const ExecutorOptions& options() const { return options_; }

 private:
  struct World;
  enum class Step { kNext, kRetry, kStop };

  // ok with a body, IsNotFound, or an error. `fresh`: through the API.
  // `behind`: the cached copy does not show our last write yet.
  kube::Result Read(const CachedReads::Read& cache, bool fresh, const std::string& key, const ObjectRef& ref,
                    bool& behind, bool* from_cache = nullptr);
  // nullopt: stop with `report` (gone, an error, or a cache that is behind
  // our own writes: the event of the write queues the key again).
  std::optional<World> ReadWorld(const runtime::Request& request, bool fresh, Report& report);
  // The owned objects, into `w`; false: stop with `report`.
  bool ReadOwned(World& w, bool fresh, Report& report);
  void Recommend(World& w, Report& report);
  kube::Result Write(const Action& a);
  Step ApplyWrites(World& w, const Actions& actions, std::optional<WriteFailure>& failure, Report& report);
  Step WriteStatus(World& w, const nlohmann::json& status, Report& report);
  // After the writes: the status, the Events, what to do next.
  Step Finish(World& w, const Actions& actions, const std::optional<WriteFailure>& failure, Report& report);
  // modelservice_replicas, _status_condition and _info of the object.
  void RecordMetrics(const runtime::Request& request, const Report& report);

  kube::Client& client_;
  EventRecorder& events_;
  autoscale::Autoscaler& autoscaler_;
  Expectations& expectations_;
  const clock::Clock& clock_;
  const ExecutorOptions options_;
  ModelServiceMetrics& metrics_;
  std::shared_ptr<spdlog::logger> logger_;
  CachedReads cache_;
};

// When an autoscaled object should be looked at again: at its own slot in
// every `interval` (slot = hash(key) mod interval), at least interval/2 from
// now, so that N objects spread evenly instead of querying at once.
clock::Clock::Duration ResyncDelay(const std::string& key, clock::Clock::Duration interval,
                                   clock::Clock::TimePoint now);

}  // namespace ms::modelservice
