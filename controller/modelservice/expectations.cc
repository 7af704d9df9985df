#include "controller/modelservice/expectations.h"

#include <algorithm>

#include "controller/kube/paths.h"

namespace ms::modelservice {

void Expectations::Wrote(const ObjectRef& ref, const std::string& read_rv, const std::string& written_rv) {
  if (written_rv.empty()) return;
  const auto now = clock_.Now();
  std::lock_guard<std::mutex> g(mu_);
  Expectation& e = pending_[ref];
  if (now - e.at > ttl_) e = Expectation{};
  auto remember = [&e](const std::string& rv) {
    if (std::find(e.before.begin(), e.before.end(), rv) == e.before.end()) e.before.push_back(rv);
  };
  remember(read_rv);  // "" for a create: absent from the cache is behind it
  if (!e.latest.empty()) remember(e.latest);
  constexpr size_t kMaxBefore = 8;
  if (e.before.size() > kMaxBefore) e.before.erase(e.before.begin());
  e.latest = written_rv;
  e.at = now;
}

void Expectations::Seen(const ObjectRef& ref, const std::string& rv) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pending_.find(ref);
  if (it != pending_.end() && it->second.latest == rv) pending_.erase(it);
}

void Expectations::Forget(const ObjectRef& ref) {
  std::lock_guard<std::mutex> g(mu_);
  pending_.erase(ref);
}

Expectations::Cache Expectations::Check(const ObjectRef& ref, const std::string& cached_rv) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pending_.find(ref);
  if (it == pending_.end() || it->second.latest == cached_rv) return Cache::kCurrent;
  if (clock_.Now() - it->second.at > ttl_) return Cache::kUnknown;
  const auto& before = it->second.before;
  return std::find(before.begin(), before.end(), cached_rv) != before.end() ? Cache::kBehind : Cache::kUnknown;
}

size_t Expectations::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return pending_.size();
}

void Expectations::Observe(const nlohmann::json& object, bool deleted) {
  const std::optional<ObjectRef> ref = RefOf(object);
  if (!ref) return;
  if (deleted) {
    Forget(*ref);
  } else {
    Seen(*ref, kube::ResourceVersionOf(object));
  }
}

}  // namespace ms::modelservice
