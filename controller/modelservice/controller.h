// The executor applies the reconciler's Actions through the Kubernetes API;
// the Controller feeds keys from informer events into the work queue and
// runs `concurrency` workers over it (design.md §3).
//
// Executor rules:
//  - reads come from the informer caches (CachedReads), except: every retry
//    reads through the API; a ModelService being deleted, or one reporting a
//    NameConflict, has its Deployment, Service and HorizontalPodAutoscaler
//    read through the API; an
//    object this executor wrote is read through the API until the cache
//    shows that write (read-your-writes, so a stale cache causes no
//    conflicting write); and an update is always computed on an object read
//    through the API (the caches hold only the fields the reconciler reads);
//    what the pods say (pods.h) always comes from the pod cache (this
//    controller writes no pods, so none of its writes can be missing there);
//  - creates POST the object; AlreadyExists (the cache did not show it, e.g.
//    its labels were removed) -> read it through the API and reconcile again:
//    ours is repaired, a same-named object that is not ours is a
//    NameConflict, looked at again every `name_conflict_recheck`; any other
//    4xx on create -> the ModelService is reported Failed (status + Warning
//    event) and the key is retried with backoff;
//  - updates PUT the whole object with its resourceVersion; 409 Conflict or
//    404 -> re-read everything from the API and reconcile again (never
//    overwrite a newer object);
//  - the status goes through the /status subresource with the
//    ModelService's resourceVersion (409 handled as above); when this
//    reconcile created the Deployment, the status is computed with it;
//  - the finalizer is removed only when the Deployment, Service and
//    HorizontalPodAutoscaler it owns, read through the API, are gone.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "controller/autoscale/autoscaler.h"
#include "controller/kube/client.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/metrics.h"
#include "controller/modelservice/ownership.h"
#include "controller/modelservice/reconciler.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/metrics.h"
#include "controller/runtime/workqueue.h"

namespace spdlog {
class logger;
}

namespace ms::modelservice {

// Informer-backed reads by "ns/name" (nullopt: not in the cache = not
// found). Any may be empty: that kind is read through the API. Cached
// objects may hold only the fields the reconciler reads.
struct CachedReads {
  std::function<std::optional<nlohmann::json>(const std::string& key)> model_service;
  std::function<std::optional<nlohmann::json>(const std::string& key)> deployment;
  std::function<std::optional<nlohmann::json>(const std::string& key)> service;
  // What the ModelService's pods say (pods.h); empty: not watched.
  std::function<PodSummary(const std::string& key)> pods;
  std::function<std::optional<nlohmann::json>(const std::string& key)> hpa;  // HorizontalPodAutoscalers
};

enum class ReconcileOutcome { kSuccess, kError, kRequeue, kRequeueAfter };

struct ReconcileResult {
  ReconcileOutcome outcome = ReconcileOutcome::kSuccess;
  Clock::Duration requeue_after{};
  std::string error;
  bool gone = false;        // the ModelService no longer exists
  bool autoscaled = false;  // has spec.autoscaling in mode Controller and is not being deleted
  std::optional<int> desired_replicas, ready_replicas;
  int writes = 0;  // API writes issued (events not counted)
};

// The writes this process made, by object path, until an informer shows
// them (client-go's controllers call these "expectations"). A cached copy
// that is the state a write of ours was based on, or an earlier write of
// ours, is behind: the watch event of our latest write is on its way and
// will queue the key again, so a reconcile on it can simply wait. A cached
// copy that is neither, or an expectation older than `ttl` (the event may
// have been lost to a relist), is read through the API.
class WriteTracker {
 public:
  enum class Cache { kCurrent, kBehind, kUnknown };

  WriteTracker(const Clock& clock, Clock::Duration ttl) : clock_(clock), ttl_(ttl) {}

  // We wrote `path`, based on the copy we had read at `read_rv` ("" when we
  // created it), and the API server answered at `written_rv`.
  void Wrote(const std::string& path, const std::string& read_rv, const std::string& written_rv);
  // An informer delivered `path` at `rv`.
  void Seen(const std::string& path, const std::string& rv);
  void Forget(const std::string& path);
  // How a cached copy (`cached_rv`, "" when absent) relates to our writes.
  Cache Check(const std::string& path, const std::string& cached_rv) const;
  size_t size() const;

