// The executor applies the reconciler's Actions through the Kubernetes API;
// the Controller feeds keys from informer events into the work queue and
// runs `concurrency` workers over it (design.md §3).
//
// Executor rules:
//  - creates POST the object; AlreadyExists -> requeue (the cache was stale);
//    any other 4xx on create -> the ModelService is reported Failed
//    (status + Warning event) and the key is retried with backoff;
//  - updates PUT the whole object with its resourceVersion; 409 Conflict ->
//    re-read everything from the API and reconcile again (never overwrite a
//    newer object); 404 -> requeue;
//  - the status goes through the /status subresource with the
//    ModelService's resourceVersion (409 handled as above);
//  - the first read of a reconcile may come from informer caches
//    (CachedReads); every retry reads through the API.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "controller/autoscale/autoscaler.h"
#include "controller/kube/client.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/reconciler.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/workqueue.h"

namespace spdlog {
class logger;
}

namespace ms::controller {

// Informer-backed reads by "ns/name" (nullopt: not in the cache = not
// found). Any may be empty: that kind is read through the API.
struct CachedReads {
  std::function<std::optional<nlohmann::json>(const std::string& key)> model_service;
  std::function<std::optional<nlohmann::json>(const std::string& key)> deployment;
  std::function<std::optional<nlohmann::json>(const std::string& key)> service;
};

enum class ReconcileOutcome { kSuccess, kError, kRequeue, kRequeueAfter };

struct ReconcileResult {
  ReconcileOutcome outcome = ReconcileOutcome::kSuccess;
  Clock::Duration requeue_after{};
  std::string error;
  bool gone = false;        // the ModelService no longer exists
  bool autoscaled = false;  // has spec.autoscaling and is not being deleted
  std::optional<int> desired_replicas, ready_replicas;
  int writes = 0;  // API writes issued (events not counted)
};

class Executor {
 public:
  // `autoscaler` may be null: autoscaled objects are then reported Degraded
  // (MetricsUnavailable) and keep their replicas.
  Executor(kube::Client& client, EventRecorder& events, autoscale::Autoscaler* autoscaler, const Clock& clock,
           Options options, std::shared_ptr<spdlog::logger> logger = nullptr, CachedReads cache = {});

  ReconcileResult Reconcile(const std::string& key);  // key "ns/name"

  int max_attempts = 5;  // reconciles per call (conflicts, deletion steps)

 private:
  // ok with a body, IsNotFound, or an error.
  kube::Result Read(const std::function<std::optional<nlohmann::json>(const std::string&)>& cache, bool fresh,
                    const std::string& key, const std::string& path);

  kube::Client& client_;
  EventRecorder& events_;
  autoscale::Autoscaler* autoscaler_;
  const Clock& clock_;
  Options options_;
  std::shared_ptr<spdlog::logger> logger_;
  CachedReads cache_;
};

// When an autoscaled object should be looked at again: at its own slot in
// every `interval` (slot = hash(key) mod interval), at least interval/2 from
// now, so that N objects spread evenly instead of querying at once.
Clock::Duration ResyncDelay(const std::string& key, Clock::Duration interval, Clock::TimePoint now);

// "ns/name" of the ModelService controlling `object` (its controller
// ownerReference of kind ModelService), or "" when none.
std::string OwnerKey(const nlohmann::json& object);

struct ControllerConfig {
  std::string name = "modelservice";  // the `controller` label
  int concurrency = 2;
  Clock::Duration autoscale_interval = std::chrono::seconds(15);
};

class Controller {
 public:
  Controller(Executor& executor, WorkQueue& queue, const Clock& clock, ControllerConfig config,
             prometheus::Registry* registry = nullptr, std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Handlers for the ModelService informer and the owned Deployment/Service
  // informers.
  kube::EventHandler ModelServiceHandler();
  kube::EventHandler OwnedObjectHandler();

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
  WorkQueue& queue_;
  const Clock& clock_;
  ControllerConfig config_;
  std::shared_ptr<spdlog::logger> logger_;

  prometheus::Family<prometheus::Counter>* reconcile_total_ = nullptr;
  prometheus::Counter* errors_total_ = nullptr;
  prometheus::Histogram* reconcile_time_ = nullptr;
  prometheus::Family<prometheus::Gauge>* replicas_ = nullptr;

  std::vector<std::thread> workers_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ms::controller
