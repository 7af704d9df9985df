// modelservice-controller: wires flags, the API client, informers, the work
// queue, the executor, leader election, the autoscaler and the HTTP
// endpoints (/metrics, /healthz, /readyz). Signals are taken by a dedicated
// thread with sigwait(). Exit codes: 0 after SIGTERM/SIGINT (in-flight
// reconciles finished, Lease released), 1 when leadership is lost or start-up
// fails, 2 on bad flags.

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "base/logging.h"
#include "base/metrics.h"
#include "base/side_endpoints.h"
#include "base/signals.h"
#include "controller/autoscale/prometheus_autoscaler.h"
#include "controller/autoscale/prometheus_client.h"
#include "controller/flags.h"
#include "controller/kube/config.h"
#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "controller/modelservice/controller.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/leader_election.h"
#include "controller/runtime/workqueue.h"

namespace {

using namespace ms;
using namespace ms::controller;

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
};

int Run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  FlagsResult parsed = ParseFlags(args);
  const std::string program = argc > 0 ? argv[0] : "modelservice-controller";
  if (parsed.error) {
    std::cerr << "Error: " << *parsed.error << "\nRun '" << program << " --help' for usage.\n";
    return 2;
  }
  Flags flags = parsed.flags;
  if (flags.help) {
    std::cout << Usage(program);
    return 0;
  }
  if (flags.leader_election_namespace.empty()) flags.leader_election_namespace = DefaultLeaderElectionNamespace();

  const auto format = log::ParseFormat(flags.log_format).value_or(log::Format::kJson);
  const auto level = log::ParseLevel(flags.log_level).value_or(spdlog::level::info);
  auto logger = log::MakeLogger("controller", format, level);

  // libcurl's global set-up (both HTTP clients use it) before any thread starts.
  const kube::curl::GlobalInit curl;
  // Signals: blocked in every thread (inherited), taken by one thread.
  BlockTerminationSignals();
  Lifecycle life;
  SignalWatcher signal_watcher([&](int sig) {
    logger->info("received signal {}; shutting down", sig);
    life.Set(&Lifecycle::shutdown);
  });

  SystemClock clock;
  prometheus::Registry registry;
  const metrics::ProcessCollector process_metrics;

  kube::RestConfig rest;
  try {
    rest = kube::ResolveConfig(flags.kubeconfig);
  } catch (const std::exception& e) {
    logger->error("cannot load the API server configuration: {}", e.what());
    return 1;
  }
  rest.qps = flags.kube_api_qps;
  rest.burst = flags.kube_api_burst;
  kube::HttpClient client(rest, clock, logger, &registry);
  const std::string identity = DefaultIdentity();
  logger->info("starting modelservice-controller as {} against {} (namespace: {})", identity, rest.server,
               flags.ns.empty() ? "all" : flags.ns);

  KubeEventRecorder recorder(client, clock, identity, logger);
  autoscale::PrometheusAutoscaler autoscaler(std::make_shared<autoscale::PrometheusClient>(flags.prometheus_url),
                                             flags.prometheus_query, clock, flags.scale_down_stabilization,
                                             autoscale::kDefaultTolerance, &registry, logger);

  const std::string owned_selector = std::string(kLabelManagedBy) + "=" + kManagedByValue;
  kube::Informer ms_informer(client, clock, logger, ModelServicesPath(), "", flags.ns);
  kube::Informer dep_informer(client, clock, logger, DeploymentsPath(), owned_selector, flags.ns);
  kube::Informer svc_informer(client, clock, logger, ServicesPath(), owned_selector, flags.ns);

  CachedReads cache;
  cache.model_service = [&](const std::string& key) { return ms_informer.Get(key); };
  cache.deployment = [&](const std::string& key) { return dep_informer.Get(key); };
  cache.service = [&](const std::string& key) { return svc_informer.Get(key); };

  WorkQueueMetrics queue_metrics(registry);
  WorkQueue queue(kControllerName, clock, &queue_metrics);
  Options options;
  options.default_image = flags.default_image;
  Executor executor(client, recorder, &autoscaler, clock, options, logger, cache);
  ControllerConfig ccfg;
  ccfg.concurrency = flags.concurrency;
  ccfg.autoscale_interval = flags.autoscale_interval;
  Controller controller(executor, queue, clock, ccfg, &registry, logger);
  ms_informer.AddEventHandler(controller.ModelServiceHandler());
  dep_informer.AddEventHandler(controller.OwnedObjectHandler());
  svc_informer.AddEventHandler(controller.OwnedObjectHandler());

  // HTTP endpoints.
  auto synced = [&] { return ms_informer.HasSynced() && dep_informer.HasSynced() && svc_informer.HasSynced(); };
  HostPort metrics_addr, probe_addr;  // both checked when the flags were parsed
  ms::ParseBindAddress(flags.metrics_bind_address, &metrics_addr);
  ms::ParseBindAddress(flags.health_probe_bind_address, &probe_addr);
  SideEndpoints side(logger);
  auto ready = [&](std::string* why) {
    if (synced()) return true;
    *why = "informer caches not synced";
    return false;
  };
  std::string listen_error;
  if (!side.Start(
          metrics_addr, probe_addr, {&process_metrics, &registry}, [] { return true; }, ready, &listen_error)) {
    logger->error("{}", listen_error);
    return 1;
  }

  // Informers run on every replica, so a standby has warm caches.
  std::atomic<bool> stop_informers{false};
  std::vector<std::thread> informer_threads;
  for (kube::Informer* inf : {&ms_informer, &dep_informer, &svc_informer}) {
    informer_threads.emplace_back([inf, &stop_informers] { inf->Run(stop_informers); });
  }
  auto stop_all_informers = [&] {
    stop_informers = true;
    for (kube::Informer* inf : {&ms_informer, &dep_informer, &svc_informer}) inf->Stop();
    for (auto& t : informer_threads) t.join();
    informer_threads.clear();
  };

  std::unique_ptr<KubeLeaseStore> lease_store;
  std::unique_ptr<LeaderElector> elector;
  std::thread elector_thread;
  if (flags.leader_elect) {
    lease_store = std::make_unique<KubeLeaseStore>(client, flags.leader_election_namespace, flags.leader_election_id);
    LeaderElectionConfig lcfg;
    lcfg.name = flags.leader_election_id;
    lcfg.ns = flags.leader_election_namespace;
    lcfg.identity = identity;
    elector = std::make_unique<LeaderElector>(
        *lease_store, clock, lcfg,
        LeaderCallbacks{[&] { life.Set(&Lifecycle::leading); }, [&] { life.Set(&Lifecycle::lost); }}, &registry,
        logger);
    elector_thread = std::thread([&] {
      if (elector->Run() == LeaderElector::State::kLost) life.Set(&Lifecycle::lost);
    });
    logger->info("waiting to become leader of lease {}/{}", lcfg.ns, lcfg.name);
  } else {
    life.Set(&Lifecycle::leading);
  }

  bool started = false;
  int exit_code = 0;
  {
    std::unique_lock<std::mutex> lock(life.mu);
    while (true) {
      life.cv.wait_for(lock, std::chrono::milliseconds(200));
      if (life.shutdown) break;
      if (life.lost) {
        exit_code = 1;
        break;
      }
      if (life.leading && !started && synced()) {
        logger->info("caches synced; starting {} workers", flags.concurrency);
        controller.Start();
        started = true;
      }
    }
  }

  if (exit_code != 0) logger->error("leadership lost; stopping at once");
  // Stop taking keys; in-flight reconciles finish.
  controller.Stop();
  // Then give the Lease up (only after the workers are done).
  if (elector) {
    elector->Stop();
    elector_thread.join();
  }
  stop_all_informers();
  side.Stop();
  logger->info("stopped (exit code {})", exit_code);
  logger->flush();
  return exit_code;
}

}  // namespace

// jemalloc (linked unless under the sanitizers) reads this at start: its
// background thread returns freed pages to the kernel on the decay schedule
// even when the process is idle, so RSS falls back after a burst of load
// (without it, pages were only purged on later allocations).
extern "C" const char* const malloc_conf = "background_thread:true";

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatal: %s\n", e.what());
    return 1;
  }
}
