#include "controller/autoscale/prometheus_autoscaler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "shared/api/types.h"
#include "shared/text/strings.h"

namespace ms::autoscale {

namespace {

std::string WindowText(clock::Clock::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

PrometheusAutoscaler::PrometheusAutoscaler(Readings& readings, const clock::Clock& clock, AutoscalerMetrics& metrics,
                                           AutoscalerOptions options, std::shared_ptr<spdlog::logger> logger)
    : readings_(readings),
      templates_(std::move(options.queue_query_templates)),
      gpu_template_(std::move(options.gpu_query_template)),
      clock_(clock),
      window_(std::max(options.stabilization_window, clock::Clock::Duration::zero())),
      tolerance_((std::isnan(options.tolerance) || options.tolerance < 0) ? 0.0 : options.tolerance),
      max_age_(options.max_age),
      logger_(std::move(logger)),
      metrics_(metrics) {}

PrometheusAutoscaler::Fresh PrometheusAutoscaler::ReadFresh(const MetricKey& key, const std::string& query) {
  readings_.Watch(key, query);
  Reading read = readings_.Read(key);
  Fresh f;
  f.query = query;
  if (read.value && !std::isfinite(*read.value)) {  // the poller keeps none; a defence
    read.value.reset();
    read.error = "value is not finite";
  }
  f.pending = !read.value && read.error.empty();
  if (read.value && clock_.Now() - read.value_at <= max_age_) {
    f.value = read.value;
    f.series = read.series;
    f.at = read.value_wall;
    return f;
  }
  // Why, in words that change only when Prometheus' answer does: the error,
  // not the last value or its age (a restarted controller has neither, and
  // the condition's message must read the same in any process).
  f.why = read.error;
  if (f.why.empty() && read.value) f.why = "no value read in the last " + WindowText(max_age_);
  return f;
}

Recommendation PrometheusAutoscaler::Recommend(const std::string& ns, const std::string& name, const Spec& spec,
                                               int current_replicas) {
  const Key key{ns, name};
  const std::string& queue_template =
      spec.queue_query < templates_.size() ? templates_[spec.queue_query] : templates_.front();
  const Fresh queue = ReadFresh({ns, name, Metric::kQueueLength}, RenderQuery(queue_template, ns, name));
  std::optional<Fresh> gpu;
  if (spec.target_gpu_utilization > 0)
    gpu = ReadFresh({ns, name, Metric::kGpuUtilization}, RenderQuery(gpu_template_, ns, name));
  if (queue.pending || (gpu && gpu->pending)) {
    Recommendation rec;
    rec.pending = true;
    rec.message = "waiting for the first answer from Prometheus (query: " + (queue.pending ? queue.query : gpu->query) +
                  "); keeping " + std::to_string(current_replicas) + " replicas";
    rec.desired_replicas = current_replicas;
    return rec;
  }
  if (!queue.value) return Unreadable(key, "the queue length", queue, current_replicas);
  if (gpu && !gpu->value) return Unreadable(key, "the GPU utilization", *gpu, current_replicas);
  Readable(key, *queue.value);
  std::optional<GpuUtilization> u;
  if (gpu) u = Mean(*gpu);
  return Decide(key, spec, current_replicas, *queue.value, u);
}

Recommendation PrometheusAutoscaler::Decide(const Key& key, const Spec& spec, int current_replicas, double l,
                                            const std::optional<GpuUtilization>& u) {
  const int plain = DesiredReplicas(l, spec);
  int raw = DesiredReplicas(l, spec, current_replicas, tolerance_);
  const Bounds b = NormalizedBounds(spec);
  Recommendation rec;
  rec.metrics_ok = true;
  rec.queue_length = l;
  rec.message = "queue length " + text::FormatNumber(l) + ", target " + std::to_string(b.target) +
                " per replica: " + std::to_string(plain) + " replicas";
  if (raw != plain) {
    rec.message += " (within the " + text::FormatNumber(tolerance_ * 100) + "% tolerance of " +
                   std::to_string(current_replicas) + " replicas, keeping " + std::to_string(raw) + ")";
  }
  if (u && u->percent) {
    const int by_gpu = GpuDesiredReplicas(*u->percent, spec, u->pods, current_replicas, tolerance_);
    rec.gpu_utilization = u->percent;
    rec.message += "; GPU utilization " + text::FormatNumber(std::round(*u->percent * 10) / 10) + "% on " +
                   std::to_string(u->pods) + " pods, target " + std::to_string(spec.target_gpu_utilization) +
                   "%: " + std::to_string(by_gpu) + " replicas";
    raw = std::max(raw, by_gpu);
  }
  rec.message += " (min " + std::to_string(b.lo) + ", max " + std::to_string(b.hi) + ")";
  const int desired = ClampReplicas(Stabilized(key, raw), spec);
  rec.desired_replicas = desired;
  if (desired > raw) {
    rec.message +=
        "; scale-down held at " + std::to_string(desired) + " by the " + WindowText(window_) + " stabilization window";
  }
  if (logger_) {
    logger_->debug("autoscaler {}/{}: current {}, desired {}: {}", key.first, key.second, current_replicas, desired,
                   rec.message);
  }
  return rec;
}

GpuUtilization PrometheusAutoscaler::Mean(const Fresh& f) {
  GpuUtilization g;
  g.pending = f.pending;
  if (f.value) {
    g.pods = std::max(1, f.series);
    g.percent = *f.value / g.pods;
  }
  g.observed_at = f.at;
  return g;
}

GpuUtilization PrometheusAutoscaler::Gpu(const std::string& ns, const std::string& name) {
  const Fresh f = ReadFresh({ns, name, Metric::kGpuUtilization}, RenderQuery(gpu_template_, ns, name));
  GpuUtilization g = Mean(f);
  if (!f.value && !f.pending)
    g.message = "cannot read the GPU utilization from Prometheus: " + f.why + " (query: " + f.query + ")";
  return g;
}

void PrometheusAutoscaler::ForgetGpu(const std::string& ns, const std::string& name) {
  readings_.Forget(MetricKey{ns, name, Metric::kGpuUtilization});
}

Recommendation PrometheusAutoscaler::Unreadable(const Key& key, const std::string& what, const Fresh& read,
                                                int current_replicas) {
  const auto& [ns, name] = key;
  {
    std::lock_guard<std::mutex> g(mu_);  // as in Readable()
    if (metrics_.per_object) metrics_.queue_length.Put(ns, name, {{}, std::numeric_limits<double>::quiet_NaN()});
  }
  const std::string& error = read.why;
  Recommendation rec;
  rec.metrics_ok = false;
  rec.reason = api::kReasonMetricsUnavailable;
  rec.message = "cannot read " + what + " from Prometheus: " + error + " (query: " + read.query + "); keeping " +
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
    // Under the lock Forget() removes it under: a reading that races a
    // Forget() cannot bring the series back after it.
    std::lock_guard<std::mutex> g(mu_);
    recovered = warned_.erase(key) > 0;
    if (metrics_.per_object) metrics_.queue_length.Put(key.first, key.second, {{}, queue_length});
  }
  if (recovered && logger_)
    logger_->info("autoscaler {}/{}: the queue length is readable again", key.first, key.second);
}

int PrometheusAutoscaler::Stabilized(const Key& key, int raw) {
  const clock::Clock::TimePoint now = clock_.Now();
  std::lock_guard<std::mutex> g(mu_);
  auto& h = history_[key];
  const clock::Clock::TimePoint cutoff = now - window_;
  if (window_ == clock::Clock::Duration::zero()) h.clear();  // no stabilization
  while (!h.empty() && h.front().at < cutoff) h.pop_front();
  while (!h.empty() && h.back().replicas <= raw) h.pop_back();
  h.push_back(Sample{now, raw});
  return h.front().replicas;
}

bool PrometheusAutoscaler::ShouldWarn(const Key& key, const std::string& error, clock::Clock::TimePoint now) {
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
    if (metrics_.per_object) metrics_.queue_length.Remove(ns, name);
  }
  readings_.Forget(MetricKey{ns, name, Metric::kQueueLength});
  // The GPU utilization is read for the status too: ForgetGpu.
}

std::size_t PrometheusAutoscaler::TrackedObjects() const {
  std::lock_guard<std::mutex> g(mu_);
  return history_.size();
}

}  // namespace ms::autoscale
