// client-go's EventCorrelator (tools/record/events_cache.go), which decides
// for each Event whether and how to write it, so that a controller cannot
// flood the API server with Events:
//  - aggregation: when one source records events about one object with the
//    same type and reason but 10 different messages within 10 minutes, the
//    next ones become one event "(combined from similar events): <message>";
//  - deduplication: an event identical to one already written (same source,
//    object, type, reason and message) is written as a count on that event
//    (a PATCH of count, lastTimestamp and message) instead of a new object;
//  - spam filter: each source may write 25 events about one object at once,
//    then one every 5 minutes (a token bucket per source and object),
//    counts included.
// The caches are LRUs of 4096 entries each, as client-go's; keys are kept as
// 64-bit hashes. Thread-safe; time comes from the injected Clock.
//
// The caches live in the process, as client-go's: a restarted controller or
// a new leader starts with none, and would write an Event the cluster
// already has as a new one. It does not get to: the ModelService controller
// emits Events for transitions judged against the stored status and for
// its own writes (modelservice/plan.h), never for a state the status
// already reports, so a new leader over converged objects emits nothing
// (seeding these caches from the stored Events would cost a watch of every
// Event in the watched namespaces, for nothing).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/kube/rate_limiter.h"
#include "shared/clock/clock.h"

namespace ms::runtime {

struct CorrelatorOptions {
  size_t lru_size = 4096;
  int max_events = 10;                                             // distinct messages before aggregating
  clock::Clock::Duration max_interval = std::chrono::minutes(10);  // of the aggregation window
  int spam_burst = 25;
  double spam_qps = 1.0 / 300.0;
};

// The fields of an Event the correlator looks at.
struct EventFields {
  std::string source;       // reporting component and instance
  std::string object;       // the object's kind, namespace, name, uid and apiVersion, joined
  std::string object_name;  // for new event names, "<object_name>.<hex nanos>"
  std::string type, reason, message;
};

struct CorrelatedEvent {
  bool skip = false;  // filtered as spam: write nothing
  std::string name;   // the Event object: a new name, or the one to count on
  int count = 1;      // > 1: patch `name` with this count
  std::string message;
  clock::Clock::WallTime first_timestamp;
};

// A least-recently-used map with at most `capacity` entries.
template <typename V>
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(capacity) {}
  V* Get(uint64_t key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  V& Put(uint64_t key, V value) {
    if (V* v = Get(key)) return *v = std::move(value);
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }
  size_t size() const { return order_.size(); }

 private:
  size_t capacity_;
  std::list<std::pair<uint64_t, V>> order_;
  std::unordered_map<uint64_t, typename std::list<std::pair<uint64_t, V>>::iterator> index_;
};

class EventCorrelator {
 public:
  explicit EventCorrelator(const clock::Clock& clock, CorrelatorOptions options = {});

  CorrelatedEvent Correlate(const EventFields& event);

 private:
  struct Aggregate {
    std::vector<uint64_t> messages;  // distinct messages seen (hashes), at most max_events
    clock::Clock::TimePoint last;
  };
  struct Observation {
    int count = 0;
    std::string name;
    clock::Clock::WallTime first_timestamp;
  };

  const clock::Clock& clock_;
  const CorrelatorOptions options_;
  std::mutex mu_;
  Lru<Aggregate> aggregates_;
  Lru<Observation> observations_;
  Lru<kube::TokenBucket> spam_;
};

}  // namespace ms::runtime
