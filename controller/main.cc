// modelservice-controller: wires flags, the API clients, informers, the work
// queue, the executor, leader election, the autoscaler and the HTTP
// endpoints (/metrics, /healthz, /readyz). Signals are taken by a dedicated
// thread with sigwait(). Exit codes: 0 after SIGTERM/SIGINT (in-flight
// reconciles finished, Lease released), 1 when leadership is lost or start-up
// fails, 2 on bad flags.
//
// Leadership fails closed (design.md §3): the elector is the API client's
// WriteGate, so no write leaves the process once the renew deadline has
// passed, whatever the threads are doing; when the elector reports the loss,
// the process aborts the requests in flight, drops the queue and exits 1.

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
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
#include "controller/runtime/workqueue.h"
#include "controller/secure_metrics.h"
#include "shared/base/clock.h"
#include "shared/base/logging.h"
#include "shared/base/metrics.h"
#include "shared/base/open_files.h"
#include "shared/base/signals.h"
#include "shared/transport/side_endpoints.h"
#include "shared/version/version.h"

namespace {

using namespace ms;
using namespace ms::controller;
using namespace ms::modelservice;
using namespace ms::runtime;

// What the main thread waits for.
struct Lifecycle {
  std::mutex mu;
  std::condition_variable cv;
  bool shutdown = false;  // SIGTERM / SIGINT
  bool leading = false;
  bool lost = false;

  void Set(bool Lifecycle::*field) {
    std::lock_guard<std::mutex> g(mu);
    this->*field = true;
    cv.notify_all();
  }
  // Something the main thread waits for may have changed (an informer synced).
  void Notify() {
    std::lock_guard<std::mutex> g(mu);
    cv.notify_all();
  }
};

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

// The elector with its own API client (own connections and token bucket, no
// write gate: it must be able to write the Lease when not leading).
struct Election {
  Election(const Flags& flags, kube::RestConfig rest, const Clock& clock, const std::string& identity, Lifecycle& life,
           kube::ClientMetrics& client_metrics, LeaderElectionMetrics& metrics,
           const std::shared_ptr<spdlog::logger>& logger)
      : client(OwnUserAgent(std::move(rest)), clock, client_metrics, logger),
        store(client, flags.leader_election_namespace, flags.leader_election_id),
        elector(store, clock, Config(flags, identity),
                LeaderCallbacks{[&life] { life.Set(&Lifecycle::leading); }, [&life] { life.Set(&Lifecycle::lost); }},
                metrics, logger) {}

  static kube::RestConfig OwnUserAgent(kube::RestConfig rest) {
    rest.user_agent += "/leader-election";
    return rest;
  }
  static LeaderElectionConfig Config(const Flags& flags, const std::string& identity) {
    LeaderElectionConfig c;
    c.name = flags.leader_election_id;
    c.ns = flags.leader_election_namespace;
    c.identity = identity;
    return c;
  }

