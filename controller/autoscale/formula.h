// The queue-length replica formula (design.md §3):
//
//   R = clamp(ceil(L / T), minReplicas, maxReplicas), never below 1
//
// with an HPA-style tolerance around the current replica count. Pure
// functions: no state, no clock, safe from any thread.
#pragma once

#include "controller/autoscale/autoscaler.h"

namespace ms::autoscale {

// The HPA's default (--horizontal-pod-autoscaler-tolerance).
inline constexpr double kDefaultTolerance = 0.10;

// The bounds the formula clamps to, after normalising a spec the webhook
// should have rejected: lo = max(1, min_replicas); hi = max(lo, max_replicas)
// (when max < min, min wins). target_queue_length < 1 is treated as 1.
struct Bounds {
  int lo = 1;
  int hi = 1;
  int target = 1;
};
Bounds NormalizedBounds(const Spec& spec);

// Clamps `replicas` into the spec's normalised bounds.
int ClampReplicas(int replicas, const Spec& spec);

// clamp(ceil(L / T), lo, hi) as above, never below 1. Robust for every double:
//  - L <= 0, -0.0, -Inf and NaN give lo (NaN is "unavailable" and the caller
//    must not act on it; the function only promises not to invoke UB);
//  - huge L (1e300, +Inf) gives hi; ceil(L / T) is never converted to int
//    unless it is below hi, so nothing overflows.
int DesiredReplicas(double queue_length, const Spec& spec);

// As above with the HPA's tolerance: when current_replicas > 0 and
//   |L / (current_replicas * T) - 1| <= tolerance
// the answer is current_replicas (clamped into the bounds, so a spec whose
// min/max moved past the current count still takes effect); otherwise it is
// DesiredReplicas(L, spec). The band is closed and computed as
// |L - C*T| <= (tolerance + 1e-9) * C*T, so exact boundaries (L = 44 with
// C*T = 40 and tolerance 0.1) count as inside despite binary rounding.
// A negative or NaN tolerance counts as 0 (then C is kept only when L is
// C*T to within 1e-9 relative). L is treated as above (negative -> 0) before the ratio is taken;
// a NaN L gives lo.
int DesiredReplicas(double queue_length, const Spec& spec, int current_replicas, double tolerance);

// The GPU utilization's proposal, as the HPA's for a utilization target:
// clamp(ceil(n * U / targetU), lo, hi), where U is the mean utilization of
// the n pods that report it (n = max(1, pods)): a pod that does not report
// yet (just created) counts for nothing, as the HPA leaves it out of a
// scale-up; the current replica count C (clamped) is kept while
// |U / targetU - 1| <= tolerance. U <= 0 or NaN gives lo; U is not capped at
// 100. A spec without a GPU target (target_gpu_utilization <= 0) gives lo.
int GpuDesiredReplicas(double utilization, const Spec& spec, int pods, int current_replicas, double tolerance);

}  // namespace ms::autoscale
