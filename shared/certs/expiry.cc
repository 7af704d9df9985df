#include "shared/certs/expiry.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace ms::certs {

namespace {

constexpr size_t kRemembered = 64;  // certificates whose warnings are remembered
constexpr int kLevels = static_cast<int>(std::size(ExpiryWarnings::kThresholds)) + 1;  // + expired

// How many levels `now` has reached for a certificate ending at `not_after`.
int LevelAt(WallTime not_after, WallTime now) {
  if (now >= not_after) return kLevels;
  int level = 0;
  for (auto t : ExpiryWarnings::kThresholds)
    if (not_after - now <= t) ++level;
  return level;
}

std::string Describe(std::string_view what, const Certificate& cert) {
  return fmt::format("{} {} (sha256 {})", what, cert.subject.empty() ? std::string("<no subject>") : cert.subject,
                     cert.fingerprint.substr(0, 16));
}

std::string Rfc3339(WallTime t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(t));
}

}  // namespace

std::optional<ExpiryWarning> ExpiryWarnings::Check(std::string_view what, const Certificate& cert, WallTime now) {
  const int level = LevelAt(cert.not_after, now);
  if (level == 0) return std::nullopt;
  auto [it, inserted] = reported_.try_emplace(cert.fingerprint, 0);
  if (inserted) {
    order_.push_back(cert.fingerprint);
    if (order_.size() > kRemembered) {
      reported_.erase(order_.front());
      order_.pop_front();
    }
  }
  if (it->second >= level) return std::nullopt;
  it->second = level;
  ExpiryWarning w;
  if (level == kLevels) {
    w.expired = true;
    w.message = fmt::format("{} expired at {}: TLS clients refuse it", Describe(what, cert), Rfc3339(cert.not_after));
    return w;
  }
  const auto left = std::chrono::duration_cast<std::chrono::hours>(cert.not_after - now);
  w.message = fmt::format("{} expires in {} days ({}h), at {}: it has not been renewed", Describe(what, cert),
                          left.count() / 24, left.count(), Rfc3339(cert.not_after));
  return w;
}

}  // namespace ms::certs