  kube::HttpClient client;
  KubeLeaseStore store;
  LeaderElector elector;
};

// Every component, in the order they are built. The steps: Start(), then
// WaitUntilDone(), then Stop() (a signal) or Abort() (the Lease was lost).
class ControllerProcess {
 public:
  ControllerProcess(const Flags& flags, const kube::RestConfig& rest, Lifecycle& life,
                    std::shared_ptr<spdlog::logger> logger)
      : flags_(flags),
        life_(life),
        logger_(std::move(logger)),
        identity_(DefaultIdentity()),
        election_(flags.leader_elect ? std::make_unique<Election>(flags, rest, clock_, identity_, life, client_metrics_,
                                                                  runtime_metrics_.leader_election, logger_)
                                     : nullptr),
        // One token bucket per API group-version in each client; Events go
        // through a client of their own, so they never take the objects' tokens.
        client_(rest, clock_, client_metrics_, logger_, GatedOptions(election_.get())),
        events_client_(rest, clock_, client_metrics_, logger_, GatedOptions(election_.get())),
        recorder_(events_client_, clock_, identity_, logger_),
        poller_(std::make_shared<autoscale::PrometheusClient>(flags.prometheus_url, PrometheusOptions(flags), clock_),
                clock_, PollerSettings(flags), autoscaler_metrics_, logger_),
        autoscaler_(poller_, clock_, autoscaler_metrics_, AutoscalerSettings(flags), logger_),
        // The caches keep only what the plan reads (cached.h).
        // One informer per kind and watched namespace (all namespaces: one per kind).
        ms_informer_(client_, clock_, logger_, ModelServicesPath(), "", namespaces_, Projected(CachedModelService, {})),
        dep_informer_(client_, clock_, logger_, DeploymentsPath(), OwnedSelector(), namespaces_,
                      Projected(CachedDeployment, {kPodKeysAnnotation})),
        svc_informer_(client_, clock_, logger_, ServicesPath(), OwnedSelector(), namespaces_,
                      Projected(CachedService, {})),
        // The owned Deployments' pods (their template carries the same label).
        pod_informer_(client_, clock_, logger_, PodsPath(), OwnedSelector(), namespaces_, Projected(CachedPod, {})),
        hpa_informer_(client_, clock_, logger_, HorizontalPodAutoscalersPath(), OwnedSelector(), namespaces_,
                      Projected(CachedHorizontalPodAutoscaler, {})),
        queue_(kControllerName, clock_, runtime_metrics_.workqueue),
        expectations_(clock_),
        executor_(client_, recorder_, autoscaler_, expectations_, clock_, ExecutorSettings(flags),
                  modelservice_metrics_, logger_, Cache()),
        controller_({kControllerName, flags.concurrency}, executor_, queue_, clock_, runtime_metrics_.reconcile,
                    logger_),
        secure_metrics_(flags.metrics_secure
                            ? std::make_unique<SecureMetricsSetup>(rest, clock_, client_metrics_, logger_)
                            : nullptr),
        side_(logger_) {
    runtime::Builder builder(queue_);
    Watch(builder, {ms_informer_, dep_informer_, svc_informer_, hpa_informer_, pod_informer_}, expectations_, pods_,
          queue_);
    builder.Complete();
    // A new reading (or error) of an object's metric looks at the object again.
    poller_.SetOnChange([this](const std::string& ns, const std::string& name) { queue_.Add(ns + "/" + name); });
    for (InformerSet* inf : Informers()) inf->OnSynced([&life] { life.Notify(); });
    build::RegisterBuildInfo(registry_);
    // --cert-mode=self: the leader keeps the webhook's certificates (through
    // client_, so its writes stop with the Lease too).
    if (flags.certs.mode == controller::certs::Mode::kSelf)
      certs_ = std::make_unique<controller::certs::Manager>(client_, clock_, flags.certs, cert_metrics_, logger_);
    logger_->info("starting modelservice-controller as {} against {} (namespace: {})", identity_, rest.server,
                  flags.ns.empty() ? "all" : flags.ns);
  }

  // Endpoints, informers (on every replica, so a standby has warm caches),
  // then the election. False when an endpoint cannot listen.
  bool Start() {
    std::string error;
    if (!StartEndpoints(&error)) {
      logger_->error("{}", error);
      return false;
    }
    for (InformerSet* set : Informers()) {
      for (Informer* inf : set->Informers())
        informer_threads_.emplace_back([inf](std::stop_token stop) { inf->Run(stop); });
    }
    if (certs_) certs_->Start();
    if (election_) {
      elector_thread_ = std::thread([this] {
        if (election_->elector.Run() == LeaderElector::State::kLost) life_.Set(&Lifecycle::lost);
      });
      logger_->info("waiting to become leader of lease {}/{}", flags_.leader_election_namespace,
                    flags_.leader_election_id);
    } else {
      life_.Set(&Lifecycle::leading);
    }
    return true;
  }

  // Starts the workers once leading with synced caches; returns on a signal
  // (false) or when the Lease is lost (true).
  bool WaitUntilDone() {
    bool started = false;
    std::unique_lock<std::mutex> lock(life_.mu);
    bool certs_leading = false;
    while (!life_.shutdown && !life_.lost) {
      if (certs_ && !certs_leading && life_.leading) {
        certs_->Lead();  // without waiting for the ModelService caches
        certs_leading = true;
      }
      if (!started && life_.leading && Synced()) {
        logger_->info("caches synced; starting {} workers", flags_.concurrency);
        poller_.Start();  // Prometheus is read while leading only
        controller_.Start();
        started = true;
      }
      life_.cv.wait(lock);  // a signal, leadership, its loss, or an informer's sync
    }
    return life_.lost;
  }

