// The controller runtime's metrics, all declared here, with
// controller-runtime's names so that existing dashboards work: the work
// queue's (workqueue_*, label `name`), the reconciles' (controller_runtime_
// reconcile_*, label `controller`) and leader election's
// (leader_election_master_status, label `name`). Every one of
// controller-runtime's controller and workqueue series is here, so its
// Grafana dashboards have data. Built once per program
// from its registry; each queue, worker pool and elector adds its label.
#pragma once

#include "shared/metrics/metrics.h"

namespace ms::runtime {

struct WorkQueueMetrics {
  explicit WorkQueueMetrics(metrics::Registry& registry);
  // The histograms' buckets, as controller-runtime's: 1e-8 .. 1e3 s, factor 10.
  static prometheus::Histogram::BucketBoundaries Buckets();

  metrics::CollectHooks& hooks;  // the queues' work-in-progress gauges are updated at collection
  prometheus::Family<prometheus::Gauge>& depth;
  prometheus::Family<prometheus::Counter>& adds;
  prometheus::Family<prometheus::Counter>& retries;
  prometheus::Family<prometheus::Histogram>& queue_duration;
  prometheus::Family<prometheus::Histogram>& work_duration;
  // Seconds of work in progress not yet observed by work_duration (a stuck
  // worker makes it grow), and how long the longest running one has run.
  prometheus::Family<prometheus::Gauge>& unfinished_work;
  prometheus::Family<prometheus::Gauge>& longest_running;
};

struct ReconcileMetrics {
  explicit ReconcileMetrics(metrics::Registry& registry);
  // controller_runtime_reconcile_time_seconds' buckets (controller-runtime's).
  static prometheus::Histogram::BucketBoundaries Buckets();
  // The values of `result`: success, error, requeue, requeue_after.
  static constexpr const char* kResults[] = {"success", "error", "requeue", "requeue_after"};

  prometheus::Family<prometheus::Counter>& total;         // {controller,result}
  prometheus::Family<prometheus::Counter>& errors;        // {controller}
  prometheus::Family<prometheus::Counter>& panics;        // {controller}: a Reconcile that threw
  prometheus::Family<prometheus::Histogram>& time;        // {controller}
  prometheus::Family<prometheus::Gauge>& active_workers;  // {controller}: workers reconciling now
  prometheus::Family<prometheus::Gauge>& max_concurrent;  // {controller}: the pool's size
};

struct LeaderElectionMetrics {
  explicit LeaderElectionMetrics(metrics::Registry& registry);

  prometheus::Family<prometheus::Gauge>& master_status;  // {name}: 1 while leading
};

// All of them.
struct RuntimeMetrics {
  explicit RuntimeMetrics(metrics::Registry& registry)
      : workqueue(registry), reconcile(registry), leader_election(registry) {}

  WorkQueueMetrics workqueue;
  ReconcileMetrics reconcile;
  LeaderElectionMetrics leader_election;
};

}  // namespace ms::runtime
