// Kubernetes Events about a ModelService: what the plan asks for, and
// the recorder that writes them (core/v1 Events, as client-go's
// tools/record writes them).
#pragma once

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "controller/kube/client.h"
#include "controller/runtime/event_correlator.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::modelservice {

struct Event {
  std::string type;     // Normal | Warning
  std::string reason;   // Created, Updated, Scaled, Deleted, CreateFailed, ...
  std::string action;   // Create, Update, Scale, Delete, Reconcile
  std::string message;  // the note

  bool operator==(const Event&) const = default;
};

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `regarding`: the ModelService the event is about (apiVersion, kind,
  // metadata name/namespace/uid/resourceVersion are read). Never blocks on
  // the API.
  virtual void Record(const nlohmann::json& regarding, const Event& event) = 0;
};

// The involvedObject of an Event about `regarding`: apiVersion, kind, name,
// namespace, uid and resourceVersion.
nlohmann::json EventReference(const nlohmann::json& regarding);

// The core/v1 Event object written for `event` about `involved_object` once
// correlated: name, count, message and first time from `c`; source
// component "modelservice-controller" on host `reporting_instance`;
// reportingComponent modelops.dev/modelservice-controller.
nlohmann::json BuildEvent(const nlohmann::json& involved_object, const Event& event,
                          const std::string& reporting_instance, const runtime::CorrelatedEvent& c,
                          clock::Clock::WallTime now);

// Records Events as client-go's broadcaster does: Record() only queues the
// event (at most `max_queued`; beyond, it is dropped with a warning); one
// thread correlates it (runtime::EventCorrelator: aggregation, counting, a spam
// filter per object) and writes it through `client`, which should be the
// Events' own API client, so that Events have a budget of their own and
// never slow the object writes. A new event is created; a repeated one is a
// PATCH of its count (a create again if it was deleted meanwhile). Transport
// errors, 429 and 5xx are retried up to 12 times, 10 s apart (the first
// wait randomized), as client-go does; other failures drop the event.
class KubeEventRecorder final : public EventRecorder {
 public:
  KubeEventRecorder(kube::Client& client, const clock::Clock& clock, std::string reporting_instance,
                    std::shared_ptr<spdlog::logger> logger = nullptr, size_t max_queued = 1000);
  ~KubeEventRecorder() override;  // Shutdown()
  KubeEventRecorder(const KubeEventRecorder&) = delete;
  KubeEventRecorder& operator=(const KubeEventRecorder&) = delete;

  void Record(const nlohmann::json& regarding, const Event& event) override;

  // Stops taking events, writes what is queued until `drain` has passed
  // (each tried once), drops the rest and joins the writer.
  void Shutdown(clock::Clock::Duration drain = clock::Clock::Duration::zero());
  // Blocks until every event queued so far has been handled (for tests).
  void Flush();
  uint64_t dropped() const;

 private:
  struct Pending {
    nlohmann::json involved_object;
    Event event;
  };
  void Run();
  void Write(const Pending& p);
  // Waits `d` on the clock; false when shut down meanwhile.
  bool Sleep(clock::Clock::Duration d);

  kube::Client& client_;
  const clock::Clock& clock_;
  const std::string instance_;
  std::shared_ptr<spdlog::logger> logger_;
  const size_t max_queued_;
  runtime::EventCorrelator correlator_;
  std::mt19937_64 rng_{std::random_device{}()};  // the writer thread's: retry jitter

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  size_t in_flight_ = 0;
  uint64_t dropped_ = 0;
  bool stopping_ = false;
  bool abandon_ = false;  // drop instead of writing
  clock::Clock::TimePoint drain_deadline_{};
  std::thread writer_;  // last: started after everything above
};

}  // namespace ms::modelservice
