// The ModelService controller as one part of a manager::Manager, as a
// kubebuilder project's reconciler is set up with its manager: its API
// clients (writes behind the Manager's Lease gate), the caches it watches,
// its queue, executor, workers and autoscaler, built in that order; then
// SetupWithManager gives the Manager what runs when (caches on every
// replica, workers and Events while leading).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controller/autoscale/metrics.h"
#include "controller/autoscale/poller.h"
#include "controller/autoscale/prometheus_autoscaler.h"
#include "controller/autoscale/prometheus_client.h"
#include "controller/kube/config.h"
#include "controller/kube/http_client.h"
#include "controller/kube/metrics.h"
#include "controller/kube/write_gate.h"
#include "controller/manager/manager.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/executor.h"
#include "controller/modelservice/expectations.h"
#include "controller/modelservice/metrics.h"
#include "controller/modelservice/pods.h"
#include "controller/runtime/controller.h"
#include "controller/runtime/informer_set.h"
#include "controller/runtime/metrics.h"
#include "controller/runtime/workqueue.h"
#include "shared/clock/clock.h"
#include "shared/log/logging.h"

namespace ms::modelservice {

struct ControllerOptions {
  std::vector<std::string> namespaces;  // watched; empty: all
  int concurrency = 1;                  // workers
  ExecutorOptions executor;
  std::string prometheus_url;  // empty: no autoscaling
  autoscale::PrometheusClientOptions prometheus;
  autoscale::PollerOptions poller;
  autoscale::AutoscalerOptions autoscaler;
};

// The metric families the controller's parts write to (one registry, each
// family declared in its subsystem's metrics.h).
struct ControllerMetrics {
  kube::ClientMetrics& client;
  runtime::RuntimeMetrics& workers;
  autoscale::AutoscalerMetrics& autoscaler;
  ModelServiceMetrics& modelservice;
};

class Controller {
 public:
  // `gate`: the Manager's write gate (writes only while leading).
  Controller(const kube::RestConfig& rest, const clock::Clock& clock, ControllerMetrics m, const std::string& identity,
             const kube::WriteGate* gate, ControllerOptions options, std::shared_ptr<spdlog::logger> logger);
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // The five caches; the workers and the autoscaler's poller once leading
  // and synced (Stop: in-flight and queued reconciles finish; Abort: queued
  // keys are dropped, the reconcile in progress ends as its requests fail);
  // the Event recorder while leading; a lost Lease aborts the requests in
  // flight of both clients.
  void SetupWithManager(manager::Manager& mgr);

  // The client of the ModelServices and their objects (behind the gate).
  kube::HttpClient& client() { return client_; }

 private:
  CachedReads Cache();

  std::shared_ptr<spdlog::logger> logger_;
  const int concurrency_;
  // One token bucket per API group-version in each client; Events go
  // through a client of their own, so they never take the objects' tokens.
  kube::HttpClient client_;
  kube::HttpClient events_client_;
  KubeEventRecorder recorder_;
  autoscale::Poller poller_;  // Prometheus, off the reconcile workers
  autoscale::PrometheusAutoscaler autoscaler_;
  PodIndex pods_;                              // filled by pod_informer_
  const std::vector<std::string> namespaces_;  // empty: all
  runtime::InformerSet ms_informer_, dep_informer_, svc_informer_, pod_informer_, hpa_informer_;
  runtime::WorkQueue queue_;
  Expectations expectations_;
  Executor executor_;
  runtime::Controller worker_pool_;
};

}  // namespace ms::modelservice
