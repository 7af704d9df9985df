#include "shared/transport/connection_table.h"

#include <algorithm>

namespace ms::transport {

namespace {

// The order in which connections give way (lower first); kOwed never does.
int Rank(Phase phase) {
  switch (phase) {
    case Phase::kClosing:
      return 0;
    case Phase::kHandshake:
    case Phase::kFresh:
      return 1;
    case Phase::kIdle:
      return 2;
    case Phase::kReceiving:
      return 3;
    case Phase::kOwed:
      break;
  }
  return -1;
}

std::int64_t Nanos(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

ConnectionTable::Admission ConnectionTable::Admit(const std::string& peer, int worker, std::uint64_t id,
                                                  std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> g(mu_);
  Admission a;
  auto [it, inserted] = peers_.try_emplace(peer);
  Peer& mine = it->second;
  const bool handshakes_full = limits_.max_handshakes && handshakes_ >= limits_.max_handshakes;
  if (limits_.max_per_peer && mine.open >= limits_.max_per_peer) {
    a.why = "its address holds " + std::to_string(mine.open) + " connections, the most one address may";
    a.victim = PickOwn(mine, handshakes_full);
  } else if (handshakes_full) {
    a.why = std::to_string(handshakes_) + " TLS handshakes are in progress, the most at once";
    a.victim = PickHandshake();
  } else if (limits_.max_total && open_ >= limits_.max_total) {
    a.why = std::to_string(open_) + " connections are open, the most at once";
    a.victim = PickFromBiggest();
  }
  if (!a.why.empty() && !a.victim) {
    if (inserted) peers_.erase(it);
    return a;
  }
  if (a.victim) GiveUp(*a.victim);
  a.slot = std::make_shared<Slot>(peer, worker, id);
  a.slot->since.store(Nanos(now), std::memory_order_relaxed);
  a.slot->index = mine.slots.size();
  mine.slots.push_back(a.slot);
  ++mine.open;
  ++mine.handshakes;
  ++open_;
  ++handshakes_;
  return a;
}

void ConnectionTable::Set(Slot& slot, Phase phase, std::chrono::steady_clock::time_point now) {
  slot.since.store(Nanos(now), std::memory_order_relaxed);
  slot.phase.store(phase, std::memory_order_relaxed);
}

void ConnectionTable::HandshakeOver(Slot& slot) {
  std::lock_guard<std::mutex> g(mu_);
  if (!slot.handshaking) return;
  slot.handshaking = false;
  if (slot.evicted) return;
  --handshakes_;
  --peers_[slot.peer].handshakes;
}

void ConnectionTable::Release(const SlotPtr& slot) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = peers_.find(slot->peer);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  if (slot->index >= peer.slots.size() || peer.slots[slot->index] != slot) return;
  if (!slot->evicted) {
    --peer.open;
    --open_;
    if (slot->handshaking) {
      --peer.handshakes;
      --handshakes_;
    }
  }
  // Swap-remove from the peer's list.
  peer.slots[slot->index] = std::move(peer.slots.back());
  peer.slots[slot->index]->index = slot->index;
  peer.slots.pop_back();
  if (peer.slots.empty()) peers_.erase(it);
}

bool ConnectionTable::Evicted(const Slot& slot) const {
  std::lock_guard<std::mutex> g(mu_);
  return slot.evicted;
}

size_t ConnectionTable::open() const {
  std::lock_guard<std::mutex> g(mu_);
  return open_;
}

size_t ConnectionTable::handshakes() const {
  std::lock_guard<std::mutex> g(mu_);
  return handshakes_;
}

ConnectionTable::SlotPtr ConnectionTable::PickOwn(const Peer& peer, bool handshakes_only) const {
  SlotPtr best;
  int best_rank = 0;
  std::int64_t best_since = 0;
  for (const SlotPtr& s : peer.slots) {
    if (s->evicted || (handshakes_only && !s->handshaking)) continue;
    const int rank = Rank(s->phase.load(std::memory_order_relaxed));
    if (rank < 0) continue;
    const std::int64_t since = s->since.load(std::memory_order_relaxed);
    if (!best || rank < best_rank || (rank == best_rank && since < best_since)) {
      best = s;
      best_rank = rank;
      best_since = since;
    }
  }
  return best;
}

ConnectionTable::SlotPtr ConnectionTable::PickHandshake() const {
  const Peer* most = nullptr;
  for (const auto& [address, peer] : peers_)
    if (peer.handshakes > 0 && (!most || peer.handshakes > most->handshakes)) most = &peer;
  return most ? PickOwn(*most, true) : nullptr;
}

ConnectionTable::SlotPtr ConnectionTable::PickFromBiggest() const {
  std::vector<const Peer*> by_size;
  by_size.reserve(peers_.size());
  for (const auto& [address, peer] : peers_)
    if (peer.open > 0) by_size.push_back(&peer);
  std::sort(by_size.begin(), by_size.end(), [](const Peer* a, const Peer* b) { return a->open > b->open; });
  for (const Peer* peer : by_size)
    if (SlotPtr s = PickOwn(*peer, false)) return s;
  return nullptr;
}

void ConnectionTable::GiveUp(Slot& victim) {
  victim.evicted = true;
  Peer& peer = peers_[victim.peer];
  --peer.open;
  --open_;
  if (victim.handshaking) {
    --peer.handshakes;
    --handshakes_;
  }
}

}  // namespace ms::transport
