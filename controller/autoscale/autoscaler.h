// Queue-length autoscaling (design.md §3, issue 5). The reconciler stays
// pure: the controller asks the Autoscaler for a recommendation before it
// reconciles an autoscaled ModelService, and passes the answer in as part of
// the observed state. Recommend() never waits for Prometheus: it answers
// from the poller's last reading (poller.h).
#pragma once

#include <optional>
#include <string>

#include "shared/clock/clock.h"

namespace ms::autoscale {

struct Spec {
  int min_replicas = 1;
  int max_replicas = 1;
  int target_queue_length = 1;
  int target_gpu_utilization = 0;  // percent; 0: not set (queue length only)
  // Which of AutoscalerOptions::queue_query_templates reads its queue (the
  // model server's own gauge: the index of spec.runtime); 0 when out of range.
  size_t queue_query = 0;
};

// The average GPU utilization of an object's pods (status.gpuUtilization).
struct GpuUtilization {
  std::optional<double> percent;         // a value read within the staleness bound: the mean over the pods
  int pods = 0;                          // the pods it averages (the query's series)
  clock::Clock::WallTime observed_at{};  // when it was read
  std::string message;                   // why there is none (unless pending)
  bool pending = false;                  // no answer yet for a newly watched object
};

struct Recommendation {
  bool metrics_ok = false;   // false: keep current replicas, set Degraded (unless pending)
  std::string reason;        // "MetricsUnavailable" when !metrics_ok
  std::string message;       // why, for the condition and the Event
  double queue_length = 0;   // L as read
  int desired_replicas = 0;  // valid when metrics_ok
  // !metrics_ok because no query has answered yet for a newly watched object:
  // keep current replicas, nothing is wrong yet (the first answer queues the
  // object again).
  bool pending = false;
  std::optional<double> gpu_utilization = std::nullopt;  // U as used, with spec.target_gpu_utilization
};

class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  // `current_replicas`: the replicas the Deployment has now (or will be
  // created with). Applies the formula, the tolerance and the scale-down
  // stabilization window for the object `ns/name`.
  virtual Recommendation Recommend(const std::string& ns, const std::string& name, const Spec& spec,
                                   int current_replicas) = 0;
  // Drops per-object state (the object was deleted or lost its autoscaling).
  virtual void Forget(const std::string& ns, const std::string& name) = 0;
  // The GPU utilization of the object's pods, from the poller's last reading
  // (watched from the first call on); never waits for Prometheus.
  virtual GpuUtilization Gpu(const std::string& ns, const std::string& name) = 0;
  // Stops reading the object's GPU utilization (deleted, or no GPUs any more).
  virtual void ForgetGpu(const std::string& ns, const std::string& name) = 0;
};

}  // namespace ms::autoscale
