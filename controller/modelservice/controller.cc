#include "controller/modelservice/controller.h"

#include <chrono>
#include <utility>

#include "controller/modelservice/cached.h"
#include "controller/modelservice/handlers.h"
#include "controller/modelservice/pod_fields.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/builder.h"

namespace ms::modelservice {

namespace {

// The transform, and the annotations it reads (the rest are left out while
// parsing: a tenant's annotations cost the controller nothing).
runtime::InformerOptions Projected(runtime::Transform t, kube::KeptAnnotations annotations) {
  runtime::InformerOptions o;
  o.transform = std::move(t);
  o.annotations = std::move(annotations);
  return o;
}

std::string OwnedSelector() { return std::string(kLabelManagedBy) + "=" + kManagedByValue; }

kube::HttpClientOptions GatedOptions(const kube::WriteGate* gate) {
  kube::HttpClientOptions o;
  o.write_gate = gate;
  return o;
}

}  // namespace

Controller::Controller(const kube::RestConfig& rest, const clock::Clock& clock, ControllerMetrics m,
                       const std::string& identity, const kube::WriteGate* gate, ControllerOptions options,
                       std::shared_ptr<spdlog::logger> logger)
    : logger_(std::move(logger)),
      concurrency_(options.concurrency),
      client_(rest, clock, m.client, logger_, GatedOptions(gate)),
      events_client_(rest, clock, m.client, logger_, GatedOptions(gate)),
      recorder_(events_client_, clock, identity, logger_),
      poller_(std::make_shared<autoscale::PrometheusClient>(options.prometheus_url, options.prometheus, clock), clock,
              options.poller, m.autoscaler, logger_),
      autoscaler_(poller_, clock, m.autoscaler, options.autoscaler, logger_),
      namespaces_(std::move(options.namespaces)),
      // The caches keep only what the plan reads (cached.h); one informer
      // per kind and watched namespace (all namespaces: one per kind).
      ms_informer_(client_, clock, logger_, ModelServicesPath(), "", namespaces_, Projected(CachedModelService, {})),
      dep_informer_(client_, clock, logger_, DeploymentsPath(), OwnedSelector(), namespaces_,
                    Projected(CachedDeployment, {kPodKeysAnnotation})),
      svc_informer_(client_, clock, logger_, ServicesPath(), OwnedSelector(), namespaces_,
                    Projected(CachedService, {})),
      // The owned Deployments' pods (their template carries the same label).
      pod_informer_(client_, clock, logger_, PodsPath(), OwnedSelector(), namespaces_, Projected(CachedPod, {})),
      hpa_informer_(client_, clock, logger_, HorizontalPodAutoscalersPath(), OwnedSelector(), namespaces_,
                    Projected(CachedHorizontalPodAutoscaler, {})),
      queue_(kControllerName, clock, m.workers.workqueue),
      expectations_(clock),
      executor_(client_, recorder_, autoscaler_, expectations_, clock, options.executor, m.modelservice, logger_,
                Cache()),
      worker_pool_({kControllerName, options.concurrency}, executor_, queue_, clock, m.workers.reconcile, logger_) {
  runtime::Builder builder(queue_);
  Watch(builder, {ms_informer_, dep_informer_, svc_informer_, hpa_informer_, pod_informer_}, expectations_, pods_,
        queue_);
  builder.Complete();
  // A new reading (or error) of an object's metric looks at the object again.
  poller_.SetOnChange([this](const std::string& ns, const std::string& name) { queue_.Add(ns + "/" + name); });
}

CachedReads Controller::Cache() {
  CachedReads cache;
  cache.model_service = [this](const std::string& key) { return ms_informer_.Get(key); };
  cache.deployment = [this](const std::string& key) { return dep_informer_.Get(key); };
  cache.service = [this](const std::string& key) { return svc_informer_.Get(key); };
  cache.pods = [this](const std::string& key) { return pods_.Summary(key); };
  cache.hpa = [this](const std::string& key) { return hpa_informer_.Get(key); };
  return cache;
}

void Controller::SetupWithManager(manager::Manager& mgr) {
  // Prometheus is read while leading only.
  auto workers = manager::Runnable::Of(
      [this] {
        logger_->info("caches synced; starting {} workers", concurrency_);
        poller_.Start();
        worker_pool_.Start();
      },
      [this] {
        worker_pool_.Stop();
        poller_.Stop();
      },
      [this] {
        queue_.ShutDownNow();
        worker_pool_.Stop();
        poller_.Stop();
      });
  // Events still queued after SIGTERM are written for up to 2 s, once the
  // workers have drained and before the Lease is released (after it, the
  // write gate refuses them); none after a lost Lease.
  auto events = manager::Runnable::Of(
      nullptr, [this] { recorder_.Shutdown(std::chrono::seconds(2)); },
      [this] { recorder_.Shutdown(clock::Clock::Duration::zero()); });
  mgr.AddCache(ms_informer_)
      .AddCache(dep_informer_)
      .AddCache(svc_informer_)
      .AddCache(pod_informer_)
      .AddCache(hpa_informer_)
      .Add(manager::Needs::kLeadershipAndCaches, std::move(workers))
      .Add(manager::Needs::kLeadership, std::move(events))
      // The Lease is lost: requests in flight are aborted.
      .OnAbort([this] {
        client_.Close();
        events_client_.Close();
      });
}

}  // namespace ms::modelservice