  // SIGTERM: in-flight reconciles finish (queued keys too), then the Lease
  // is released so that a standby takes over at its next retry.
  void Stop() {
    controller_.Stop();
    poller_.Stop();
    if (certs_) certs_->Stop();
    if (election_) {
      election_->elector.Stop();
      elector_thread_.join();
    }
    // Events still queued are written for a moment after SIGTERM.
    recorder_.Shutdown(std::chrono::seconds(2));
    StopTheRest();
  }

  // The Lease is lost: writes are already refused by the gate. Requests in
  // flight are aborted, queued keys dropped (no drain); the workers end with
  // the reconcile they are in, whose requests now fail at once.
  void Abort() {
    logger_->error("leadership lost: no write leaves this process any more; exiting without draining the queue");
    for (InformerSet* inf : Informers()) inf->Stop();  // before Close(), so they do not log its refusals
    client_.Close();
    events_client_.Close();
    if (certs_) certs_->Stop();
    queue_.ShutDownNow();
    controller_.Stop();
    poller_.Stop();
    recorder_.Shutdown(Clock::Duration::zero());  // no Event after a lost lease
    if (elector_thread_.joinable()) elector_thread_.join();
    StopTheRest();
  }

 private:
  static kube::HttpClientOptions GatedOptions(const Election* election) {
    kube::HttpClientOptions o;
    if (election != nullptr) o.write_gate = &election->elector;
    return o;
  }
  // The transform, and the annotations it reads (the rest are left out while
  // parsing: a tenant's annotations cost the controller nothing).
  static runtime::InformerOptions Projected(runtime::Transform t, kube::KeptAnnotations annotations) {
    runtime::InformerOptions o;
    o.transform = std::move(t);
    o.annotations = std::move(annotations);
    return o;
  }
  static std::string OwnedSelector() { return std::string(kLabelManagedBy) + "=" + kManagedByValue; }
  static ExecutorOptions ExecutorSettings(const Flags& flags) {
    ExecutorOptions o;
    o.plan.default_image = flags.default_image;
    // Whole seconds, rounded up, within what the API accepts for
    // behavior.scaleDown.stabilizationWindowSeconds (0..3600).
    o.plan.hpa_scale_down_stabilization_seconds =
        static_cast<int>(std::clamp<int64_t>((flags.scale_down_stabilization.count() + 999) / 1000, 0, 3600));
    o.autoscale_interval = flags.autoscale_interval;
    return o;
  }
  static autoscale::PrometheusClientOptions PrometheusOptions(const Flags& flags) {
    autoscale::PrometheusClientOptions o;
    o.timeout = flags.prometheus_timeout;
    o.auth = flags.prometheus_auth;
    return o;
  }
  // Queries every --autoscale-interval; the breaker opens after 3 failures
  // in a row for one interval, doubling up to 4 intervals (design.md §3).
  static autoscale::PollerOptions PollerSettings(const Flags& flags) {
    autoscale::PollerOptions o;
    o.interval = flags.autoscale_interval;
    o.breaker.open_for = flags.autoscale_interval;
    o.breaker.max_open_for = 4 * flags.autoscale_interval;
    return o;
  }
  static autoscale::AutoscalerOptions AutoscalerSettings(const Flags& flags) {
    autoscale::AutoscalerOptions o;
    o.queue_query_templates = flags.QueueQueries();
    o.gpu_query_template = flags.prometheus_gpu_query;
    o.stabilization_window = flags.scale_down_stabilization;
    o.max_age = 3 * flags.autoscale_interval;
    return o;
  }
  CachedReads Cache() {
    CachedReads cache;
    cache.model_service = [this](const std::string& key) { return ms_informer_.Get(key); };
    cache.deployment = [this](const std::string& key) { return dep_informer_.Get(key); };
    cache.service = [this](const std::string& key) { return svc_informer_.Get(key); };
    cache.pods = [this](const std::string& key) { return pods_.Summary(key); };
    cache.hpa = [this](const std::string& key) { return hpa_informer_.Get(key); };
    return cache;
  }
  std::vector<InformerSet*> Informers() {
    return {&ms_informer_, &dep_informer_, &svc_informer_, &pod_informer_, &hpa_informer_};
  }
  bool Synced() const {
    return ms_informer_.HasSynced() && dep_informer_.HasSynced() && svc_informer_.HasSynced() &&
           pod_informer_.HasSynced() && hpa_informer_.HasSynced();
  }

