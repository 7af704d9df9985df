#include "controller/runtime/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

namespace ms::runtime {

Controller::Controller(ControllerOptions options, Reconciler& reconciler, WorkQueue& queue, const Clock& clock,
                       ReconcileMetrics& metrics, std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      reconciler_(reconciler),
      queue_(queue),
      clock_(clock),
      logger_(std::move(logger)),
      metrics_(metrics),
      errors_(metrics.errors.Add({{"controller", options_.name}})),
      panics_(metrics.panics.Add({{"controller", options_.name}})),
      time_(metrics.time.Add({{"controller", options_.name}}, ReconcileMetrics::Buckets())),
      active_workers_(metrics.active_workers.Add({{"controller", options_.name}})) {
  // Every result's series exists from the start, so dashboards see zeros.
  for (const char* r : ReconcileMetrics::kResults) metrics_.total.Add({{"controller", options_.name}, {"result", r}});
  metrics_.max_concurrent.Add({{"controller", options_.name}}).Set(std::max(1, options_.concurrency));
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  for (int i = 0; i < std::max(1, options_.concurrency); ++i) {
    workers_.emplace_back([this] {
      while (ProcessNextItem()) {
      }
    });
  }
}

void Controller::Stop() {
  if (stopped_.exchange(true)) return;
  queue_.ShutDownWithDrain();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

bool Controller::ProcessNextItem() {
  auto key = queue_.Get();
  if (!key) return false;
  const auto start = clock_.Now();
  active_workers_.Increment();
  Result r;
  try {
    r = reconciler_.Reconcile(Request::FromKey(*key));
  } catch (const std::exception& e) {
    panics_.Increment();
    r = Result::Error(std::string("exception: ") + e.what());
  } catch (...) {
    panics_.Increment();
    r = Result::Error("exception of an unknown type");
  }
  active_workers_.Decrement();
  Handle(*key, r, std::chrono::duration<double>(clock_.Now() - start).count());
  queue_.Done(*key);
  return true;
}

void Controller::Handle(const std::string& key, const Result& r, double seconds) {
  time_.Observe(seconds);
  const char* result = "success";
  switch (r.outcome) {
    case Result::Outcome::kSuccess:
      queue_.Forget(key);
      if (r.after > Clock::Duration::zero()) queue_.AddAfter(key, r.after);
      break;
    case Result::Outcome::kError:
      result = "error";
      errors_.Increment();
      if (logger_) logger_->error("reconcile {}: {}", key, r.error);
      queue_.AddRateLimited(key);
      break;
    case Result::Outcome::kRequeue:
      result = "requeue";
      queue_.AddRateLimited(key);
      break;
    case Result::Outcome::kRequeueAfter:
      result = "requeue_after";
      queue_.Forget(key);
      queue_.AddAfter(key, r.after);
      break;
  }
  metrics_.total.Add({{"controller", options_.name}, {"result", result}}).Increment();
}

}  // namespace ms::runtime
