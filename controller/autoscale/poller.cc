#include "controller/autoscale/poller.h"

#include <spdlog/spdlog.h>

#include <cmath>

namespace ms::autoscale {

namespace {

// How long an idle thread sleeps when nothing is watched (Watch wakes it).
constexpr std::chrono::hours kIdle{1};

}  // namespace

Poller::Poller(std::shared_ptr<QuerySource> source, const clock::Clock& clock, PollerOptions options,
               AutoscalerMetrics& metrics, std::shared_ptr<spdlog::logger> logger)
    : source_(std::move(source)),
      clock_(clock),
      options_(options),
      metrics_(metrics),
      logger_(std::move(logger)),
      breaker_(options.breaker) {}

Poller::~Poller() { Stop(); }

void Poller::SetOnChange(OnChange on_change) { on_change_ = std::move(on_change); }

void Poller::Start() {
  std::lock_guard<std::mutex> g(mu_);
  stopping_ = false;
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { Loop(); });
}

void Poller::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    threads.swap(threads_);
    cv_.notify_all();
  }
  for (auto& t : threads) t.join();
}

void Poller::Watch(const MetricKey& key, const std::string& query) {
  std::lock_guard<std::mutex> g(mu_);
  auto [it, added] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (!added && e.query == query) return;
  if (!added && !e.in_flight) due_.erase({e.due, key});
  e.query = query;
  e.generation = ++generations_;
  e.due = clock_.Now();                        // at once
  if (!e.in_flight) due_.emplace(e.due, key);  // else when its query ends (Record)
  e.reading.watched = true;
  cv_.notify_all();
}

Reading Poller::Read(const MetricKey& key) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return {};
  Reading r = it->second.reading;
  // Not queried while the breaker is open: what a query would say now.
  if (breaker_.state() != CircuitBreaker::State::kClosed) r.error = breaker_.last_error();
  return r;
}

void Poller::Forget(const MetricKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (!it->second.in_flight) due_.erase({it->second.due, key});
  entries_.erase(it);
}

std::size_t Poller::Watched() const {
  std::lock_guard<std::mutex> g(mu_);
  return entries_.size();
}

CircuitBreaker::State Poller::breaker_state() const {
  std::lock_guard<std::mutex> g(mu_);
  return breaker_.state();
}

std::optional<Poller::Job> Poller::Next(clock::Clock::TimePoint now, clock::Clock::TimePoint& wake) {
  wake = now + kIdle;
  if (breaker_.state() == CircuitBreaker::State::kOpen && now < breaker_.open_until()) {
    wake = breaker_.open_until();
    return std::nullopt;
  }
  if (due_.empty()) return std::nullopt;
  const auto first = due_.begin();
  if (first->first > now) {
    wake = first->first;
    return std::nullopt;
  }
  if (!breaker_.Allow(now)) return std::nullopt;  // half-open: the probe's result wakes us
  MetricKey key = first->second;
  due_.erase(first);
  Entry& next = entries_.at(key);
  next.in_flight = true;
  return Job{std::move(key), next.query, next.generation, now};
}

bool Poller::Record(const Job& job, const QueryResult& result) {
  const CircuitBreaker::State before = breaker_.state();
  if (result.unreachable) {
    breaker_.Failure(clock_.Now(), result.error);
  } else {
    breaker_.Success();
  }
  (result.ok ? metrics_.queries_ok : metrics_.queries_error).Increment();
  Publish();
  if (logger_ && before != breaker_.state()) {
    if (breaker_.state() == CircuitBreaker::State::kOpen && before == CircuitBreaker::State::kClosed) {
      logger_->warn("poller: {}", breaker_.Why());
    } else if (breaker_.state() == CircuitBreaker::State::kClosed) {
      logger_->info("poller: Prometheus answers again; circuit breaker closed");
    }
  }
  auto it = entries_.find(job.key);
  if (it == entries_.end()) return false;
  Entry& e = it->second;
  e.in_flight = false;
  if (e.generation != job.generation) {  // re-watched with another query meanwhile: due at once
    due_.emplace(e.due, job.key);
    return false;
  }
  e.due = job.started + options_.interval;
  due_.emplace(e.due, job.key);
  Reading& r = e.reading;
  if (result.ok) {
    const bool changed = !r.value || *r.value != result.value || r.series != result.series || !r.error.empty();
    r.value = result.value;
    r.series = result.series;
    r.value_at = clock_.Now();
    r.value_wall = clock_.WallNow();
    r.error.clear();
    return changed;
  }
  const bool changed = r.error != result.error;
  r.error = result.error;
  return changed;
}

void Poller::Publish() { metrics_.breaker_open.Set(breaker_.state() == CircuitBreaker::State::kClosed ? 0 : 1); }

void Poller::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    clock::Clock::TimePoint wake;
    const std::optional<Job> job = Next(clock_.Now(), wake);
    if (!job) {
      clock_.WaitUntil(cv_, lock, wake);
      continue;
    }
    lock.unlock();
    QueryResult r = source_ ? source_->Query(job->query) : QueryResult::Error("no query source configured");
    if (r.ok && !std::isfinite(r.value)) r = QueryResult::Error("value is not finite");
    lock.lock();
    const bool changed = Record(*job, r);
    cv_.notify_all();  // a probe's result, or a key free again, for the other threads
    if (changed && on_change_) {
      lock.unlock();
      on_change_(job->key.ns, job->key.name);
      lock.lock();
    }
  }
}

}  // namespace ms::autoscale
