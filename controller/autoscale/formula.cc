#include "controller/autoscale/formula.h"

#include <algorithm>
#include <cmath>

namespace ms::autoscale {

Bounds NormalizedBounds(const Spec& spec) {
  Bounds b;
  b.lo = std::max(1, spec.min_replicas);
  b.hi = std::max(b.lo, spec.max_replicas);
  b.target = std::max(1, spec.target_queue_length);
  return b;
}

int ClampReplicas(int replicas, const Spec& spec) {
  const Bounds b = NormalizedBounds(spec);
  return std::clamp(replicas, b.lo, b.hi);
}

namespace {

// L with NaN, negatives and -0.0 mapped to 0; +Inf stays.
double SanitizeQueueLength(double l) {
  if (std::isnan(l) || !(l > 0.0)) return 0.0;
  return l;
}

}  // namespace

int DesiredReplicas(double queue_length, const Spec& spec) {
  const Bounds b = NormalizedBounds(spec);
  const double l = SanitizeQueueLength(queue_length);
  const double ratio = std::ceil(l / static_cast<double>(b.target));  // >= 0, maybe +Inf
  // Compare in double before converting: hi is an int, so any ratio below it
  // converts exactly and safely.
  if (!(ratio < static_cast<double>(b.hi))) return b.hi;
  const int r = static_cast<int>(ratio);
  return std::max(r, b.lo);
}

int DesiredReplicas(double queue_length, const Spec& spec, int current_replicas, double tolerance) {
  if (current_replicas > 0 && !std::isnan(queue_length)) {
    const Bounds b = NormalizedBounds(spec);
    const double tol = (std::isnan(tolerance) || tolerance < 0) ? 0.0 : tolerance;
    const double l = SanitizeQueueLength(queue_length);
    // |L/(C*T) - 1| <= tol, evaluated as |L - C*T| <= tol*C*T with a
    // relative slack of 1e-9 so that boundaries like L = 44, C*T = 40,
    // tol = 0.1 are inside despite binary rounding (44.0/40 - 1 > 0.1 in
    // doubles). L = +Inf never passes: Inf <= finite is false.
    const double ct = static_cast<double>(current_replicas) * static_cast<double>(b.target);
    if (std::fabs(l - ct) <= (tol + 1e-9) * ct) return std::clamp(current_replicas, b.lo, b.hi);
  }
  return DesiredReplicas(queue_length, spec);
}

int GpuDesiredReplicas(double utilization, const Spec& spec, int pods, int current_replicas, double tolerance) {
  const Bounds b = NormalizedBounds(spec);
  if (spec.target_gpu_utilization <= 0 || std::isnan(utilization) || !(utilization > 0.0)) return b.lo;
  const int n = std::max(1, pods);
  const double ratio = utilization / static_cast<double>(spec.target_gpu_utilization);
  const double tol = (std::isnan(tolerance) || tolerance < 0) ? 0.0 : tolerance;
  if (std::fabs(ratio - 1.0) <= tol + 1e-9) return std::clamp(std::max(1, current_replicas), b.lo, b.hi);
  const double want = std::ceil(static_cast<double>(n) * ratio - 1e-9);
  if (!(want < static_cast<double>(b.hi))) return b.hi;
  return std::max(static_cast<int>(want), b.lo);
}

}  // namespace ms::autoscale
