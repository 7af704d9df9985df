// The request policy of the API client (client-go's rest client around its
// transport): when a request may leave and for how long.
//  - one token bucket per API group-version (RestConfig qps/burst), as
//    client-go gives each group-version a REST client of its own: the
//    ModelServices' writes never wait for the Deployments' tokens;
//  - the call's deadline: a request that cannot have its token before it,
//    or whose deadline has passed, is not sent; one in flight ends at it;
//  - the write gate: a write leaves only while the gate is open, and is
//    aborted once it closes (its time limit is the gate's time left);
//  - Retry-After: a 429 or 5xx answer with a Retry-After header means the
//    server did not take the request and says when to try again (client-go's
//    checkWait): the client waits that long, up to kMaxRetryAfter, and sends
//    it again, at most kMaxRetries times, never past the call's deadline;
//  - Close(): every request is refused from then on, those waiting for a
//    token or a Retry-After are woken.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "controller/kube/client.h"
#include "controller/kube/rate_limiter.h"
#include "controller/kube/write_gate.h"
#include "shared/clock/clock.h"

namespace ms::kube {

// Result reasons (code 0) of requests the client did not send or cut short.
inline constexpr const char* kReasonNotLeader = "NotLeader";        // the WriteGate refused
inline constexpr const char* kReasonClosed = "ClientClosed";        // after Close()
inline constexpr const char* kReasonDeadline = "DeadlineExceeded";  // the call's deadline

// Retries of a request the server answered with a Retry-After (client-go's
// default maxRetries), and the longest wait one Retry-After buys.
inline constexpr int kMaxRetries = 10;
inline constexpr std::chrono::seconds kMaxRetryAfter{60};

class RequestPolicy {
 public:
  // `gate` may be null (writes are not gated); it must outlive the policy.
  RequestPolicy(double qps, int burst, const clock::Clock& clock, clock::Clock::Duration request_timeout,
                const WriteGate* gate);

  // Waits for the call's token: null when it has one, else the reason it
  // cannot (kReasonDeadline, kReasonClosed).
  const char* Admit(const Call& call);
  // Why the call may not leave now (a kReason*), or null: asked before it
  // is prepared, right before it is sent and while it is in flight.
  const char* Refusal(const Call& call) const;

  // The whole request's time limit: the request timeout, shortened by the
  // call's deadline and, for a write, by the gate's time left. `bound` is
  // the kReason* of the limit that set it (null: the request timeout).
  struct TimeLimit {
    clock::Clock::Duration limit;
    const char* bound = nullptr;
  };
  TimeLimit LimitOf(const Call& call) const;

  // Waits `retry_after` (at most kMaxRetryAfter) before the call is sent
  // again: false at once, without waiting, when that would pass the call's
  // deadline or the client is closed, or when closed while waiting.
  bool AwaitRetry(const Call& call, clock::Clock::Duration retry_after);

  void Close();
  // What a kReason* means, for the Result's message.
  static const char* Explain(const char* reason);

 private:
  TokenBucketRateLimiter& Limiter(const std::string& path);

  const double qps_;
  const int burst_;
  const clock::Clock& clock_;
  const clock::Clock::Duration request_timeout_;
  const WriteGate* const gate_;
  std::stop_source closing_;
  std::mutex mu_;
  std::condition_variable retry_cv_;                                         // Retry-After waits; Close() notifies it
  std::map<std::string, std::unique_ptr<TokenBucketRateLimiter>> limiters_;  // by group-version
};

}  // namespace ms::kube
