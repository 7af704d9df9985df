// The connection table's rule for who gives way at a limit, as a table of
// slots and phases (no sockets): which connection is chosen, in which order,
// and when a new one is refused.
#include "shared/transport/connection_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ms::transport {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ConnectionTableTest : public ::testing::Test {
 protected:
  // Admits a connection from `peer` at t0 + `at`, established in `phase`
  // (kHandshake: left handshaking).
  ConnectionTable::SlotPtr Open(ConnectionTable& table, const std::string& peer, Phase phase,
                                std::chrono::seconds at = 0s) {
    auto a = table.Admit(peer, 0, next_id_++, t0_ + at);
    EXPECT_TRUE(a.slot) << a.why;
    EXPECT_FALSE(a.victim) << "nothing gives way below the limits";
    if (!a.slot) return nullptr;
    if (phase != Phase::kHandshake) table.HandshakeOver(*a.slot);
    ConnectionTable::Set(*a.slot, phase, t0_ + at);
    return a.slot;
  }

  Clock::time_point t0_ = Clock::time_point(1000s);
  std::uint64_t next_id_ = 1;
};

TEST_F(ConnectionTableTest, BelowTheLimitsEveryConnectionHasAPlace) {
  ConnectionTable table({3, 2, 2});
  Open(table, "10.0.0.1", Phase::kIdle);
  Open(table, "10.0.0.1", Phase::kHandshake);
  Open(table, "10.0.0.2", Phase::kHandshake);
  EXPECT_EQ(table.open(), 3u);
  EXPECT_EQ(table.handshakes(), 2u);
}

TEST_F(ConnectionTableTest, AtTheTotalTheAddressHoldingTheMostGivesWayNotTheNewcomer) {
  // Two addresses fill the table with idle connections, as the lockout of
  // issue 41 did with 500 from each of two: a third address still gets in.
  ConnectionTable table({5, 0, 0});
  auto a1 = Open(table, "10.0.0.1", Phase::kIdle, 1s);
  auto a2 = Open(table, "10.0.0.1", Phase::kIdle, 2s);
  auto a3 = Open(table, "10.0.0.1", Phase::kIdle, 3s);
  auto b1 = Open(table, "10.0.0.2", Phase::kIdle, 1s);
  auto b2 = Open(table, "10.0.0.2", Phase::kIdle, 2s);
  auto c = table.Admit("10.0.0.3", 1, 99, t0_ + 10s);
  ASSERT_TRUE(c.slot) << "the API server's address is not locked out";
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim, a1) << "the longest idle connection of the address holding the most";
  EXPECT_EQ(c.why, "5 connections are open, the most at once");
  EXPECT_EQ(table.open(), 5u) << "the victim's place is the newcomer's";
  // The next newcomer: 10.0.0.1 and 10.0.0.2 now hold 2 each; the longest idle of either.
  auto d = table.Admit("10.0.0.4", 0, 100, t0_ + 11s);
  ASSERT_TRUE(d.victim);
  EXPECT_TRUE(d.victim == a2 || d.victim == b1) << d.victim->peer;
  EXPECT_NE(d.victim, a1) << "a victim is chosen once";
}

TEST_F(ConnectionTableTest, ConnectionsThatNeverCompletedARequestGoFirstThenIdleThenReceiving) {
  ConnectionTable table({4, 0, 0});
  auto receiving = Open(table, "10.0.0.1", Phase::kReceiving, 1s);
  auto idle = Open(table, "10.0.0.1", Phase::kIdle, 2s);
  auto fresh = Open(table, "10.0.0.1", Phase::kFresh, 3s);
  auto closing = Open(table, "10.0.0.1", Phase::kClosing, 4s);
  std::vector<ConnectionTable::SlotPtr> order;
  for (int i = 0; i < 4; ++i) {
    auto a = table.Admit("10.0.0.9", 0, 200 + static_cast<std::uint64_t>(i), t0_ + 10s);
    ASSERT_TRUE(a.slot);
    order.push_back(a.victim);
    // The newcomer is owed an answer, so it is not chosen next.
    table.HandshakeOver(*a.slot);
    ConnectionTable::Set(*a.slot, Phase::kOwed, t0_ + 10s);
  }
  EXPECT_EQ(order, (std::vector<ConnectionTable::SlotPtr>{closing, fresh, idle, receiving}));
}

