// The open connections of one server, shared by its workers (thread-safe):
// who holds them, what each is doing, and which one gives way when a new
// connection needs a place.
//
// Places are limited in total, per peer address and for handshakes not yet
// finished. At a limit a new connection is not refused while an existing
// one can give way, as nginx reclaims idle keep-alive connections when it
// runs out of them: a connection that is owed no answer is closed in its
// place. Which one:
//   - the new connection's peer holds its share: one of that peer's own;
//   - the handshakes are at their limit: a handshake of the peer with the
//     most handshakes;
//   - the total is reached: one of the peer that holds the most places.
// Among those, the first to go is one closing anyway (a linger), then one
// that never completed a request (handshaking, or receiving its first),
// then one idle between requests, then one receiving its next request; in
// each class the one that has been in it longest. A connection owed an
// answer (a request read in full whose answer is not sent yet) never gives
// way; when none can, the new connection is refused (closed at once).
//
// So a client that fills the table from one or two addresses cannot keep
// out a third (the API server's): each of its new connections displaces
// one of the biggest holder's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ms::transport {

// What a connection is doing, as far as giving way goes (the owning worker
// sets it after each turn).
enum class Phase : std::uint8_t {
  kClosing,    // lingering after its last answer
  kHandshake,  // the TLS handshake is not finished
  kFresh,      // established, no request answered yet
  kIdle,       // between requests
  kReceiving,  // receiving a request, after at least one answered
  kOwed,       // an answer is waiting to be sent: never gives way
};

struct ConnectionLimits {
  size_t max_total = 0;       // 0: none
  size_t max_per_peer = 0;    // 0: none
  size_t max_handshakes = 0;  // 0: none
};

class ConnectionTable {
 public:
  // One connection's place. The owner (one worker) writes `phase` and
  // `since`; the table reads them, from any worker, when it looks for a
  // connection to close.
  struct Slot {
    Slot(std::string p, int w, std::uint64_t i) : peer(std::move(p)), worker(w), id(i) {}
    const std::string peer;
    const int worker;        // index of the owning worker
    const std::uint64_t id;  // the owner's tag for it
    std::atomic<Phase> phase{Phase::kHandshake};
    std::atomic<std::int64_t> since{0};  // steady-clock nanoseconds: when it entered its phase
    // Under the table's lock:
    bool evicted = false;  // chosen to give way: its place is no longer counted
    bool handshaking = true;
    size_t index = 0;  // in its peer's list
  };
  using SlotPtr = std::shared_ptr<Slot>;

  struct Admission {
    SlotPtr slot;     // null: refused
    SlotPtr victim;   // to close, so that `slot` has its place (its owner closes it)
    std::string why;  // when refused or another connection gives way: which limit
  };

  explicit ConnectionTable(ConnectionLimits limits) : limits_(limits) {}

  // A place for a new connection from `peer`, owned by `worker` under `id`,
  // handshaking since `now`.
  Admission Admit(const std::string& peer, int worker, std::uint64_t id, std::chrono::steady_clock::time_point now);
  // The owner: what the connection is doing now.
  static void Set(Slot& slot, Phase phase, std::chrono::steady_clock::time_point now);
  // The owner: its handshake is over (done or failed).
  void HandshakeOver(Slot& slot);
  // The owner: the connection is closed.
  void Release(const SlotPtr& slot);
  // Whether `slot` was chosen to give way.
  bool Evicted(const Slot& slot) const;

  size_t open() const;        // places held
  size_t handshakes() const;  // of those, handshaking
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Peer {
    size_t open = 0;             // places held (evicted ones not counted)
    size_t handshakes = 0;       // of those, handshaking
    std::vector<SlotPtr> slots;  // every slot not released, evicted ones too
  };
  // Each with mu_ held.
  SlotPtr PickOwn(const Peer& peer, bool handshakes_only) const;
  SlotPtr PickHandshake() const;
  SlotPtr PickFromBiggest() const;
  void GiveUp(Slot& victim);

  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Peer> peers_;  // only peers with a slot
  size_t open_ = 0;
  size_t handshakes_ = 0;
};

}  // namespace ms::transport
