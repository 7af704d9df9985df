// The event loop's timer heap and posted tasks (shared/transport/event_loop.h).
#include "shared/transport/event_loop.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>

#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace ms::transport {
namespace {

using namespace std::chrono_literals;

// Deadlines already past fire at once, in deadline order, whatever order
// they were armed, moved and disarmed in: the heap, not the clock, is tested.
TEST(EventLoop, TimersFireInDeadlineOrderAndCanBeMovedOrDisarmed) {
  EventLoop loop;
  std::string error;
  ASSERT_TRUE(loop.Init(&error)) << error;
  std::vector<int> fired;
  std::vector<std::unique_ptr<EventLoop::Timer>> timers;
  for (int i = 0; i < 8; ++i) timers.push_back(std::make_unique<EventLoop::Timer>([&fired, i] { fired.push_back(i); }));
  const auto t0 = EventLoop::Now() - 1h;
  const int order[] = {5, 2, 7, 0, 3, 6, 1, 4};  // timer i is due at t0 + position of i in this list
  for (int pos = 0; pos < 8; ++pos) loop.Arm(*timers[order[pos]], t0 + pos * 1ms);
  loop.Arm(*timers[4], t0 - 1ms);   // moved first
  loop.Arm(*timers[5], t0 + 20ms);  // moved last
  loop.Disarm(*timers[3]);
  EXPECT_FALSE(timers[3]->armed());
  EventLoop::Timer last([&] { loop.Exit(); });
  loop.Arm(last, t0 + 30ms);
  ASSERT_TRUE(loop.Run([](uint64_t, uint32_t) {}));
  EXPECT_EQ(fired, (std::vector<int>{4, 2, 7, 0, 6, 1, 5}));
  for (auto& t : timers) EXPECT_FALSE(t->armed());
}

TEST(EventLoop, ATaskPostedFromAnotherThreadWakesTheLoop) {
  EventLoop loop;
  std::string error;
  ASSERT_TRUE(loop.Init(&error)) << error;
  EventLoop::Timer never([] { ADD_FAILURE() << "a timer an hour away fired"; });
  loop.Arm(never, EventLoop::Now() + 1h);  // the loop sleeps on it
  bool ran = false;
  std::thread poster([&] {
    loop.Post([&] {
      ran = true;
      loop.Exit();
    });
  });
  ASSERT_TRUE(loop.Run([](uint64_t, uint32_t) {}));
  poster.join();
  EXPECT_TRUE(ran);
  loop.Disarm(never);
}

// An activated tag is handed to the handler after the round's events, once,
// without the loop sleeping (no descriptor is ready and no timer is due
// soon); one activated during that turn waits for the next round.
TEST(EventLoop, AnActivatedTagIsDrivenOnceMoreWithoutWaiting) {
  EventLoop loop;
  std::string error;
  ASSERT_TRUE(loop.Init(&error)) << error;
  EventLoop::Timer never([] { ADD_FAILURE() << "the loop slept until a timer an hour away"; });
  loop.Arm(never, EventLoop::Now() + 1h);
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  loop.Activate(7);
  loop.Activate(9);
  ASSERT_TRUE(loop.Run([&](uint64_t tag, uint32_t events) {
    seen.emplace_back(tag, events);
    if (seen.size() == 1) loop.Activate(7);  // again, in the next round
    if (seen.size() == 3) loop.Exit();
  }));
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, uint32_t>>{{7, EPOLLIN}, {9, EPOLLIN}, {7, EPOLLIN}}));
  loop.Disarm(never);
}

}  // namespace
}  // namespace ms::transport
