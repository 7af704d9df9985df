#include "controller/runtime/dispatcher.h"

#include <algorithm>
#include <limits>

namespace ms::runtime {

struct Dispatcher::Listener {
  explicit Listener(EventHandler h) : handler(std::move(h)) {}
  EventHandler handler;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<uint64_t, Delta>> buffer;  // under mu
  bool stopping = false;                          // under mu
  uint64_t handled = 0;                           // under Dispatcher::mu_
  std::thread thread;
};

Dispatcher::Dispatcher(std::string name, std::shared_ptr<spdlog::logger> logger)
    : name_(std::move(name)), logger_(std::move(logger)) {}

Dispatcher::~Dispatcher() { Stop(); }

void Dispatcher::AddHandler(EventHandler handler) {
  listeners_.push_back(std::make_unique<Listener>(std::move(handler)));
}

void Dispatcher::Start() {
  for (auto& l : listeners_) {
    l->thread = std::thread([this, &l = *l] {
      std::unique_lock<std::mutex> lock(l.mu);
      for (;;) {
        l.cv.wait(lock, [&l] { return l.stopping || !l.buffer.empty(); });
        if (l.stopping) return;
        auto [seq, delta] = std::move(l.buffer.front());
        l.buffer.pop_front();
        lock.unlock();
        Deliver(l.handler, delta);
        Handled(l, seq);
        lock.lock();
      }
    });
  }
}

void Dispatcher::Stop() {
  for (auto& l : listeners_) {
    {
      std::lock_guard<std::mutex> g(l->mu);
      l->stopping = true;
      l->buffer.clear();
    }
    l->cv.notify_all();
    if (l->thread.joinable()) l->thread.join();
  }
}

uint64_t Dispatcher::Distribute(std::vector<Delta> deltas) {
  uint64_t first = 0, last = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    first = seq_ + 1;
    seq_ += deltas.size();
    last = seq_;
  }
  for (auto& l : listeners_) {
    {
      std::lock_guard<std::mutex> g(l->mu);
      uint64_t seq = first;
      for (const Delta& d : deltas) l->buffer.emplace_back(seq++, d);
    }
    l->cv.notify_one();
  }
  return last;
}

void Dispatcher::WhenHandled(uint64_t seq, std::function<void()> done) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (LowestHandled() < seq) {
      waiters_.emplace_back(seq, std::move(done));
      return;
    }
  }
  done();
}

uint64_t Dispatcher::LowestHandled() const {
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (const auto& l : listeners_) lowest = std::min(lowest, l->handled);
  return lowest;
}

void Dispatcher::Handled(Listener& listener, uint64_t seq) {
  std::vector<std::function<void()>> due;
  {
    std::lock_guard<std::mutex> g(mu_);
    listener.handled = seq;
    const uint64_t lowest = LowestHandled();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->first > lowest) {
        ++it;
        continue;
      }
      due.push_back(std::move(it->second));
      it = waiters_.erase(it);
    }
  }
  for (auto& d : due) d();
}

void Dispatcher::Deliver(const EventHandler& h, const Delta& d) const {
  try {
    switch (d.type) {
      // A list's objects are decoded here, one delta at a time (store.h).
      case Delta::Type::kAdd:
        if (h.on_add) h.on_add(*d.object.Get());
        break;
      case Delta::Type::kUpdate:
        if (h.on_update) h.on_update(*d.old_object.Get(), *d.object.Get());
        break;
      case Delta::Type::kDelete:
        if (h.on_delete) h.on_delete(*d.old_object.Get());
        break;
    }
  } catch (const std::exception& e) {
    const char* what = d.type == Delta::Type::kAdd ? "add" : d.type == Delta::Type::kUpdate ? "update" : "delete";
    if (logger_)
      logger_->error("informer {}: {} handler for {} failed (event skipped): {}", name_, what, d.key, e.what());
  }
}

}  // namespace ms::runtime
