// The writes this process made, by object, until an informer shows them
// (client-go's controllers call these "expectations"). A cached copy that is
// the state a write of ours was based on, or an earlier write of ours, is
// behind: the watch event of our latest write is on its way and will queue
// the key again, so a reconcile on it can simply wait. A cached copy that is
// neither, or an expectation older than `ttl` (the event may have been lost
// to a relist), is read through the API. Thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "controller/modelservice/resources.h"
#include "shared/clock/clock.h"

namespace ms::modelservice {

class Expectations {
 public:
  enum class Cache { kCurrent, kBehind, kUnknown };

  // How long a write of ours may stay unseen by the informers before the
  // cache is bypassed (and how long a reconcile that waited for it waits at most).
  static constexpr clock::Clock::Duration kTtl = std::chrono::seconds(30);

  explicit Expectations(const clock::Clock& clock, clock::Clock::Duration ttl = kTtl) : clock_(clock), ttl_(ttl) {}

  // We wrote `ref`, based on the copy we had read at `read_rv` ("" when we
  // created it), and the API server answered at `written_rv`.
  void Wrote(const ObjectRef& ref, const std::string& read_rv, const std::string& written_rv);
  // An informer delivered `ref` at `rv`.
  void Seen(const ObjectRef& ref, const std::string& rv);
  void Forget(const ObjectRef& ref);
  // How a cached copy (`cached_rv`, "" when absent) relates to our writes.
  Cache Check(const ObjectRef& ref, const std::string& cached_rv) const;
  size_t size() const;

  // An informer's event of an object of a kind the controller writes:
  // Seen(), or Forget() when it was deleted. Other objects are ignored.
  void Observe(const nlohmann::json& object, bool deleted);

 private:
  struct Expectation {
    std::string latest;               // what we wrote last
    std::vector<std::string> before;  // what it follows (read copies, earlier writes)
    clock::Clock::TimePoint at;       // when
  };
  const clock::Clock& clock_;
  const clock::Clock::Duration ttl_;
  mutable std::mutex mu_;
  std::map<ObjectRef, Expectation> pending_;
};

}  // namespace ms::modelservice
