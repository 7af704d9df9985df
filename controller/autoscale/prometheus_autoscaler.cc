#include "controller/autoscale/prometheus_autoscaler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "api/types.h"
#include "base/strings.h"

namespace ms::autoscale {

namespace {

std::string WindowText(Clock::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

PrometheusAutoscaler::PrometheusAutoscaler(Readings& readings, const Clock& clock, AutoscalerMetrics& metrics,
                                           AutoscalerOptions options, std::shared_ptr<spdlog::logger> logger)
    : readings_(readings),
      template_(std::move(options.query_template)),
      clock_(clock),
      window_(std::max(options.stabilization_window, Clock::Duration::zero())),
      tolerance_((std::isnan(options.tolerance) || options.tolerance < 0) ? 0.0 : options.tolerance),
      max_age_(options.max_age),
      logger_(std::move(logger)),
      metrics_(metrics) {}

Recommendation PrometheusAutoscaler::Recommend(const std::string& ns, const std::string& name, const Spec& spec,
                                               int current_replicas) {
  const std::string query = RenderQuery(template_, ns, name);
  const MetricKey mk{ns, name, Metric::kQueueLength};
  readings_.Watch(mk, query);
  Reading read = readings_.Read(mk);
  if (read.value && !std::isfinite(*read.value)) {  // the poller keeps none; a defence
    read.value.reset();
    read.error = "value is not finite";
  }
  if (!read.value && read.error.empty()) {
    Recommendation rec;
    rec.pending = true;
    rec.message = "waiting for the first queue length from Prometheus (query: " + query + "); keeping " +
                  std::to_string(current_replicas) + " replicas";
    rec.desired_replicas = current_replicas;
    return rec;
  }
  const bool fresh = read.value && clock_.Now() - read.value_at <= max_age_;
  if (!fresh) {
    std::string why = read.error;
    if (read.value) {
      why = "the last value read (" + FormatNumber(*read.value) + ") is older than " + WindowText(max_age_) +
            (why.empty() ? "" : ": " + why);
    }
    return Unreadable(Key{ns, name}, query, why, current_replicas);
  }
  Readable(Key{ns, name}, *read.value);

  const double l = *read.value;
  const int plain = DesiredReplicas(l, spec);
  const int raw = DesiredReplicas(l, spec, current_replicas, tolerance_);
  const int desired = ClampReplicas(Stabilized(Key{ns, name}, raw), spec);
  const Bounds b = NormalizedBounds(spec);
  Recommendation rec;
  rec.metrics_ok = true;
  rec.queue_length = l;
  rec.desired_replicas = desired;
  rec.message = "queue length " + FormatNumber(l) + ", target " + std::to_string(b.target) +
                " per replica: " + std::to_string(plain) + " replicas (min " + std::to_string(b.lo) + ", max " +
                std::to_string(b.hi) + ")";
  if (raw != plain) {
    rec.message += "; within the " + FormatNumber(tolerance_ * 100) + "% tolerance of " +
                   std::to_string(current_replicas) + " replicas, keeping " + std::to_string(raw);
  }
  if (desired > raw) {
    rec.message +=
        "; scale-down held at " + std::to_string(desired) + " by the " + WindowText(window_) + " stabilization window";
  }
  if (logger_)
    logger_->debug("autoscaler {}/{}: current {}, desired {}: {}", ns, name, current_replicas, desired, rec.message);
  return rec;
}

Recommendation PrometheusAutoscaler::Unreadable(const Key& key, const std::string& query, const std::string& error,
                                                int current_replicas) {
  const auto& [ns, name] = key;
  metrics_.queue_length.Add({{"namespace", ns}, {"name", name}}).Set(std::numeric_limits<double>::quiet_NaN());
  Recommendation rec;
  rec.metrics_ok = false;
  rec.reason = api::kReasonMetricsUnavailable;
  rec.message = "cannot read the queue length from Prometheus: " + error + " (query: " + query + "); keeping " +
                std::to_string(current_replicas) + " replicas";
  rec.desired_replicas = current_replicas;
  if (logger_) {
    if (ShouldWarn(key, error, clock_.Now())) {
      logger_->warn("autoscaler {}/{}: {}", ns, name, rec.message);
    } else {
      logger_->debug("autoscaler {}/{}: {}", ns, name, rec.message);
    }
  }
  return rec;
}

void PrometheusAutoscaler::Readable(const Key& key, double queue_length) {
  bool recovered = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    recovered = warned_.erase(key) > 0;
  }
  if (recovered && logger_)
    logger_->info("autoscaler {}/{}: the queue length is readable again", key.first, key.second);
  metrics_.queue_length.Add({{"namespace", key.first}, {"name", key.second}}).Set(queue_length);
}

int PrometheusAutoscaler::Stabilized(const Key& key, int raw) {
  const Clock::TimePoint now = clock_.Now();
  std::lock_guard<std::mutex> g(mu_);
  auto& h = history_[key];
  const Clock::TimePoint cutoff = now - window_;
  if (window_ == Clock::Duration::zero()) h.clear();  // no stabilization
  while (!h.empty() && h.front().at < cutoff) h.pop_front();
  while (!h.empty() && h.back().replicas <= raw) h.pop_back();
  h.push_back(Sample{now, raw});
  return h.front().replicas;
}

bool PrometheusAutoscaler::ShouldWarn(const Key& key, const std::string& error, Clock::TimePoint now) {
  std::lock_guard<std::mutex> g(mu_);
  auto [it, inserted] = warned_.try_emplace(key, Warned{error, now});
  if (inserted) return true;
  if (it->second.error == error && now - it->second.at < kWarnEvery) return false;
  it->second = Warned{error, now};
  return true;
}

void PrometheusAutoscaler::Forget(const std::string& ns, const std::string& name) {
  {
    std::lock_guard<std::mutex> g(mu_);
    history_.erase(Key{ns, name});
    warned_.erase(Key{ns, name});
  }
  readings_.Forget(MetricKey{ns, name, Metric::kQueueLength});
  metrics::RemoveSeries(metrics_.queue_length, {{"namespace", ns}, {"name", name}});
}

std::size_t PrometheusAutoscaler::TrackedObjects() const {
  std::lock_guard<std::mutex> g(mu_);
  return history_.size();
}

}  // namespace ms::autoscale