 private:
  struct Expectation {
    std::string latest;               // what we wrote last
    std::vector<std::string> before;  // what it follows (read copies, earlier writes)
    Clock::TimePoint at;              // when
  };
  const Clock& clock_;
  const Clock::Duration ttl_;
  mutable std::mutex mu_;
  std::map<std::string, Expectation> pending_;
};

class Executor {
 public:
  // `autoscaler` may be null: autoscaled objects are then reported Degraded
  // (MetricsUnavailable) and keep their replicas.
  Executor(kube::Client& client, EventRecorder& events, autoscale::Autoscaler* autoscaler, const Clock& clock,
           Options options, std::shared_ptr<spdlog::logger> logger = nullptr, CachedReads cache = {});

  ReconcileResult Reconcile(const std::string& key);  // key "ns/name"

  // From the informers' handlers: an object event (see WriteTracker).
  void Seen(const nlohmann::json& object);
  void SeenDeleted(const nlohmann::json& object);
  const WriteTracker& writes() const { return written_; }

  // How long a write of ours may stay unseen by the informers before the
  // cache is bypassed (and how long a reconcile that waited for it waits at most).
  static constexpr Clock::Duration kExpectationTtl = std::chrono::seconds(30);

  int max_attempts = 5;  // reconciles per call (conflicts, deletion steps)
  // How often a ModelService whose name is taken by an object it does not
  // own looks again (the object may have no label we watch).
  Clock::Duration name_conflict_recheck = std::chrono::seconds(30);

 private:
  // What one attempt observed.
  struct World {
    std::string ns, name;
    nlohmann::json ms;
    Observed observed;
    bool deleting = false;
    bool live = false;  // the owned objects were read through the API
  };
  enum class Step { kNext, kRetry, kStop };

  // ok with a body, IsNotFound, or an error. `fresh`: through the API.
  // `behind`: the cached copy does not show our last write yet.
  kube::Result Read(const std::function<std::optional<nlohmann::json>(const std::string&)>& cache, bool fresh,
                    const std::string& key, const std::string& path, bool& behind, bool* from_cache = nullptr);
  // nullopt: stop with `result` (gone, an error, or a cache that is behind
  // our own writes: the event of the write queues the key again).
  std::optional<World> ReadWorld(const std::string& key, bool fresh, ReconcileResult& result);
  void Recommend(World& w, ReconcileResult& result);
  kube::Result Write(const Action& a);
  // `changed`: an owned object was created or updated (its new state is in `w`).
  Step ApplyWrites(World& w, const Actions& actions, std::optional<WriteFailure>& failure, bool& changed,
                   ReconcileResult& result);
  Step WriteStatus(World& w, const nlohmann::json& status, ReconcileResult& result);

  kube::Client& client_;
  EventRecorder& events_;
  autoscale::Autoscaler* autoscaler_;
  const Clock& clock_;
  Options options_;
  std::shared_ptr<spdlog::logger> logger_;
  CachedReads cache_;
  WriteTracker written_{clock_, kExpectationTtl};
};

// When an autoscaled object should be looked at again: at its own slot in
// every `interval` (slot = hash(key) mod interval), at least interval/2 from
// now, so that N objects spread evenly instead of querying at once.
Clock::Duration ResyncDelay(const std::string& key, Clock::Duration interval, Clock::TimePoint now);

struct ControllerConfig {
  std::string name = "modelservice";  // the `controller` label
  int concurrency = 2;
  Clock::Duration autoscale_interval = std::chrono::seconds(15);
};

class Controller {
 public:
  Controller(Executor& executor, runtime::WorkQueue& queue, const Clock& clock, ControllerConfig config,
             runtime::ReconcileMetrics& reconcile_metrics, ModelServiceMetrics& metrics,
             std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Handlers for the ModelService informer and the owned Deployment/Service
  // informers. An owned object's event queues its owner (by ownerReference);
  // an object without a ModelService owner queues the ModelService of its own
  // name, which may be waiting for that name (NameConflict).
  runtime::EventHandler ModelServiceHandler();
  runtime::EventHandler OwnedObjectHandler();

  void Enqueue(const std::string& key) { queue_.Add(key); }

  // Starts the workers.
  void Start();
  // Stops taking keys, waits for in-flight reconciles, joins the workers.
  void Stop();

  // Takes one key from the queue and reconciles it (what each worker does);
  // false once the queue is shut down. For tests.
  bool ProcessNextItem();

 private:
  void Handle(const std::string& key, const ReconcileResult& r, double seconds);

  Executor& executor_;
  runtime::WorkQueue& queue_;
  const Clock& clock_;
  ControllerConfig config_;
  std::shared_ptr<spdlog::logger> logger_;

  runtime::ReconcileMetrics& reconcile_metrics_;
  prometheus::Counter& errors_total_;
  prometheus::Histogram& reconcile_time_;
  prometheus::Family<prometheus::Gauge>& replicas_;

  std::vector<std::thread> workers_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ms::modelservice
