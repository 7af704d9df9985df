// Wires the kinds a controller watches to its work queue, in one place, as
// controller-runtime's builder does:
//
//   runtime::Builder(queue)
//       .Observe(write_expectations)          // sees every For/Owns event first
//       .For(model_services)                  // an event queues the object itself
//       .Owns(deployments, OwnerKey)          // ... the key of its owner
//       .Watches(pods, pod_index.Handler())   // anything else
//       .Complete();                          // adds the handlers
//
// A source is whatever delivers watch events (an Informer; a fake in tests).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "controller/runtime/informer.h"
#include "controller/runtime/workqueue.h"

namespace ms::runtime {

// The work queue key an event of an object maps to ("" : none).
using KeyOf = std::function<std::string(const nlohmann::json& object)>;
// Sees an object of a For or Owns kind on each event, before its key is queued.
using Observer = std::function<void(const nlohmann::json& object, bool deleted)>;

class Builder {
 public:
  explicit Builder(WorkQueue& queue) : queue_(queue) {}

  // The reconciled kind: an event queues the object's own key.
  Builder& For(EventSource& source);
  // An owned kind: an event queues the key `owner` maps the object to; an
  // update that changed it queues the old owner too.
  Builder& Owns(EventSource& source, KeyOf owner);
  // Another kind, with a handler of its own.
  Builder& Watches(EventSource& source, EventHandler handler);
  // Every For and Owns event is shown to `observer` first.
  Builder& Observe(Observer observer);
  // Adds the handlers to the sources (before they run).
  void Complete();

 private:
  struct Watch {
    EventSource* source;
    KeyOf key;             // For/Owns
    EventHandler handler;  // Watches
  };
  EventHandler Enqueuer(KeyOf key) const;

  WorkQueue& queue_;
  Observer observer_;
  std::vector<Watch> watches_;
};

}  // namespace ms::runtime