TEST_F(ConnectionTableTest, AConnectionOwedAnAnswerNeverGivesWayAndTheNewcomerIsRefused) {
  ConnectionTable table({2, 0, 0});
  Open(table, "10.0.0.1", Phase::kOwed);
  Open(table, "10.0.0.2", Phase::kOwed);
  auto a = table.Admit("10.0.0.3", 0, 50, t0_);
  EXPECT_FALSE(a.slot);
  EXPECT_FALSE(a.victim);
  EXPECT_EQ(a.why, "2 connections are open, the most at once");
  EXPECT_EQ(table.open(), 2u);
}

TEST_F(ConnectionTableTest, AnAddressAtItsShareDisplacesOneOfItsOwnNeverAnothers) {
  ConnectionTable table({10, 2, 0});
  auto own_old = Open(table, "10.0.0.1", Phase::kIdle, 1s);
  Open(table, "10.0.0.1", Phase::kIdle, 2s);
  Open(table, "10.0.0.2", Phase::kFresh, 0s);
  auto a = table.Admit("10.0.0.1", 0, 60, t0_ + 5s);
  ASSERT_TRUE(a.slot);
  EXPECT_EQ(a.victim, own_old);
  EXPECT_EQ(a.why, "its address holds 2 connections, the most one address may");
}

TEST_F(ConnectionTableTest, AnAddressAtItsShareWhoseConnectionsAreAllOwedIsRefused) {
  ConnectionTable table({10, 1, 0});
  Open(table, "10.0.0.1", Phase::kOwed);
  Open(table, "10.0.0.2", Phase::kIdle);
  auto a = table.Admit("10.0.0.1", 0, 61, t0_);
  EXPECT_FALSE(a.slot) << "another address's connection never gives way to an address at its share";
}

TEST_F(ConnectionTableTest, AtTheHandshakeLimitTheOldestHandshakeOfTheAddressWithTheMostGoes) {
  // Plain TCP connections that never send a ClientHello (with --client-ca,
  // issue 41): they fill the handshakes, not the API server's place.
  ConnectionTable table({100, 0, 3});
  Open(table, "10.0.0.2", Phase::kIdle, 0s);
  auto h1 = Open(table, "10.0.0.1", Phase::kHandshake, 1s);
  Open(table, "10.0.0.1", Phase::kHandshake, 2s);
  auto other = Open(table, "10.0.0.2", Phase::kHandshake, 0s);
  auto a = table.Admit("10.0.0.3", 0, 70, t0_ + 5s);
  ASSERT_TRUE(a.slot);
  EXPECT_EQ(a.victim, h1);
  EXPECT_EQ(a.why, "3 TLS handshakes are in progress, the most at once");
  EXPECT_EQ(table.handshakes(), 3u);
  // A finished handshake leaves room for one more without a victim.
  table.HandshakeOver(*other);
  auto b = table.Admit("10.0.0.3", 0, 71, t0_ + 6s);
  ASSERT_TRUE(b.slot);
  EXPECT_FALSE(b.victim);
}

TEST_F(ConnectionTableTest, ReleasedPlacesAreFreeAgainAndAnEvictedOneIsNotCountedTwice) {
  ConnectionTable table({2, 0, 0});
  auto a = Open(table, "10.0.0.1", Phase::kIdle);
  auto b = Open(table, "10.0.0.1", Phase::kIdle, 1s);
  auto c = table.Admit("10.0.0.2", 0, 80, t0_ + 2s);
  ASSERT_EQ(c.victim, a);
  EXPECT_TRUE(table.Evicted(*a));
  table.Release(a);  // its owner closes it
  EXPECT_EQ(table.open(), 2u);
  table.Release(b);
  EXPECT_EQ(table.open(), 1u);
  table.Release(c.slot);
  EXPECT_EQ(table.open(), 0u);
  EXPECT_EQ(table.handshakes(), 0u);
  Open(table, "10.0.0.3", Phase::kIdle);
  Open(table, "10.0.0.3", Phase::kIdle);
}

}  // namespace
}  // namespace ms::transport
