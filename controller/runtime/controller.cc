#include "controller/runtime/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <random>

#include "shared/log/logging.h"

namespace ms::runtime {

Controller::Controller(ControllerOptions options, Reconciler& reconciler, WorkQueue& queue, const clock::Clock& clock,
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
      active_workers_(metrics.active_workers.Add({{"controller", options_.name}})),
      id_prefix_(std::random_device{}() * 0x100000000ULL + std::random_device{}()) {
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

std::string Controller::NextReconcileId() {
  // A UUID's shape (8-4-4-4-12 hex) from the pool's random prefix and a
  // counter: unique in the process, as controller-runtime's reconcileID.
  const uint64_t n = next_reconcile_.fetch_add(1, std::memory_order_relaxed);
  char id[40];
  std::snprintf(id, sizeof id, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(id_prefix_ >> 32),
                static_cast<unsigned>((id_prefix_ >> 16) & 0xffff), static_cast<unsigned>(id_prefix_ & 0xffff),
                static_cast<unsigned>((n >> 48) & 0xffff), static_cast<unsigned long long>(n & 0xffffffffffffULL));
  return id;
}

bool Controller::ProcessNextItem() {
  auto key = queue_.Get();
  if (!key) return false;
  const Request request = Request::FromKey(*key);
  // Every line logged during this reconcile (by the reconciler too) carries
  // these fields.
  const log::FieldScope fields({{"controller", options_.name},
                                {"namespace", request.ns},
                                {"name", request.name},
                                {"reconcileID", NextReconcileId()}});
  const auto start = clock_.Now();
  active_workers_.Increment();
  Result r;
  try {
    r = reconciler_.Reconcile(request);
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
      if (r.after > clock::Clock::Duration::zero()) queue_.AddAfter(key, r.after);
      break;
    case Result::Outcome::kError:
      result = "error";
      errors_.Increment();
      if (logger_) {
        const log::FieldScope error({{"error", r.error}});
        logger_->error("Reconciler error");
      }
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
