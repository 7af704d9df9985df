#include "controller/runtime/metrics.h"

namespace ms::runtime {

WorkQueueMetrics::WorkQueueMetrics(metrics::Registry& registry)
    : hooks(registry.hooks()),
      depth(prometheus::BuildGauge()
                .Name("workqueue_depth")
                .Help("Current depth of workqueue")
                .Register(registry.families())),
      adds(prometheus::BuildCounter()
               .Name("workqueue_adds_total")
               .Help("Total number of adds handled by workqueue")
               .Register(registry.families())),
      retries(prometheus::BuildCounter()
                  .Name("workqueue_retries_total")
                  .Help("Total number of retries handled by workqueue")
                  .Register(registry.families())),
      queue_duration(prometheus::BuildHistogram()
                         .Name("workqueue_queue_duration_seconds")
                         .Help("How long in seconds an item stays in workqueue before being requested")
                         .Register(registry.families())),
      work_duration(prometheus::BuildHistogram()
                        .Name("workqueue_work_duration_seconds")
                        .Help("How long in seconds processing an item from workqueue takes")
                        .Register(registry.families())),
      unfinished_work(prometheus::BuildGauge()
                          .Name("workqueue_unfinished_work_seconds")
                          .Help("How many seconds of work has been done that is in progress and hasn't been "
                                "observed by work_duration. Large values indicate stuck threads. One can deduce "
                                "the number of stuck threads by observing the rate at which this increases.")
                          .Register(registry.families())),
      longest_running(prometheus::BuildGauge()
                          .Name("workqueue_longest_running_processor_seconds")
                          .Help("How many seconds has the longest running processor for workqueue been running.")
                          .Register(registry.families())) {}

prometheus::Histogram::BucketBoundaries WorkQueueMetrics::Buckets() {
  return metrics::ExponentialBuckets(1e-8, 10, 12);
}

ReconcileMetrics::ReconcileMetrics(metrics::Registry& registry)
    : total(prometheus::BuildCounter()
                .Name("controller_runtime_reconcile_total")
                .Help("Total number of reconciliations per controller")
                .Register(registry.families())),
      errors(prometheus::BuildCounter()
                 .Name("controller_runtime_reconcile_errors_total")
                 .Help("Total number of reconciliation errors per controller")
                 .Register(registry.families())),
      panics(prometheus::BuildCounter()
                 .Name("controller_runtime_reconcile_panics_total")
                 .Help("Total number of reconciliation panics per controller")
                 .Register(registry.families())),
      time(prometheus::BuildHistogram()
               .Name("controller_runtime_reconcile_time_seconds")
               .Help("Length of time per reconciliation per controller")
               .Register(registry.families())),
      active_workers(prometheus::BuildGauge()
                         .Name("controller_runtime_active_workers")
                         .Help("Number of currently used workers per controller")
                         .Register(registry.families())),
      max_concurrent(prometheus::BuildGauge()
                         .Name("controller_runtime_max_concurrent_reconciles")
                         .Help("Maximum number of concurrent reconciles per controller")
                         .Register(registry.families())) {}

prometheus::Histogram::BucketBoundaries ReconcileMetrics::Buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5,
          1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,   7,    8,   9,    10,  15,  20,  25,  30,  40,  50,   60};
}

LeaderElectionMetrics::LeaderElectionMetrics(metrics::Registry& registry)
    : master_status(prometheus::BuildGauge()
                        .Name("leader_election_master_status")
                        .Help("Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
                              "indicates master. 'name' is the string used to identify the lease.")
                        .Register(registry.families())) {}

}  // namespace ms::runtime
