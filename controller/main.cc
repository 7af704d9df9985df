// modelservice-controller: its flags, then a runtime::Manager (manager.h)
// with the ModelService controller's parts: the API clients, informers, the
// work queue, the executor and its workers, the autoscaler, the webhook's
// certificates (--cert-mode=self), Events; the Manager runs leader
// election and the HTTP endpoints (/metrics, /healthz, /readyz). Signals
// are taken by a dedicated thread with sigwait(). Exit codes: 0 after
// SIGTERM/SIGINT (in-flight reconciles finished, Lease released), 1 when
// leadership is lost or start-up fails, 2 on bad flags.
//
// Leadership fails closed (design.md §3): the elector is the API client's
// WriteGate, so no write leaves the process once the renew deadline has
// passed, whatever the threads are doing; when the elector reports the loss,
// the process aborts the requests in flight, drops the queue and exits 1.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/autoscale/prometheus_autoscaler.h"
#include "controller/autoscale/prometheus_client.h"
#include "controller/certs/manager.h"
#include "controller/check_admission.h"
#include "controller/flags.h"
#include "controller/kube/config.h"
#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "controller/modelservice/cached.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/executor.h"
#include "controller/modelservice/expectations.h"
#include "controller/modelservice/handlers.h"
#include "controller/modelservice/pod_fields.h"
#include "controller/modelservice/pods.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/builder.h"
#include "controller/runtime/controller.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/informer_set.h"
#include "controller/runtime/leader_election.h"
#include "controller/runtime/manager.h"
#include "controller/runtime/workqueue.h"
#include "controller/secure_metrics.h"
#include "shared/base/clock.h"
#include "shared/base/logging.h"
#include "shared/base/metrics.h"
#include "shared/base/open_files.h"
#include "shared/base/signals.h"
#include "shared/version/version.h"

