#include "shared/transport/budget.h"

namespace ms::transport {

bool PeerCounts::Take(const std::string& peer, size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  if (max_total_ && total_ + n > max_total_) return false;
  size_t& mine = by_peer_[peer];
  if (max_per_peer_ && mine + n > max_per_peer_) {
    if (mine == 0) by_peer_.erase(peer);
    return false;
  }
  mine += n;
  total_ += n;
  return true;
}

void PeerCounts::Force(const std::string& peer, size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  by_peer_[peer] += n;
  total_ += n;
}

void PeerCounts::Give(const std::string& peer, size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  total_ -= n;
  auto it = by_peer_.find(peer);
  if (it == by_peer_.end()) return;
  it->second -= n;
  if (it->second == 0) by_peer_.erase(it);
}

bool PeerCounts::Full(const std::string& peer) const {
  std::lock_guard<std::mutex> g(mu_);
  if (max_total_ && total_ >= max_total_) return true;
  if (!max_per_peer_) return false;
  auto it = by_peer_.find(peer);
  return it != by_peer_.end() && it->second >= max_per_peer_;
}

size_t PeerCounts::total() const {
  std::lock_guard<std::mutex> g(mu_);
  return total_;
}

BodyBudget::Lease& BodyBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = other.budget_;
    peer_ = std::move(other.peer_);
    bytes_ = other.bytes_;
    other.budget_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void BodyBudget::Lease::Release() {
  if (budget_ && bytes_) budget_->counts_.Give(peer_, bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

std::optional<BodyBudget::Lease> BodyBudget::Reserve(const std::string& peer, size_t bytes) {
  if (max_total_ == 0 || bytes == 0) return Lease();
  if (!counts_.Take(peer, bytes)) return std::nullopt;
  return Lease(this, peer, bytes);
}

BodyBudget::Lease BodyBudget::Hold(const std::string& peer, size_t bytes) {
  if (max_total_ == 0 || bytes == 0) return Lease();
  counts_.Force(peer, bytes);
  return Lease(this, peer, bytes);
}

}  // namespace ms::transport
