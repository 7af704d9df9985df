// modelservice-controller: its flags, then a manager::Manager (manager.h)
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
#include "controller/check_admission.h"
#include "controller/flags.h"
#include "controller/kube/config.h"
#include "controller/kube/curl_handles.h"
#include "controller/manager/manager.h"
#include "controller/modelservice/controller.h"
#include "controller/runtime/leader_election.h"
#include "controller/secure_metrics.h"
#include "controller/webhookcerts/manager.h"
#include "shared/clock/clock.h"
#include "shared/log/logging.h"
#include "shared/metrics/metrics.h"
#include "shared/process/open_files.h"
#include "shared/process/signals.h"
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
  std::string err = webhookcerts::CheckSettings(flags->certs);
  if (err.empty()) err = autoscale::CheckPrometheusAuthFiles(flags->prometheus_auth);  // readable at start
  if (!err.empty()) {
    std::cerr << "Error: " << err << "\n";
    return 2;
  }
  return std::nullopt;
}

// One registry; each subsystem's metrics declared in its metrics.h.
struct Metrics {
  explicit Metrics(const Flags& flags)
      : autoscaler(registry, flags.per_object_metrics), modelservice(registry, flags.per_object_metrics) {
    version::RegisterBuildInfo(registry);
  }
  metrics::Registry registry;
  kube::ClientMetrics client{registry};
  RuntimeMetrics runtime{registry};
  autoscale::AutoscalerMetrics autoscaler;
  ModelServiceMetrics modelservice;
  webhookcerts::CertificateMetrics certs{registry};
};

// The Lease through an API client of its own (its own connections and token
// bucket, no write gate: it must be able to write the Lease when not leading).
struct LeaseLock {
  LeaseLock(const Flags& flags, kube::RestConfig rest, const clock::Clock& clock, kube::ClientMetrics& client_metrics,
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

manager::ManagerOptions ManagerSettings(const Flags& flags, const std::string& identity, SecureMetricsSetup* secure) {
  manager::ManagerOptions o;
  o.metrics_address = flags.MetricsAddress();
  o.probe_address = flags.ProbeAddress();
  if (secure != nullptr) o.secure_metrics = secure->Secure();  // --metrics-secure only
  o.election.name = flags.leader_election_id;
  o.election.ns = flags.leader_election_namespace;
  o.election.identity = identity;
  return o;
}

// The ModelService controller's settings from the flags.
modelservice::ControllerOptions ControllerSettings(const Flags& flags) {
  modelservice::ControllerOptions o;
  o.namespaces = flags.Namespaces();
  o.concurrency = flags.concurrency;
  o.executor.plan.default_image = flags.default_image;
  // Whole seconds, rounded up, within what the API accepts for
  // behavior.scaleDown.stabilizationWindowSeconds (0..3600).
  o.executor.plan.hpa_scale_down_stabilization_seconds =
      static_cast<int>(std::clamp<int64_t>((flags.scale_down_stabilization.count() + 999) / 1000, 0, 3600));
  o.executor.autoscale_interval = flags.autoscale_interval;
  o.prometheus_url = flags.prometheus_url;
  o.prometheus.timeout = flags.prometheus_timeout;
  o.prometheus.auth = flags.prometheus_auth;
  // Queries every --autoscale-interval; the breaker opens after 3 failures
  // in a row for one interval, doubling up to 4 intervals (design.md §3).
  o.poller.interval = flags.autoscale_interval;
  o.poller.breaker.open_for = flags.autoscale_interval;
  o.poller.breaker.max_open_for = 4 * flags.autoscale_interval;
  o.autoscaler.queue_query_templates = flags.QueueQueries();
  o.autoscaler.gpu_query_template = flags.prometheus_gpu_query;
  o.autoscaler.stabilization_window = flags.scale_down_stabilization;
  o.autoscaler.max_age = 3 * flags.autoscale_interval;
  return o;
}

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
  process::RaiseOpenFileLimit();  // the side endpoints' clients each hold a descriptor
  // libcurl's global set-up (all HTTP clients use it) before any thread starts.
  const kube::curl::GlobalInit curl;
  // Signals: blocked in every thread (inherited), taken by one thread.
  process::BlockTerminationSignals();
  const std::optional<kube::RestConfig> rest = LoadRestConfig(flags, *logger);
  if (!rest) return 1;

  clock::SystemClock clock;
  Metrics m(flags);
  const std::string identity = DefaultIdentity();
  auto lease = flags.leader_elect ? std::make_unique<LeaseLock>(flags, *rest, clock, m.client, logger) : nullptr;
  auto secure = flags.metrics_secure ? std::make_unique<SecureMetricsSetup>(*rest, clock, m.client, logger) : nullptr;
  manager::Manager mgr(clock, m.registry, m.runtime.leader_election, lease ? &lease->store : nullptr,
                       ManagerSettings(flags, identity, secure.get()), logger);
  modelservice::Controller models(*rest, clock, {m.client, m.runtime, m.autoscaler, m.modelservice}, identity,
                                  mgr.write_gate(), ControllerSettings(flags), logger);
  models.SetupWithManager(mgr);
  // --cert-mode=self: every replica watches the webhook's certificates; the
  // leader keeps them (through the ModelServices' client, so its writes
  // stop with the Lease too), without waiting for the caches.
  std::unique_ptr<webhookcerts::Manager> certs;
  if (flags.certs.mode == webhookcerts::Mode::kSelf) {
    certs = std::make_unique<webhookcerts::Manager>(models.client(), clock, flags.certs, m.certs, logger);
    mgr.Add(manager::Needs::kNothing, manager::Runnable::Of([&certs] { certs->Start(); }, [&certs] { certs->Stop(); }))
        .Add(manager::Needs::kLeadership, manager::Runnable::Of([&certs] { certs->Lead(); }, nullptr));
  }
  logger->info("starting modelservice-controller as {} against {} (namespace: {})", identity, rest->server,
               flags.ns.empty() ? "all" : flags.ns);
  process::SignalWatcher signals([&](int sig) {
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
