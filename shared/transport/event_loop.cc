#include "shared/transport/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace ms::transport {

bool EventLoop::Init(std::string* error) {
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  wake_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (epoll_.get() < 0 || wake_.get() < 0 || !Add(wake_.get(), EPOLLIN, kWakeTag)) {
    *error = std::string("epoll/eventfd: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool EventLoop::Add(int fd, uint32_t events, uint64_t tag) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  return epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
}

void EventLoop::Modify(int fd, uint32_t events, uint64_t tag) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
}

void EventLoop::Remove(int fd) { epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> g(posted_mu_);
    posted_.push_back(std::move(task));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
}

void EventLoop::RunPosted() {
  std::uint64_t v;
  [[maybe_unused]] auto n = ::read(wake_.get(), &v, sizeof v);
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> g(posted_mu_);
    tasks.swap(posted_);
  }
  for (auto& t : tasks) t();
}

// ---- the timer heap: heap_[0] is due first; each timer knows its slot.

void EventLoop::Place(size_t i) { heap_[i]->index_ = i; }

void EventLoop::SiftUp(size_t i) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (heap_[parent]->when_ <= heap_[i]->when_) break;
    std::swap(heap_[parent], heap_[i]);
    Place(i);
    i = parent;
  }
  Place(i);
}

void EventLoop::SiftDown(size_t i) {
  for (;;) {
    size_t least = i;
    for (size_t child : {2 * i + 1, 2 * i + 2}) {
      if (child < heap_.size() && heap_[child]->when_ < heap_[least]->when_) least = child;
    }
    if (least == i) break;
    std::swap(heap_[least], heap_[i]);
    Place(i);
    i = least;
  }
  Place(i);
}

void EventLoop::RemoveAt(size_t i) {
  heap_[i]->index_ = Timer::kNowhere;
  Timer* moved = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;  // it was the last
  heap_[i] = moved;
  SiftUp(i);
  SiftDown(moved->index_);
}

void EventLoop::Arm(Timer& timer, TimePoint when) {
  if (timer.armed()) {
    if (timer.when_ == when) return;
    const bool earlier = when < timer.when_;
    timer.when_ = when;
    earlier ? SiftUp(timer.index_) : SiftDown(timer.index_);
    return;
  }
  timer.when_ = when;
  heap_.push_back(&timer);
  SiftUp(heap_.size() - 1);
}

void EventLoop::Disarm(Timer& timer) {
  if (timer.armed()) RemoveAt(timer.index_);
}

int EventLoop::Timeout() const {
  if (heap_.empty()) return -1;
  const auto left = heap_.front()->when_ - Now();
  if (left <= TimePoint::duration::zero()) return 0;
  // Rounded up: a timer is never found undue after the wait.
  return static_cast<int>(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1 << 30));
}

void EventLoop::FireDue() {
  const TimePoint now = Now();
  while (!heap_.empty() && heap_.front()->when_ <= now) {
    Timer* t = heap_.front();
    RemoveAt(0);
    t->fire_();  // may re-arm it, or arm and disarm others
  }
}

bool EventLoop::Run(const IoHandler& on_io) {
  std::array<epoll_event, 64> events;
  std::vector<uint64_t> again;
  exiting_ = false;
  while (!exiting_) {
    const int n =
        epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), active_.empty() ? Timeout() : 0);
    if (n < 0 && errno != EINTR) return false;
    for (int i = 0; i < n && !exiting_; ++i) {
      const epoll_event& e = events[static_cast<size_t>(i)];
      if (e.data.u64 == kWakeTag) {
        RunPosted();
      } else {
        on_io(e.data.u64, e.events);
      }
    }
    again.swap(active_);
    for (size_t i = 0; i < again.size() && !exiting_; ++i) on_io(again[i], EPOLLIN);
    again.clear();
    if (!exiting_) FireDue();
  }
  return true;
}

}  // namespace ms::transport
