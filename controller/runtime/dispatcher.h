// Hands an informer's deltas to its event handlers, each on a thread of its
// own through an unbounded buffer of its own (client-go's
// processorListener): the watch that feeds the store only appends to the
// buffers, so a slow handler delays nobody but itself, and never the socket.
// Each handler sees the deltas in the order they were distributed. What a
// handler throws is logged and that delta skipped.
#pragma once

#include <spdlog/logger.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  ~Dispatcher();  // Stop()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Before Start().
  void AddHandler(EventHandler handler);
  // Starts one thread per handler.
  void Start();
  // Drops what is still buffered and joins the threads.
  void Stop();

  // Appends the deltas to every handler's buffer; returns the sequence
  // number of the last one (the count distributed so far).
  uint64_t Distribute(std::vector<Delta> deltas);
  // Calls `done` once every handler has handled the deltas up to `seq`
  // (at once when they have, or when there are no handlers), on the thread
  // of the handler that finished last.
  void WhenHandled(uint64_t seq, std::function<void()> done);

 private:
  struct Listener;
  void Deliver(const EventHandler& handler, const Delta& delta) const;
  void Handled(Listener& listener, uint64_t seq);
  uint64_t LowestHandled() const;  // with mu_ held

  const std::string name_;
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<std::unique_ptr<Listener>> listeners_;

  mutable std::mutex mu_;  // seq_, waiters_, each listener's handled
  uint64_t seq_ = 0;
  std::vector<std::pair<uint64_t, std::function<void()>>> waiters_;
};

}  // namespace ms::runtime
