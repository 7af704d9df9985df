// Kubernetes Events about a ModelService: what the reconciler asks for, and
// the recorder that writes them (events.k8s.io/v1).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "controller/kube/client.h"

namespace spdlog {
class logger;
}

namespace ms::controller {

struct Event {
  std::string type;     // Normal | Warning
  std::string reason;   // Created, Updated, Scaled, Deleted, CreateFailed, ...
  std::string action;   // Create, Update, Scale, Delete, Reconcile (events.k8s.io/v1 `action`)
  std::string message;  // the note

  bool operator==(const Event&) const = default;
};

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `regarding`: the ModelService the event is about (apiVersion, kind,
  // metadata name/namespace/uid/resourceVersion are read).
  virtual void Record(const nlohmann::json& regarding, const Event& event) = 0;
};

// The events.k8s.io/v1 Event object for `event` (name `<object>.<hex nanos>`
// as client-go does, reportingController modelops.dev/modelservice-controller).
nlohmann::json BuildEvent(const nlohmann::json& regarding, const Event& event, const std::string& reporting_instance,
                          Clock::WallTime now, uint64_t sequence);

// Writes Events through the API; failures are logged and dropped (an Event
// is best effort and never fails a reconcile).
class KubeEventRecorder final : public EventRecorder {
 public:
  KubeEventRecorder(kube::Client& client, const Clock& clock, std::string reporting_instance,
                    std::shared_ptr<spdlog::logger> logger = nullptr);
  void Record(const nlohmann::json& regarding, const Event& event) override;

 private:
  kube::Client& client_;
  const Clock& clock_;
  std::string instance_;
  std::shared_ptr<spdlog::logger> logger_;
  std::mutex mu_;
  uint64_t sequence_ = 0;
};

}  // namespace ms::controller
