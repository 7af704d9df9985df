// The worker pool of one controller, as controller-runtime's controller
// loop: `concurrency` workers take keys from the work queue, call the
// Reconciler, and act on its Result (forget the key's backoff, requeue it
// with backoff or after a delay), counting controller_runtime_reconcile_*
// and reporting controller_runtime_active_workers and
// controller_runtime_max_concurrent_reconciles. A Reconcile that throws is
// counted as a panic and an error, and retried with backoff.
//
//   runtime::Controller c({"modelservice", 2}, reconciler, queue, clock, metrics.reconcile, logger);
//   c.Start();  ...  c.Stop();  // drains: keys queued are still reconciled
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/runtime/metrics.h"
#include "controller/runtime/reconciler.h"
#include "controller/runtime/workqueue.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::runtime {

struct ControllerOptions {
  std::string name;     // the `controller` label and the log's
  int concurrency = 1;  // workers (at least one)
};

class Controller {
 public:
  Controller(ControllerOptions options, Reconciler& reconciler, WorkQueue& queue, const clock::Clock& clock,
             ReconcileMetrics& metrics, std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Controller();  // Stop()
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the workers.
  void Start();
  // Shuts the queue down (keys already queued are still handed out), waits
  // for the reconciles in flight and joins the workers.
  void Stop();

  // Takes one key from the queue and reconciles it (what each worker does);
  // false once the queue is shut down and empty. For tests.
  bool ProcessNextItem();

 private:
  // Acts on a reconcile's result and counts it.
  void Handle(const std::string& key, const Result& r, double seconds);

  const ControllerOptions options_;
  Reconciler& reconciler_;
  WorkQueue& queue_;
  const clock::Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  ReconcileMetrics& metrics_;
  prometheus::Counter& errors_;
  prometheus::Counter& panics_;
  prometheus::Histogram& time_;
  prometheus::Gauge& active_workers_;
  std::vector<std::thread> workers_;
  // reconcileID: a random prefix per pool and a counter.
  std::string NextReconcileId();
  const uint64_t id_prefix_;
  std::atomic<uint64_t> next_reconcile_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace ms::runtime
