// One event loop, in the model of Envoy's dispatcher: epoll for the file
// descriptors, an indexed min-heap of timers whose earliest deadline is
// epoll_wait's timeout (nothing wakes up to sweep), and tasks posted from
// other threads (an eventfd wakes the loop). Everything but Post() is for
// the loop's own thread.
//
//   EventLoop loop;  loop.Init(&error);
//   loop.Add(fd, EPOLLIN, tag);
//   EventLoop::Timer t([&] { ... });  loop.Arm(t, EventLoop::Now() + 1s);
//   loop.Run([&](uint64_t tag, uint32_t events) { ... });  // until Exit()
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "shared/transport/unique_fd.h"

namespace ms::transport {

class EventLoop {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using IoHandler = std::function<void(uint64_t tag, uint32_t events)>;

  // A timer the caller owns (one heap slot, no allocation to arm it); it
  // must be disarmed before it goes away.
  class Timer {
   public:
    explicit Timer(std::function<void()> fire) : fire_(std::move(fire)) {}
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;
    bool armed() const { return index_ != kNowhere; }
    TimePoint when() const { return when_; }

   private:
    friend class EventLoop;
    static constexpr size_t kNowhere = std::numeric_limits<size_t>::max();
    std::function<void()> fire_;
    TimePoint when_{};
    size_t index_ = kNowhere;  // in the heap
  };

  static TimePoint Now() { return std::chrono::steady_clock::now(); }

  bool Init(std::string* error);

  // epoll interest in `fd`; the loop hands `tag` to the IoHandler.
  bool Add(int fd, uint32_t events, uint64_t tag);
  void Modify(int fd, uint32_t events, uint64_t tag);
  void Remove(int fd);

  // Fires `timer` at `when` (moving it if it was armed).
  void Arm(Timer& timer, TimePoint when);
  void Disarm(Timer& timer);

  // Runs `task` on the loop's thread soon (thread-safe).
  void Post(std::function<void()> task);

  // Hands `tag` to the IoHandler (with EPOLLIN) once more after the events
  // of this round, as if epoll had reported it, and the next wait does not
  // block: for an edge-triggered descriptor left with bytes to read. Loop
  // thread only; what is activated in that turn waits for the round after.
  void Activate(uint64_t tag) { active_.push_back(tag); }

  // Dispatches I/O, activated tags, due timers and posted tasks until Exit(). False when
  // epoll_wait fails.
  bool Run(const IoHandler& on_io);
  void Exit() { exiting_ = true; }

 private:
  static constexpr uint64_t kWakeTag = ~uint64_t{0};
  int Timeout() const;  // epoll_wait's, in ms: until the earliest timer, or -1
  void FireDue();
  void RunPosted();
  void Place(size_t i);  // heap_[i] is in place, its index recorded
  void SiftUp(size_t i);
  void SiftDown(size_t i);
  void RemoveAt(size_t i);

  UniqueFd epoll_, wake_;
  std::vector<Timer*> heap_;      // min-heap by when_
  std::vector<uint64_t> active_;  // Activate()d, in order
  bool exiting_ = false;
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;  // under posted_mu_
};

}  // namespace ms::transport
