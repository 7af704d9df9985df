// Hands an informer's deltas to its event handlers, on the thread that
// decoded them (the watch's), each delta to every handler in the order they
// were added, before the next delta. Handlers must not block: the ones this
// controller has record what they saw and add keys to the work queue (a
// lock each), so a hand-off to threads of their own, as client-go's
// processorListener does for goroutines, would cost a thread wake-up per
// event and per handler for nothing (bench/results/controller.md, the
// wake-ups per object). What a handler throws is logged and that delta
// skipped for that handler.
#pragma once

#include <spdlog/logger.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/runtime/store.h"

namespace ms::runtime {

// What an informer calls for each change. Any may be empty.
struct EventHandler {
  std::function<void(const nlohmann::json& obj)> on_add;
  std::function<void(const nlohmann::json& old_obj, const nlohmann::json& new_obj)> on_update;
  std::function<void(const nlohmann::json& obj)> on_delete;
};

class Dispatcher {
 public:
  // `name` identifies the informer in the log.
  Dispatcher(std::string name, std::shared_ptr<spdlog::logger> logger);

  // Before the first Distribute().
  void AddHandler(EventHandler handler);
  // Calls the handlers for each delta, in order; returns when all have.
  // Called from one thread at a time.
  void Distribute(const std::vector<Delta>& deltas) const;

 private:
  void Skipped(const Delta& delta, const std::exception& e) const;  // logs it

  const std::string name_;
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<EventHandler> handlers_;
};

}  // namespace ms::runtime
