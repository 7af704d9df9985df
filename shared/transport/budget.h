// What the connections of one server may hold at once, shared by its
// workers (thread-safe): connections, in total and per peer address, and the
// bytes of request bodies in flight, in total and per peer. A peer is an
// address as text (PeerAddress()); 0 as a limit means none.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ms::transport {

// Counts per peer under one lock: what is taken, in total and by each peer.
class PeerCounts {
 public:
  PeerCounts(size_t max_total, size_t max_per_peer) : max_total_(max_total), max_per_peer_(max_per_peer) {}
  // Takes `n` for `peer`; false (nothing taken) beyond either limit.
  bool Take(const std::string& peer, size_t n);
  void Give(const std::string& peer, size_t n);
  size_t total() const;

 private:
  mutable std::mutex mu_;
  const size_t max_total_, max_per_peer_;
  size_t total_ = 0;
  std::unordered_map<std::string, size_t> by_peer_;  // only peers holding something
};

// Open connections: at most `max_total`, and `max_per_peer` from one address.
class ConnectionBudget {
 public:
  ConnectionBudget(size_t max_total, size_t max_per_peer) : counts_(max_total, max_per_peer) {}
  bool Take(const std::string& peer) { return counts_.Take(peer, 1); }
  void Give(const std::string& peer) { counts_.Give(peer, 1); }
  size_t open() const { return counts_.total(); }

 private:
  PeerCounts counts_;
};

// Bytes of request bodies being received: a body's Content-Length is
// reserved when its head is read and given back once it has been answered
// (or its connection closed), so what the bodies in flight can occupy is
// bounded whatever clients announce or how slowly they send. One peer may
// hold at most half of it, so that one client cannot starve the others.
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

   private:
    friend class BodyBudget;
    Lease(BodyBudget* budget, std::string peer, size_t bytes)
        : budget_(budget), peer_(std::move(peer)), bytes_(bytes) {}
    BodyBudget* budget_ = nullptr;
    std::string peer_;
    size_t bytes_ = 0;
  };

  // `max_total` 0: no budget (every reservation succeeds).
  explicit BodyBudget(size_t max_total) : max_total_(max_total), counts_(max_total, max_total / 2) {}
  // `bytes` for a body from `peer`, or nothing when the budget (or the
  // peer's half of it) cannot hold it now.
  std::optional<Lease> Reserve(const std::string& peer, size_t bytes);
  size_t reserved() const { return counts_.total(); }
  size_t limit() const { return max_total_; }

 private:
  const size_t max_total_;
  PeerCounts counts_;
};

}  // namespace ms::transport
