// The memory the requests and answers of one server may hold at once,
// shared by its workers (thread-safe): the bytes of request bodies being
// received and of answers waiting to be sent, in total and per peer address
// (an address as text, PeerAddress()). The connections themselves are
// counted by connection_table.h.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ms::transport {

// Counts per peer under one lock: what is taken, in total and by each peer.
// 0 as a limit means none.
class PeerCounts {
 public:
  PeerCounts(size_t max_total, size_t max_per_peer) : max_total_(max_total), max_per_peer_(max_per_peer) {}
  // Takes `n` for `peer`; false (nothing taken) beyond either limit.
  bool Take(const std::string& peer, size_t n);
  // Takes `n` for `peer` whatever the limits.
  void Force(const std::string& peer, size_t n);
  void Give(const std::string& peer, size_t n);
  // The total, or what `peer` holds, is at its limit or beyond.
  bool Full(const std::string& peer) const;
  size_t total() const;

 private:
  mutable std::mutex mu_;
  const size_t max_total_, max_per_peer_;
  size_t total_ = 0;
  std::unordered_map<std::string, size_t> by_peer_;  // only peers holding something
};

// Bytes of request bodies and answers in flight. A body's Content-Length
// is reserved when its head is read, before any of it is (refused when it
// does not fit), and given back once it has been answered (or its
// connection closed); an answer's bytes are counted while they wait to be
// sent, whatever the limit (the answer exists already), and while the
// budget is full a connection with an answer waiting reads no further
// request. So what bodies and answers occupy is bounded whatever clients
// announce, how slowly they send or whether they read. One peer may hold at
// most `max_per_peer`, so that a few clients cannot starve the others.
class BodyBudget {
 public:
  // A reservation, given back when it goes.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { Release(); }
    void Release();
    size_t bytes() const { return bytes_; }

   private:
    friend class BodyBudget;
    Lease(BodyBudget* budget, std::string peer, size_t bytes)
        : budget_(budget), peer_(std::move(peer)), bytes_(bytes) {}
    BodyBudget* budget_ = nullptr;
    std::string peer_;
    size_t bytes_ = 0;
  };

  // `max_total` 0: no budget (every reservation succeeds); `max_per_peer`
  // 0: a peer may take all of it.
  BodyBudget(size_t max_total, size_t max_per_peer)
      : max_total_(max_total), counts_(max_total, max_per_peer == 0 ? max_total : max_per_peer) {}
  // `bytes` for a body from `peer`, or nothing when the budget (or the
  // peer's share of it) cannot hold it now.
  std::optional<Lease> Reserve(const std::string& peer, size_t bytes);
  // `bytes` of answers for `peer`, whatever the limits.
  Lease Hold(const std::string& peer, size_t bytes);
  // The budget, or `peer`'s share, is spent.
  bool Full(const std::string& peer) const { return max_total_ != 0 && counts_.Full(peer); }
  size_t reserved() const { return counts_.total(); }
  size_t limit() const { return max_total_; }

 private:
  const size_t max_total_;
  PeerCounts counts_;
};

}  // namespace ms::transport