namespace {

using namespace ms;
using namespace ms::controller;
using namespace ms::modelservice;
using namespace ms::runtime;

// Flags, or the exit code when the program is done after parsing them.
std::optional<int> ParseOrExit(int argc, char** argv, Flags* flags) {
  if (auto done = ParseCommandLine(argc, argv, flags, std::cout, std::cerr)) return done;
  if (flags->leader_election_namespace.empty()) flags->leader_election_namespace = DefaultLeaderElectionNamespace();
  if (flags->certs.secret_namespace.empty()) flags->certs.secret_namespace = DefaultLeaderElectionNamespace();
  std::string err = controller::certs::CheckSettings(flags->certs);
  if (err.empty()) err = autoscale::CheckPrometheusAuthFiles(flags->prometheus_auth);  // readable at start
  if (!err.empty()) {
    std::cerr << "Error: " << err << "\n";
    return 2;
  }
  return std::nullopt;
}

// The transform, and the annotations it reads (the rest are left out while
// parsing: a tenant's annotations cost the controller nothing).
runtime::InformerOptions Projected(runtime::Transform t, kube::KeptAnnotations annotations) {
  runtime::InformerOptions o;
  o.transform = std::move(t);
  o.annotations = std::move(annotations);
  return o;
}
std::string OwnedSelector() { return std::string(kLabelManagedBy) + "=" + kManagedByValue; }
ExecutorOptions ExecutorSettings(const Flags& flags) {
  ExecutorOptions o;
  o.plan.default_image = flags.default_image;
  // Whole seconds, rounded up, within what the API accepts for
  // behavior.scaleDown.stabilizationWindowSeconds (0..3600).
  o.plan.hpa_scale_down_stabilization_seconds =
      static_cast<int>(std::clamp<int64_t>((flags.scale_down_stabilization.count() + 999) / 1000, 0, 3600));
  o.autoscale_interval = flags.autoscale_interval;
  return o;
}
autoscale::PrometheusClientOptions PrometheusOptions(const Flags& flags) {
  autoscale::PrometheusClientOptions o;
  o.timeout = flags.prometheus_timeout;
  o.auth = flags.prometheus_auth;
  return o;
}
// Queries every --autoscale-interval; the breaker opens after 3 failures
// in a row for one interval, doubling up to 4 intervals (design.md §3).
autoscale::PollerOptions PollerSettings(const Flags& flags) {
  autoscale::PollerOptions o;
  o.interval = flags.autoscale_interval;
  o.breaker.open_for = flags.autoscale_interval;
  o.breaker.max_open_for = 4 * flags.autoscale_interval;
  return o;
}
autoscale::AutoscalerOptions AutoscalerSettings(const Flags& flags) {
  autoscale::AutoscalerOptions o;
  o.queue_query_templates = flags.QueueQueries();
  o.gpu_query_template = flags.prometheus_gpu_query;
  o.stabilization_window = flags.scale_down_stabilization;
  o.max_age = 3 * flags.autoscale_interval;
  return o;
}
kube::HttpClientOptions GatedOptions(const kube::WriteGate* gate) {
  kube::HttpClientOptions o;
  o.write_gate = gate;
  return o;
}

// One registry; each subsystem's metrics declared in its metrics.h.
struct Metrics {
  explicit Metrics(const Flags& flags)
      : autoscaler(registry, flags.per_object_metrics), modelservice(registry, flags.per_object_metrics) {
    build::RegisterBuildInfo(registry);
  }
  metrics::Registry registry;
  kube::ClientMetrics client{registry};
  RuntimeMetrics runtime{registry};
  autoscale::AutoscalerMetrics autoscaler;
  ModelServiceMetrics modelservice;
  controller::certs::CertificateMetrics certs{registry};
};

// The Lease through an API client of its own (its own connections and token
// bucket, no write gate: it must be able to write the Lease when not leading).
struct LeaseLock {
  LeaseLock(const Flags& flags, kube::RestConfig rest, const Clock& clock, kube::ClientMetrics& client_metrics,
            const std::shared_ptr<spdlog::logger>& logger)
      : client(OwnUserAgent(std::move(rest)), clock, client_metrics, logger),
        store(client, flags.leader_election_namespace, flags.leader_election_id) {}
  static kube::RestConfig OwnUserAgent(kube::RestConfig rest) {
    rest.user_agent += "/leader-election";
    return rest;
  }
  kube::HttpClient client;
  KubeLeaseStore store;
};

runtime::ManagerOptions ManagerSettings(const Flags& flags, const std::string& identity, SecureMetricsSetup* secure) {
  runtime::ManagerOptions o;
  o.metrics_address = flags.MetricsAddress();
  o.probe_address = flags.ProbeAddress();
  if (secure != nullptr) o.secure_metrics = secure->Secure();  // --metrics-secure only
  o.election.name = flags.leader_election_id;
  o.election.ns = flags.leader_election_namespace;
  o.election.identity = identity;
  return o;
}

// The ModelService controller's parts, in the order they are built: its
// clients (writes behind the Lease's gate), caches, queue, executor and
// workers, the autoscaler and, with --cert-mode=self, the certificates.
struct Parts {
  Parts(const Flags& flags, const kube::RestConfig& rest, const Clock& clock, Metrics& m, const std::string& identity,
        const kube::WriteGate* gate, const std::shared_ptr<spdlog::logger>& logger)
      : logger(logger),
        // One token bucket per API group-version in each client; Events go
        // through a client of their own, so they never take the objects' tokens.
        client(rest, clock, m.client, logger, GatedOptions(gate)),
        events_client(rest, clock, m.client, logger, GatedOptions(gate)),
        recorder(events_client, clock, identity, logger),
        poller(std::make_shared<autoscale::PrometheusClient>(flags.prometheus_url, PrometheusOptions(flags), clock),
               clock, PollerSettings(flags), m.autoscaler, logger),
        autoscaler(poller, clock, m.autoscaler, AutoscalerSettings(flags), logger),
        namespaces(flags.Namespaces()),
        // The caches keep only what the plan reads (cached.h).
        // One informer per kind and watched namespace (all namespaces: one per kind).
        ms_informer(client, clock, logger, ModelServicesPath(), "", namespaces, Projected(CachedModelService, {})),
        dep_informer(client, clock, logger, DeploymentsPath(), OwnedSelector(), namespaces,
                     Projected(CachedDeployment, {kPodKeysAnnotation})),
        svc_informer(client, clock, logger, ServicesPath(), OwnedSelector(), namespaces, Projected(CachedService, {})),
        // The owned Deployments' pods (their template carries the same label).
        pod_informer(client, clock, logger, PodsPath(), OwnedSelector(), namespaces, Projected(CachedPod, {})),
        hpa_informer(client, clock, logger, HorizontalPodAutoscalersPath(), OwnedSelector(), namespaces,
                     Projected(CachedHorizontalPodAutoscaler, {})),
        queue(kControllerName, clock, m.runtime.workqueue),
        expectations(clock),
        executor(client, recorder, autoscaler, expectations, clock, ExecutorSettings(flags), m.modelservice, logger,
                 Cache()),
        worker_pool({kControllerName, flags.concurrency}, executor, queue, clock, m.runtime.reconcile, logger) {
    runtime::Builder builder(queue);
    Watch(builder, {ms_informer, dep_informer, svc_informer, hpa_informer, pod_informer}, expectations, pods, queue);
    builder.Complete();
    // A new reading (or error) of an object's metric looks at the object again.
    poller.SetOnChange([this](const std::string& ns, const std::string& name) { queue.Add(ns + "/" + name); });
    // --cert-mode=self: the leader keeps the webhook's certificates (through
    // `client`, so its writes stop with the Lease too).
    if (flags.certs.mode == controller::certs::Mode::kSelf)
      certs = std::make_unique<controller::certs::Manager>(client, clock, flags.certs, m.certs, logger);
  }

