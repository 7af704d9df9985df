// A rate-limited, delaying work queue with client-go/controller-runtime
// semantics:
//  - Add deduplicates: a key queued but not yet handed out is queued once
//    (the dirty set).
//  - A key handed out by Get() is in the processing set until Done(); it is
//    never handed to a second worker meanwhile. Re-added while processing, it
//    is queued again when Done() is called.
//  - Get() blocks until a key is available or the queue shuts down; after
//    ShutDown() the keys already queued are still handed out, then Get()
//    returns nullopt; after ShutDownNow() they are dropped.
//  - One entry per key, as controller-runtime's priority queue: a key is
//    queued (due now) or waiting (due at a time), never both. Add folds a
//    waiting key's delayed add into itself; AddAfter of a queued key adds
//    nothing (the reconcile that runs sooner returns its own requeue). A
//    reconcile that waits for the event of its own write (RequeueAfter the
//    expectations' time to live) is then run once, at that event, not again
//    when the time to live ends.
//  - AddAfter waits on the injected Clock; AddRateLimited asks the limiter.
//    The waiting keys are ordered by when they are due (client-go's heap), so
//    adding one costs O(log W) among W waiting and wakes the delay thread only
//    when it is due before every other: a burst that requeues thousands of
//    keys after a delay does not rescan them all at each one.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "controller/runtime/metrics.h"
#include "controller/runtime/rate_limiter.h"
#include "shared/clock/clock.h"

namespace ms::runtime {

class WorkQueue {
 public:
  // `limiter` null means DefaultControllerRateLimiter. The metrics carry
  // the label name=`name`.
  WorkQueue(std::string name, const clock::Clock& clock, WorkQueueMetrics& metrics,
            std::unique_ptr<RateLimiter> limiter = nullptr);
  ~WorkQueue();  // shuts down and joins the delay thread
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  // Adds `key` once `delay` has passed on the clock (now if delay <= 0). A key
  // already waiting keeps the earlier of the two times.
  void AddAfter(const std::string& key, clock::Clock::Duration delay);
  // AddAfter(key, limiter.When(key)); counts a retry.
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Blocks; nullopt once shut down and empty.
  std::optional<std::string> Get();
  void Done(const std::string& key);

  // Stops accepting keys and wakes Get() callers.
  void ShutDown();
  // ShutDown(), then waits until every key handed out has been Done().
  void ShutDownWithDrain();
  // Stops accepting keys and drops every key queued or waiting (none is
  // handed out any more, and keys handed out are not queued again at Done()).
  // For a controller that must stop at once (the Lease was lost).
  void ShutDownNow();
  bool ShuttingDown() const;

  size_t Len() const;         // keys queued (not processing, not waiting)
  size_t NumWaiting() const;  // keys waiting for AddAfter

  const std::string& name() const { return name_; }

 private:
  // Refuses new keys, drops the delayed ones and wakes every waiter (mu_ held).
  void StopLocked();
  void AddLocked(const std::string& key);
  // workqueue_unfinished_work_seconds and _longest_running_processor_seconds
  // from the keys being processed now (client-go updates them every 500 ms;
  // here at each collection).
  void UpdateProgress();
  void DelayLoop();

  const std::string name_;
  const clock::Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;

  mutable std::mutex mu_;
  std::condition_variable cv_;        // Get() waiters, drain waiters
  std::condition_variable delay_cv_;  // the delay thread
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  std::map<std::string, clock::Clock::TimePoint> added_at_;        // for queue_duration
  std::map<std::string, clock::Clock::TimePoint> started_at_;      // for work_duration
  std::map<std::string, clock::Clock::TimePoint> waiting_;         // key -> ready time
  std::set<std::pair<clock::Clock::TimePoint, std::string>> due_;  // the same, by ready time
  bool shutting_down_ = false;

  prometheus::Gauge& depth_;
  prometheus::Counter& adds_;
  prometheus::Counter& retries_;
  prometheus::Histogram& queue_duration_;
  prometheus::Histogram& work_duration_;
  prometheus::Gauge& unfinished_work_;
  prometheus::Gauge& longest_running_;
  metrics::CollectHooks::Handle progress_hook_;  // updates the two gauges above at collection

  std::thread delay_thread_;  // last: started after everything above
};

}  // namespace ms::runtime
