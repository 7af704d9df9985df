// What a controller's workers call, as controller-runtime's
// reconcile.Reconciler: bring the object a Request names to the state its
// spec asks for, and say in the Result when to look at it again. The worker
// pool (controller.h) owns the queue, the retries and the metrics; a
// Reconciler owns what reconciling one kind means.
#pragma once

#include <string>
#include <string_view>

#include "shared/clock/clock.h"

namespace ms::runtime {

// The object to reconcile, as the work queue holds it ("ns/name").
struct Request {
  std::string ns;  // "" for a cluster-scoped object
  std::string name;

  // "ns/name", or "name" without a namespace: the work queue's key.
  std::string Key() const { return ns.empty() ? name : ns + "/" + name; }
  // The inverse of Key().
  static Request FromKey(std::string_view key) {
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) return {"", std::string(key)};
    return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
  }
  bool operator==(const Request&) const = default;
};

struct Result {
  enum class Outcome {
    kSuccess,       // done; with `after` > 0, look again then (a resync)
    kError,         // failed (`error` says why): retried with the queue's backoff
    kRequeue,       // not done, no error: retried with the queue's backoff
    kRequeueAfter,  // not done: look again after `after`
  };
  Outcome outcome = Outcome::kSuccess;
  clock::Clock::Duration after{};
  std::string error;

  static Result Success(clock::Clock::Duration resync = {}) { return {Outcome::kSuccess, resync, {}}; }
  static Result Error(std::string why) { return {Outcome::kError, {}, std::move(why)}; }
  static Result Requeue(std::string why = {}) { return {Outcome::kRequeue, {}, std::move(why)}; }
  static Result RequeueAfter(clock::Clock::Duration after) { return {Outcome::kRequeueAfter, after, {}}; }
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Called by one worker at a time for a given request (the work queue never
  // hands one key to two workers). What it throws is reported as an error.
  virtual Result Reconcile(const Request& request) = 0;
};

}  // namespace ms::runtime