  CachedReads Cache() {
    CachedReads cache;
    cache.model_service = [this](const std::string& key) { return ms_informer.Get(key); };
    cache.deployment = [this](const std::string& key) { return dep_informer.Get(key); };
    cache.service = [this](const std::string& key) { return svc_informer.Get(key); };
    cache.pods = [this](const std::string& key) { return pods.Summary(key); };
    cache.hpa = [this](const std::string& key) { return hpa_informer.Get(key); };
    return cache;
  }

  // The workers and the autoscaler's poller (Prometheus is read while
  // leading only). Stop: in-flight reconciles finish (queued keys too).
  // Abort: queued keys are dropped; the workers end with the reconcile they
  // are in, whose requests fail at once.
  std::unique_ptr<runtime::Runnable> Workers(int concurrency) {
    return runtime::Runnable::Of(
        [this, concurrency] {
          logger->info("caches synced; starting {} workers", concurrency);
          poller.Start();
          worker_pool.Start();
        },
        [this] {
          worker_pool.Stop();
          poller.Stop();
        },
        [this] {
          queue.ShutDownNow();
          worker_pool.Stop();
          poller.Stop();
        });
  }
  // Events still queued after SIGTERM are written for up to 2 s, once the
  // workers have drained and before the Lease is released (after it, the
  // write gate refuses them); none after a lost Lease.
  std::unique_ptr<runtime::Runnable> Events() {
    return runtime::Runnable::Of(
        nullptr, [this] { recorder.Shutdown(std::chrono::seconds(2)); },
        [this] { recorder.Shutdown(Clock::Duration::zero()); });
  }
  // Every replica watches the certificates; the leader keeps them, without
  // waiting for the ModelService caches.
  void AddCerts(runtime::Manager& mgr) {
    if (!certs) return;
    mgr.Add(runtime::Needs::kNothing, runtime::Runnable::Of([this] { certs->Start(); }, [this] { certs->Stop(); }))
        .Add(runtime::Needs::kLeadership, runtime::Runnable::Of([this] { certs->Lead(); }, nullptr));
  }

