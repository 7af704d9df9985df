#include "controller/runtime/event_correlator.h"

#include <gtest/gtest.h>

#include <string>

#include "test/support/fake_clock.h"

namespace ms::runtime {
namespace {

using namespace std::chrono_literals;

EventFields Ev(const std::string& object, const std::string& reason, const std::string& message,
               const std::string& type = "Normal") {
  return EventFields{
      "modelservice-controller/host-1", "ModelService/ml/" + object + "/uid-" + object, object, type, reason, message};
}

TEST(EventCorrelator, IdenticalEventsBecomeCountsOnOneEvent) {
  FakeClock clock;
  EventCorrelator c(clock);
  const CorrelatedEvent first = c.Correlate(Ev("bert", "Scaled", "from 1 to 2"));
  EXPECT_FALSE(first.skip);
  EXPECT_EQ(first.count, 1);
  EXPECT_EQ(first.name.rfind("bert.", 0), 0u) << first.name;
  clock.Advance(1s);
  const CorrelatedEvent again = c.Correlate(Ev("bert", "Scaled", "from 1 to 2"));
  EXPECT_EQ(again.count, 2);
  EXPECT_EQ(again.name, first.name);
  EXPECT_EQ(again.first_timestamp, first.first_timestamp);
  // Another message is another event; another object too.
  EXPECT_EQ(c.Correlate(Ev("bert", "Scaled", "from 2 to 3")).count, 1);
  EXPECT_NE(c.Correlate(Ev("gpt", "Scaled", "from 1 to 2")).name, first.name);
}

TEST(EventCorrelator, TenDistinctMessagesWithinTenMinutesAreCombined) {
  FakeClock clock;
  EventCorrelator c(clock);
  for (int i = 0; i < 9; ++i) {
    const CorrelatedEvent e = c.Correlate(Ev("bert", "Scaled", "to " + std::to_string(i)));
    EXPECT_EQ(e.message, "to " + std::to_string(i));
    EXPECT_EQ(e.count, 1);
    clock.Advance(10s);
  }
  const CorrelatedEvent tenth = c.Correlate(Ev("bert", "Scaled", "to 9"));
  EXPECT_EQ(tenth.message, "(combined from similar events): to 9");
  EXPECT_EQ(tenth.count, 1);
  const CorrelatedEvent eleventh = c.Correlate(Ev("bert", "Scaled", "to 10"));
  EXPECT_EQ(eleventh.message, "(combined from similar events): to 10");
  EXPECT_EQ(eleventh.name, tenth.name) << "counted on the combined event";
  EXPECT_EQ(eleventh.count, 2);
  // Another reason is aggregated on its own.
  EXPECT_EQ(c.Correlate(Ev("bert", "Updated", "image")).message, "image");
  // Ten minutes of quiet: a new window.
  clock.Advance(11min);
  EXPECT_EQ(c.Correlate(Ev("bert", "Scaled", "to 11")).message, "to 11");
}

TEST(EventCorrelator, SpamFilterAllows25PerObjectThenOneEveryFiveMinutes) {
  FakeClock clock;
  EventCorrelator c(clock);
  int written = 0;
  for (int i = 0; i < 40; ++i) written += !c.Correlate(Ev("bert", "Scaled", "same")).skip;
  EXPECT_EQ(written, 25);
  // Other objects have their own budget; so do Warnings about the same object.
  EXPECT_FALSE(c.Correlate(Ev("gpt", "Scaled", "same")).skip);
  EXPECT_FALSE(c.Correlate(Ev("bert", "Failed", "x", "Warning")).skip);
  clock.Advance(299s);
  EXPECT_TRUE(c.Correlate(Ev("bert", "Scaled", "same")).skip);
  clock.Advance(1s);
  const CorrelatedEvent e = c.Correlate(Ev("bert", "Scaled", "same"));
  EXPECT_FALSE(e.skip);
  EXPECT_EQ(e.count, 42) << "skipped occurrences are still counted";
  EXPECT_TRUE(c.Correlate(Ev("bert", "Scaled", "same")).skip);
}

TEST(EventCorrelator, CachesAreBounded) {
  FakeClock clock;
  CorrelatorOptions o;
  o.lru_size = 3;
  EventCorrelator c(clock, o);
  const std::string name = c.Correlate(Ev("a", "Created", "x")).name;
  for (const char* other : {"b", "c", "d"}) c.Correlate(Ev(other, "Created", "x"));
  // "a" was evicted: a new event, not a count on the old one.
  const CorrelatedEvent again = c.Correlate(Ev("a", "Created", "x"));
  EXPECT_EQ(again.count, 1);

  Lru<int> lru(2);
  lru.Put(1, 10);
  lru.Put(2, 20);
  ASSERT_NE(lru.Get(1), nullptr);  // 1 is now the most recent
  lru.Put(3, 30);
  EXPECT_EQ(lru.Get(2), nullptr);
  EXPECT_EQ(*lru.Get(1), 10);
  EXPECT_EQ(lru.size(), 2u);
  (void)name;
}

}  // namespace
}  // namespace ms::runtime
