#include "controller/runtime/workqueue.h"

#include <algorithm>

namespace ms::runtime {

namespace {
double Seconds(clock::Clock::Duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

WorkQueue::WorkQueue(std::string name, const clock::Clock& clock, WorkQueueMetrics& m,
                     std::unique_ptr<RateLimiter> limiter)
    : name_(std::move(name)),
      clock_(clock),
      limiter_(limiter ? std::move(limiter) : DefaultControllerRateLimiter(clock)),
      depth_(m.depth.Add({{"name", name_}})),
      adds_(m.adds.Add({{"name", name_}})),
      retries_(m.retries.Add({{"name", name_}})),
      queue_duration_(m.queue_duration.Add({{"name", name_}}, WorkQueueMetrics::Buckets())),
      work_duration_(m.work_duration.Add({{"name", name_}}, WorkQueueMetrics::Buckets())),
      unfinished_work_(m.unfinished_work.Add({{"name", name_}})),
      longest_running_(m.longest_running.Add({{"name", name_}})),
      progress_hook_(m.hooks.Add([this] { UpdateProgress(); })) {
  delay_thread_ = std::thread([this] { DelayLoop(); });
}

void WorkQueue::UpdateProgress() {
  std::lock_guard<std::mutex> g(mu_);
  const auto now = clock_.Now();
  double total = 0, longest = 0;
  for (const auto& [key, started] : started_at_) {
    const double s = std::chrono::duration<double>(now - started).count();
    total += s;
    longest = std::max(longest, s);
  }
  unfinished_work_.Set(total);
  longest_running_.Set(longest);
}

WorkQueue::~WorkQueue() {
  ShutDown();
  if (delay_thread_.joinable()) delay_thread_.join();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  AddLocked(key);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  // Due now: a delayed add of the key is folded into this one.
  if (auto w = waiting_.find(key); w != waiting_.end()) {
    due_.erase({w->second, key});
    waiting_.erase(w);
  }
  if (dirty_.count(key) != 0) return;
  adds_.Increment();
  dirty_.insert(key);
  added_at_.emplace(key, clock_.Now());
  if (processing_.count(key) != 0) return;  // queued again at Done()
  queue_.push_back(key);
  depth_.Set(static_cast<double>(queue_.size()));
  cv_.notify_one();
}

void WorkQueue::AddAfter(const std::string& key, clock::Clock::Duration delay) {
  std::lock_guard<std::mutex> g(mu_);
  if (shutting_down_) return;
  if (delay <= clock::Clock::Duration::zero()) {
    AddLocked(key);
    return;
  }
  // Queued (or queued again at Done): it is reconciled sooner than that, and
  // that reconcile says when it needs the next one.
  if (dirty_.count(key) != 0) return;
  const auto ready = clock_.Now() + delay;
  auto [it, inserted] = waiting_.try_emplace(key, ready);
  if (!inserted) {
    if (ready >= it->second) return;  // keeps the earlier time
    due_.erase({it->second, key});
    it->second = ready;
  }
  auto at = due_.emplace(ready, key).first;
  // The delay thread sleeps until the first key is due: wake it only when
  // this one comes before.
  if (at == due_.begin()) delay_cv_.notify_all();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  const auto delay = limiter_->When(key);
  retries_.Increment();
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  depth_.Set(static_cast<double>(queue_.size()));
  const auto now = clock_.Now();
  if (auto it = added_at_.find(key); it != added_at_.end()) {
    queue_duration_.Observe(Seconds(now - it->second));
    added_at_.erase(it);
  }
  started_at_[key] = now;
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = started_at_.find(key); it != started_at_.end()) {
    work_duration_.Observe(Seconds(clock_.Now() - it->second));
    started_at_.erase(it);
  }
  processing_.erase(key);
  if (dirty_.count(key) != 0) {
    queue_.push_back(key);
    depth_.Set(static_cast<double>(queue_.size()));
    cv_.notify_one();
  } else if (processing_.empty()) {
    cv_.notify_all();  // drain waiters
  }
}

void WorkQueue::StopLocked() {
  shutting_down_ = true;
  waiting_.clear();
  due_.clear();
  cv_.notify_all();
  delay_cv_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> g(mu_);
  StopLocked();
}

void WorkQueue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> lock(mu_);
  StopLocked();
  cv_.wait(lock, [this] { return processing_.empty(); });
}

void WorkQueue::ShutDownNow() {
  std::lock_guard<std::mutex> g(mu_);
  queue_.clear();
  dirty_.clear();
  added_at_.clear();
  depth_.Set(0);
  StopLocked();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard<std::mutex> g(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> g(mu_);
  return queue_.size();
}

size_t WorkQueue::NumWaiting() const {
  std::lock_guard<std::mutex> g(mu_);
  return waiting_.size();
}

void WorkQueue::DelayLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    const auto now = clock_.Now();
    while (!due_.empty() && due_.begin()->first <= now) {
      auto node = due_.extract(due_.begin());
      waiting_.erase(node.value().second);
      AddLocked(node.value().second);
    }
    const auto next = due_.empty() ? now + std::chrono::hours(1) : due_.begin()->first;
    clock_.WaitUntil(delay_cv_, lock, next);
  }
}

}  // namespace ms::runtime