  std::shared_ptr<spdlog::logger> logger;
  kube::HttpClient client;
  kube::HttpClient events_client;
  KubeEventRecorder recorder;
  autoscale::Poller poller;  // Prometheus, off the reconcile workers
  autoscale::PrometheusAutoscaler autoscaler;
  PodIndex pods;                              // filled by pod_informer
  const std::vector<std::string> namespaces;  // empty: all
  InformerSet ms_informer, dep_informer, svc_informer, pod_informer, hpa_informer;
  WorkQueue queue;
  Expectations expectations;
  Executor executor;
  runtime::Controller worker_pool;
  std::unique_ptr<controller::certs::Manager> certs;  // --cert-mode=self only
};

std::optional<kube::RestConfig> LoadRestConfig(const Flags& flags, spdlog::logger& logger) {
  kube::RestConfig rest;
  try {
    rest = kube::ResolveConfig(flags.kubeconfig);
  } catch (const std::exception& e) {
    logger.error("cannot load the API server configuration: {}", e.what());
    return std::nullopt;
  }
  rest.qps = flags.kube_api_qps;
  rest.burst = flags.kube_api_burst;
  return rest;
}

int Run(int argc, char** argv) {
  Flags flags;
  if (auto done = ParseOrExit(argc, argv, &flags)) return *done;
  auto logger = flags.MakeLogger("controller");
  RaiseOpenFileLimit();  // the side endpoints' clients each hold a descriptor
  // libcurl's global set-up (all HTTP clients use it) before any thread starts.
  const kube::curl::GlobalInit curl;
  // Signals: blocked in every thread (inherited), taken by one thread.
  BlockTerminationSignals();
  const std::optional<kube::RestConfig> rest = LoadRestConfig(flags, *logger);
  if (!rest) return 1;

  SystemClock clock;
  Metrics m(flags);
  const std::string identity = DefaultIdentity();
  auto lease = flags.leader_elect ? std::make_unique<LeaseLock>(flags, *rest, clock, m.client, logger) : nullptr;
  auto secure = flags.metrics_secure ? std::make_unique<SecureMetricsSetup>(*rest, clock, m.client, logger) : nullptr;
  runtime::Manager mgr(clock, m.registry, m.runtime.leader_election, lease ? &lease->store : nullptr,
                       ManagerSettings(flags, identity, secure.get()), logger);
  Parts parts(flags, *rest, clock, m, identity, mgr.write_gate(), logger);
  mgr.AddCache(parts.ms_informer)
      .AddCache(parts.dep_informer)
      .AddCache(parts.svc_informer)
      .AddCache(parts.pod_informer)
      .AddCache(parts.hpa_informer)
      .Add(runtime::Needs::kLeadershipAndCaches, parts.Workers(flags.concurrency))
      .Add(runtime::Needs::kLeadership, parts.Events())
      // The Lease is lost: requests in flight are aborted.
      .OnAbort([&parts] {
        parts.client.Close();
        parts.events_client.Close();
      });
  parts.AddCerts(mgr);
  logger->info("starting modelservice-controller as {} against {} (namespace: {})", identity, rest->server,
               flags.ns.empty() ? "all" : flags.ns);
  SignalWatcher signals([&](int sig) {
    logger->info("received signal {}; shutting down", sig);
    mgr.Shutdown();
  });
  return mgr.Run();
}

}  // namespace

// jemalloc (linked unless under the sanitizers) reads this at start: its
// background thread returns freed pages to the kernel on the decay schedule
// even when the process is idle, so RSS falls back after a burst of load
// (without it, pages were only purged on later allocations). One arena: the
// informers, workers and clients allocate on a dozen threads, which
// jemalloc would spread over 4 arenas per core, each keeping its own free
// pages; with one, a cold start against 10,000 ModelServices peaked at 112
// instead of 151 MiB (bench/results/controller.md). The environment's
// MALLOC_CONF still overrides both.
extern "C" const char* const malloc_conf = "background_thread:true,narenas:1";

int main(int argc, char** argv) {
  try {
    // `helm test`'s check that the webhooks answer (check_admission.h).
    if (argc >= 2 && std::string_view(argv[1]) == "check-admission")
      return ms::controller::CheckAdmissionMain(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatal: %s\n", e.what());
    return 1;
  }
}
