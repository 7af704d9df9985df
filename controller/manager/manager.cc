#include "controller/manager/manager.h"

#include <spdlog/logger.h>

#include <algorithm>
#include <utility>

namespace ms::manager {

namespace {

class FuncRunnable final : public Runnable {
 public:
  FuncRunnable(std::function<void()> start, std::function<void()> stop, std::function<void()> abort)
      : start_(std::move(start)), stop_(std::move(stop)), abort_(abort ? std::move(abort) : stop_) {}
  void Start() override { Call(start_); }
  void Stop() override { Call(stop_); }
  void Abort() override { Call(abort_); }

 private:
  static void Call(const std::function<void()>& f) {
    if (f) f();
  }
  std::function<void()> start_, stop_, abort_;
};

}  // namespace

std::unique_ptr<Runnable> Runnable::Of(std::function<void()> start, std::function<void()> stop,
                                       std::function<void()> abort) {
  return std::make_unique<FuncRunnable>(std::move(start), std::move(stop), std::move(abort));
}

Manager::Manager(const clock::Clock& clock, const metrics::Registry& registry,
                 runtime::LeaderElectionMetrics& election_metrics, runtime::LeaseStore* lease, ManagerOptions options,
                 std::shared_ptr<spdlog::logger> logger)
    : registry_(registry), options_(std::move(options)), logger_(std::move(logger)), endpoints_(logger_) {
  if (lease != nullptr) {
    elector_ = std::make_unique<runtime::LeaderElector>(
        *lease, clock, options_.election,
        runtime::LeaderCallbacks{[this] { Set(&Manager::leading_); }, [this] { Set(&Manager::lost_); }},
        election_metrics, logger_);
  }
}

// After Run() nothing is left running, and the caches and Runnables may
// already be gone (built after the Manager, for its write gate). Only when
// Run() did not finish are the threads stopped here.
Manager::~Manager() {
  if (elector_thread_.joinable()) {
    elector_->Stop();
    elector_thread_.join();
  }
  if (!informer_threads_.empty()) StopTheRest();
}

Manager& Manager::AddCache(runtime::InformerSet& cache) {
  cache.OnSynced([this] { Notify(); });
  caches_.push_back(&cache);
  return *this;
}

Manager& Manager::Add(Needs needs, std::unique_ptr<Runnable> runnable) {
  runnables_.push_back({needs, std::move(runnable)});
  return *this;
}

Manager& Manager::OnAbort(std::function<void()> hook) {
  on_abort_.push_back(std::move(hook));
  return *this;
}

int Manager::Run() {
  if (!Start()) return 1;
  const bool lost = WaitUntilDone();
  if (lost) {
    Abort();
  } else {
    Stop();
  }
  const int exit_code = lost ? 1 : 0;
  logger_->info("stopped (exit code {})", exit_code);
  logger_->flush();
  return exit_code;
}

void Manager::Shutdown() { Set(&Manager::shutdown_); }

bool Manager::Synced() const {
  return std::ranges::all_of(caches_, [](const runtime::InformerSet* c) { return c->HasSynced(); });
}

bool Manager::Ready(std::string* why) const {
  if (Synced()) return true;
  *why = "informer caches not synced";
  return false;
}

// Endpoints, the caches (on every replica, so a standby has them warm), what
// needs nothing, then the election. False when an endpoint cannot listen.
bool Manager::Start() {
  std::string error;
  if (!endpoints_.Start(
          options_.metrics_address, options_.probe_address, registry_, [] { return true; },
          [this](std::string* why) { return Ready(why); }, &error, options_.secure_metrics)) {
    logger_->error("{}", error);
    return false;
  }
  for (runtime::InformerSet* set : caches_) {
    for (runtime::Informer* inf : set->Informers())
      informer_threads_.emplace_back([inf](std::stop_token stop) { inf->Run(stop); });
  }
  StartAll(Needs::kNothing);
  if (elector_) {
    elector_thread_ = std::thread([this] {
      if (elector_->Run() == runtime::LeaderElector::State::kLost) Set(&Manager::lost_);
    });
    logger_->info("waiting to become leader of lease {}/{}", options_.election.ns, options_.election.name);
  } else {
    Set(&Manager::leading_);
  }
  return true;
}

// Starts what needs leadership once leading (without waiting for the
// caches), then what needs the caches too; returns on Shutdown() (false) or
// when the Lease is lost (true).
bool Manager::WaitUntilDone() {
  std::unique_lock<std::mutex> lock(mu_);
  bool leader_started = false, caches_started = false;
  while (!shutdown_ && !lost_) {
    if (!leader_started && leading_) {
      StartAll(Needs::kLeadership);
      leader_started = true;
    }
    if (!caches_started && leading_ && Synced()) {
      StartAll(Needs::kLeadershipAndCaches);
      caches_started = true;
    }
    cv_.wait(lock);
  }
  return lost_;
}

void Manager::StartAll(Needs needs) {
  for (Entry& e : runnables_) {
    if (e.needs != needs) continue;
    e.runnable->Start();
    e.started = true;
  }
}

// The started Runnables of one group, in the reverse of their start order.
void Manager::EndAll(Needs needs, void (Runnable::*end)()) {
  // Not std::views::reverse: clang 14 (the sanitizer builds) cannot
  // compile libstdc++ 12's ranges.
  for (auto it = runnables_.rbegin(); it != runnables_.rend(); ++it) {
    Entry& e = *it;
    if (e.needs != needs || !e.started) continue;
    ((*e.runnable).*end)();
    e.started = false;
  }
}

// Shutdown(): the workers drain, then the Lease is released so that a
// standby, which watches it, takes over at once.
void Manager::Stop() {
  EndAll(Needs::kLeadershipAndCaches, &Runnable::Stop);
  EndAll(Needs::kLeadership, &Runnable::Stop);
  EndAll(Needs::kNothing, &Runnable::Stop);
  if (elector_) {
    elector_->Stop();
    elector_thread_.join();
  }
  StopTheRest();
}

// The Lease is lost: writes are already refused by the gate. The hooks
// abort the requests in flight; queued work is dropped, not drained.
void Manager::Abort() {
  logger_->error("leadership lost: no write leaves this process any more; exiting without draining the queue");
  for (runtime::InformerSet* c : caches_) c->Stop();  // before the hooks, so they do not log the refusals
  for (auto& hook : on_abort_) hook();
  EndAll(Needs::kNothing, &Runnable::Abort);
  EndAll(Needs::kLeadership, &Runnable::Abort);
  EndAll(Needs::kLeadershipAndCaches, &Runnable::Abort);
  if (elector_thread_.joinable()) elector_thread_.join();
  StopTheRest();
}

void Manager::StopTheRest() {
  for (runtime::InformerSet* c : caches_) c->Stop();
  informer_threads_.clear();  // request_stop + join
  endpoints_.Stop();
}

void Manager::Set(bool Manager::*field) {
  std::lock_guard<std::mutex> g(mu_);
  this->*field = true;
  cv_.notify_all();
}

void Manager::Notify() {
  std::lock_guard<std::mutex> g(mu_);
  cv_.notify_all();
}

}  // namespace ms::manager