  bool StartEndpoints(std::string* error) {
    auto ready = [this](std::string* why) {
      if (Synced()) return true;
      *why = "informer caches not synced";
      return false;
    };
    return side_.Start(
        flags_.MetricsAddress(), flags_.ProbeAddress(), registry_, [] { return true; }, ready, error,
        secure_metrics_ ? secure_metrics_->Secure() : transport::SecureMetrics{});
  }

  void StopTheRest() {
    for (InformerSet* inf : Informers()) inf->Stop();
    informer_threads_.clear();  // request_stop + join
    side_.Stop();
  }

  const Flags& flags_;
  Lifecycle& life_;
  std::shared_ptr<spdlog::logger> logger_;
  SystemClock clock_;
  // One registry; each subsystem's metrics declared in its metrics.h.
  metrics::Registry registry_;
  kube::ClientMetrics client_metrics_{registry_};
  RuntimeMetrics runtime_metrics_{registry_};
  autoscale::AutoscalerMetrics autoscaler_metrics_{registry_, flags_.per_object_metrics};
  ModelServiceMetrics modelservice_metrics_{registry_, flags_.per_object_metrics};
  controller::certs::CertificateMetrics cert_metrics_{registry_};
  const std::string identity_;
  std::unique_ptr<Election> election_;
  kube::HttpClient client_;
  kube::HttpClient events_client_;
  KubeEventRecorder recorder_;
  autoscale::Poller poller_;  // Prometheus, off the reconcile workers
  autoscale::PrometheusAutoscaler autoscaler_;
  PodIndex pods_;                                                    // filled by pod_informer_
  const std::vector<std::string> namespaces_ = flags_.Namespaces();  // empty: all
  InformerSet ms_informer_, dep_informer_, svc_informer_, pod_informer_, hpa_informer_;
  WorkQueue queue_;
  Expectations expectations_;
  Executor executor_;
  runtime::Controller controller_;
  std::unique_ptr<SecureMetricsSetup> secure_metrics_;  // --metrics-secure only; outlives the endpoints
  transport::SideEndpoints side_;
  std::unique_ptr<controller::certs::Manager> certs_;  // --cert-mode=self only
  std::vector<std::jthread> informer_threads_;
  std::thread elector_thread_;
};

int Run(int argc, char** argv) {
  Flags flags;
  if (auto done = ParseOrExit(argc, argv, &flags)) return *done;

  auto logger = flags.MakeLogger("controller");
  // The side endpoints' clients each hold a descriptor.
  RaiseOpenFileLimit();

  // libcurl's global set-up (all HTTP clients use it) before any thread starts.
  const kube::curl::GlobalInit curl;
  // Signals: blocked in every thread (inherited), taken by one thread.
  BlockTerminationSignals();
  Lifecycle life;
  SignalWatcher signal_watcher([&](int sig) {
    logger->info("received signal {}; shutting down", sig);
    life.Set(&Lifecycle::shutdown);
  });

  kube::RestConfig rest;
  try {
    rest = kube::ResolveConfig(flags.kubeconfig);
  } catch (const std::exception& e) {
    logger->error("cannot load the API server configuration: {}", e.what());
    return 1;
  }
  rest.qps = flags.kube_api_qps;
  rest.burst = flags.kube_api_burst;

  ControllerProcess process(flags, rest, life, logger);
  if (!process.Start()) return 1;
  const bool lost = process.WaitUntilDone();
  if (lost) {
    process.Abort();
  } else {
    process.Stop();
  }
  const int exit_code = lost ? 1 : 0;
  logger->info("stopped (exit code {})", exit_code);
  logger->flush();
  return exit_code;
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
