#include "controller/runtime/event_correlator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace ms::runtime {

namespace {

uint64_t Hash(std::initializer_list<std::string_view> parts) {
  std::string joined;
  for (std::string_view p : parts) {
    joined += p;
    joined += '\x1f';
  }
  return std::hash<std::string>{}(joined);
}

// client-go's name for a new Event: "<object>.<nanoseconds in hex>".
std::string NewName(const std::string& object_name, clock::Clock::WallTime now) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos));
  return object_name + suffix;
}

}  // namespace

EventCorrelator::EventCorrelator(const clock::Clock& clock, CorrelatorOptions options)
    : clock_(clock),
      options_(options),
      aggregates_(options.lru_size),
      observations_(options.lru_size),
      spam_(options.lru_size) {}

CorrelatedEvent EventCorrelator::Correlate(const EventFields& e) {
  const auto now = clock_.Now();
  const auto wall = clock_.WallNow();
  std::lock_guard<std::mutex> g(mu_);
  CorrelatedEvent out;
  out.message = e.message;

  // 1. Aggregation by (source, object, type, reason) over distinct messages.
  const uint64_t aggregate_key = Hash({e.source, e.object, e.type, e.reason});
  uint64_t key = Hash({e.source, e.object, e.type, e.reason, e.message});
  Aggregate record;
  if (const Aggregate* found = aggregates_.Get(aggregate_key); found && now - found->last <= options_.max_interval) {
    record = *found;
  }
  const uint64_t message = std::hash<std::string>{}(e.message);
  if (std::find(record.messages.begin(), record.messages.end(), message) == record.messages.end()) {
    record.messages.push_back(message);
  }
  record.last = now;
  const bool aggregate = static_cast<int>(record.messages.size()) >= options_.max_events;
  if (aggregate) record.messages.pop_back();  // do not grow past the limit
  aggregates_.Put(aggregate_key, std::move(record));
  if (aggregate) {
    out.message = "(combined from similar events): " + e.message;
    key = aggregate_key;
  }

  // 2. Counting: an event seen before is a count on the one written.
  if (const Observation* seen = observations_.Get(key); seen != nullptr && seen->count > 0) {
    out.name = seen->name;
    out.count = seen->count + 1;
    out.first_timestamp = seen->first_timestamp;
  } else {
    out.name = NewName(e.object_name, wall);
    out.first_timestamp = wall;
  }
  observations_.Put(key, Observation{out.count, out.name, out.first_timestamp});

  // 3. Spam filter: a token bucket per (source, object, type).
  const uint64_t spam_key = Hash({e.source, e.object, e.type});
  kube::TokenBucket* bucket = spam_.Get(spam_key);
  if (bucket == nullptr) bucket = &spam_.Put(spam_key, kube::TokenBucket(options_.spam_qps, options_.spam_burst, now));
  out.skip = !bucket->TryAccept(now);
  return out;
}

}  // namespace ms::runtime
