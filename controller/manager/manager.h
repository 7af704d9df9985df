// The controller's process around its parts, as controller-runtime's
// Manager: it runs the caches (informer sets) on every replica, so that a
// standby has them warm, serves /metrics, /healthz and /readyz (ready once
// every cache has synced), runs the leader election (none: it leads at
// once), and starts each Runnable when what it needs is there:
//
//   manager::Manager mgr(clock, registry, election_metrics, &lease_store, options, logger);
//   mgr.AddCache(model_services).AddCache(deployments)
//       .Add(Needs::kNothing, std::move(watcher))            // every replica, at start
//       .Add(Needs::kLeadership, std::move(keeper))          // once leading
//       .Add(Needs::kLeadershipAndCaches, std::move(workers)) // once leading with synced caches
//       .OnAbort([&] { client.Close(); });
//   SignalWatcher signals([&](int) { mgr.Shutdown(); });
//   return mgr.Run();  // 0 after Shutdown(), 1 when the Lease is lost or start-up fails
//
// Leaving, in this order. After Shutdown() (SIGTERM): the Runnables that
// need leadership and caches, those that need leadership, those that need
// nothing (each group in the reverse of its start order; the workers drain
// the queue, then what needs leadership, e.g. the Events still queued, is
// written while the Lease is still ours), then the Lease is released, then
// the caches and the endpoints. When the Lease is lost: a log line, the
// caches stop, the OnAbort hooks (requests in flight fail at once), every
// Runnable's Abort() (those that need nothing first), then the rest.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/kube/write_gate.h"
#include "controller/runtime/informer_set.h"
#include "controller/runtime/leader_election.h"
#include "controller/runtime/metrics.h"
#include "shared/clock/clock.h"
#include "shared/flags/flags.h"
#include "shared/metrics/metrics.h"
#include "shared/transport/side_endpoints.h"

namespace spdlog {
class logger;
}

namespace ms::manager {

// Something the Manager starts and stops.
class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual void Start() = 0;
  // Shutdown(): finishes the work in flight.
  virtual void Stop() = 0;
  // The Lease is lost: stops without finishing queued work. Stop() unless
  // overridden.
  virtual void Abort() { Stop(); }

  // A Runnable of functions; `abort` empty: `stop`; any may be empty.
  static std::unique_ptr<Runnable> Of(std::function<void()> start, std::function<void()> stop,
                                      std::function<void()> abort = nullptr);
};

// When the Manager starts a Runnable.
enum class Needs {
  kNothing,              // at start, on every replica
  kLeadership,           // once this replica leads
  kLeadershipAndCaches,  // once it leads and every cache has synced
};

struct ManagerOptions {
  flags::HostPort metrics_address, probe_address;
  transport::SecureMetrics secure_metrics;  // ctx set: /metrics over HTTPS behind its gate
  runtime::LeaderElectionConfig election;   // with a runtime::LeaseStore
};

class Manager {
 public:
  // `lease`: where the Lease lives, nullptr for no election (the Manager
  // leads at once); it, `clock`, `registry` (served on /metrics) and
  // `election_metrics` must outlive the Manager. Throws
  // std::invalid_argument when the election's config is invalid.
  Manager(const clock::Clock& clock, const metrics::Registry& registry,
          runtime::LeaderElectionMetrics& election_metrics, runtime::LeaseStore* lease, ManagerOptions options,
          std::shared_ptr<spdlog::logger> logger);
  ~Manager();  // Run() leaves nothing running
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // What API clients whose writes need leadership ask (design.md §3):
  // nullptr without election.
  const kube::WriteGate* write_gate() const { return elector_.get(); }

  // All before Run(). A cache's informers run on threads of their own; its
  // OnSynced is the Manager's.
  Manager& AddCache(runtime::InformerSet& cache);
  Manager& Add(Needs needs, std::unique_ptr<Runnable> runnable);
  // Called when the Lease is lost, once the caches have stopped and before
  // any Runnable's Abort().
  Manager& OnAbort(std::function<void()> hook);

  // Starts everything and returns when done: 0 after Shutdown(), 1 when the
  // Lease was lost or an endpoint could not listen.
  int Run();
  // Ends Run() as SIGTERM does. Thread-safe, any time.
  void Shutdown();

  // Every cache has synced (/readyz).
  bool Synced() const;
  // /readyz: false, and why, until every cache has synced.
  bool Ready(std::string* why) const;
  int probe_port() const { return endpoints_.probe_port(); }
  int metrics_port() const { return endpoints_.metrics_port(); }

 private:
  struct Entry {
    Needs needs;
    std::unique_ptr<Runnable> runnable;
    bool started = false;
  };
  bool Start();
  bool WaitUntilDone();
  void StartAll(Needs needs);
  void EndAll(Needs needs, void (Runnable::*end)());
  void Stop();
  void Abort();
  void StopTheRest();
  void Set(bool Manager::*field);
  void Notify();

  const metrics::Registry& registry_;
  const ManagerOptions options_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<runtime::LeaderElector> elector_;  // null without election
  std::vector<runtime::InformerSet*> caches_;
  std::vector<Entry> runnables_;  // in the order added
  std::vector<std::function<void()>> on_abort_;
  transport::SideEndpoints endpoints_;

  std::mutex mu_;
  std::condition_variable cv_;  // a signal, leadership, its loss, or a cache's sync
  bool shutdown_ = false;
  bool leading_ = false;
  bool lost_ = false;

  std::vector<std::jthread> informer_threads_;
  std::thread elector_thread_;
};

}  // namespace ms::manager
