#include "controller/autoscale/formula.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ms::autoscale {
namespace {

Spec S(int min, int max, int target) { return Spec{min, max, target}; }

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(AutoscaleFormula, ZeroQueueGivesMin) {
  EXPECT_EQ(DesiredReplicas(0, S(1, 10, 5)), 1);
  EXPECT_EQ(DesiredReplicas(0, S(3, 10, 5)), 3);
  EXPECT_EQ(DesiredReplicas(-0.0, S(2, 10, 5)), 2);
}

TEST(AutoscaleFormula, ExactMultiplesAndOneMore) {
  const Spec s = S(1, 100, 5);
  for (int k = 1; k <= 20; ++k) {
    EXPECT_EQ(DesiredReplicas(k * 5.0, s), k) << "L = k*T, k=" << k;
    EXPECT_EQ(DesiredReplicas(k * 5.0 + 1, s), k + 1) << "L = k*T + 1, k=" << k;
    EXPECT_EQ(DesiredReplicas(k * 5.0 - 1, s), k) << "L = k*T - 1, k=" << k;
  }
  EXPECT_EQ(DesiredReplicas(0.001, s), 1);
  EXPECT_EQ(DesiredReplicas(5.000001, s), 2);
}

TEST(AutoscaleFormula, TargetOneIsCeilOfL) {
  const Spec s = S(1, 100, 1);
  EXPECT_EQ(DesiredReplicas(1, s), 1);
  EXPECT_EQ(DesiredReplicas(1.5, s), 2);
  EXPECT_EQ(DesiredReplicas(37, s), 37);
  EXPECT_EQ(DesiredReplicas(100, s), 100);
  EXPECT_EQ(DesiredReplicas(101, s), 100);
}

TEST(AutoscaleFormula, ClampsToMinAndMax) {
  EXPECT_EQ(DesiredReplicas(1, S(4, 10, 5)), 4);
  EXPECT_EQ(DesiredReplicas(51, S(1, 10, 5)), 10);
  EXPECT_EQ(DesiredReplicas(50, S(1, 10, 5)), 10);
  EXPECT_EQ(DesiredReplicas(49, S(1, 10, 5)), 10);
  EXPECT_EQ(DesiredReplicas(45, S(1, 10, 5)), 9);
}

TEST(AutoscaleFormula, MinEqualsMax) {
  for (double l : {0.0, 1.0, 7.0, 1e9, 1e300}) EXPECT_EQ(DesiredReplicas(l, S(3, 3, 2)), 3) << l;
  EXPECT_EQ(DesiredReplicas(5, S(3, 3, 2), 10, 0.1), 3);
}

TEST(AutoscaleFormula, HugeQueueDoesNotOverflow) {
  EXPECT_EQ(DesiredReplicas(1e300, S(1, 10, 1)), 10);
  EXPECT_EQ(DesiredReplicas(std::numeric_limits<double>::max(), S(1, 100, 1)), 100);
  EXPECT_EQ(DesiredReplicas(3e9, S(1, 100, 1)), 100);  // above INT_MAX
  EXPECT_EQ(DesiredReplicas(kInf, S(1, 7, 5)), 7);
  EXPECT_EQ(DesiredReplicas(1e300, S(1, 10, 1), 5, 0.1), 10);
  EXPECT_EQ(DesiredReplicas(kInf, S(1, 10, 1), 5, 0.1), 10);
}

TEST(AutoscaleFormula, NegativeQueueIsZero) {
  EXPECT_EQ(DesiredReplicas(-1, S(2, 10, 5)), 2);
  EXPECT_EQ(DesiredReplicas(-1e300, S(1, 10, 5)), 1);
  EXPECT_EQ(DesiredReplicas(-kInf, S(1, 10, 5)), 1);
  EXPECT_EQ(DesiredReplicas(-5, S(1, 10, 5), 3, 0.1), 1);
}

TEST(AutoscaleFormula, NaNIsDefinedAndInRange) {
  EXPECT_EQ(DesiredReplicas(kNaN, S(2, 10, 5)), 2);
  EXPECT_EQ(DesiredReplicas(kNaN, S(2, 10, 5), 6, 0.1), 2);
  EXPECT_EQ(DesiredReplicas(5, S(1, 10, 5), 1, kNaN), 1);
}

TEST(AutoscaleFormula, NeverBelowOneAndInvalidSpecsNormalized) {
  EXPECT_EQ(DesiredReplicas(0, S(0, 10, 5)), 1);
  EXPECT_EQ(DesiredReplicas(0, S(-3, 0, 5)), 1);
  EXPECT_EQ(DesiredReplicas(100, S(0, 0, 5)), 1);
  // max < min: min wins.
  EXPECT_EQ(DesiredReplicas(100, S(4, 2, 5)), 4);
  EXPECT_EQ(DesiredReplicas(0, S(4, 2, 5)), 4);
  // T < 1 counts as 1.
  EXPECT_EQ(DesiredReplicas(7, S(1, 10, 0)), 7);
  EXPECT_EQ(DesiredReplicas(7, S(1, 10, -4)), 7);
  const Bounds b = NormalizedBounds(S(-1, -5, 0));
  EXPECT_EQ(b.lo, 1);
  EXPECT_EQ(b.hi, 1);
  EXPECT_EQ(b.target, 1);
}

TEST(AutoscaleFormula, ToleranceKeepsCurrentNearTheTarget) {
  const Spec s = S(1, 20, 10);
  // C = 4, T = 10: C*T = 40. Within 10%: L in [36, 44].
  EXPECT_EQ(DesiredReplicas(44, s), 5);
  EXPECT_EQ(DesiredReplicas(44, s, 4, 0.10), 4);
  EXPECT_EQ(DesiredReplicas(36, s, 4, 0.10), 4);
  EXPECT_EQ(DesiredReplicas(40, s, 4, 0.10), 4);
  EXPECT_EQ(DesiredReplicas(31, s), 4);
  EXPECT_EQ(DesiredReplicas(36, s, 5, 0.10), 4);  // 36/50 = 0.72: outside, formula
  // Just outside the band: the formula applies.
  EXPECT_EQ(DesiredReplicas(44.5, s, 4, 0.10), 5);
  EXPECT_EQ(DesiredReplicas(35.5, s, 4, 0.10), 4);  // formula: ceil(3.55) = 4 anyway
  EXPECT_EQ(DesiredReplicas(35, s, 5, 0.30), 5);    // 35/50 = 0.7: within 30%
  EXPECT_EQ(DesiredReplicas(34, s, 5, 0.30), 4);    // 0.68: outside
  EXPECT_EQ(DesiredReplicas(64, s, 5, 0.30), 5);    // 1.28: within
  EXPECT_EQ(DesiredReplicas(66, s, 5, 0.30), 7);    // 1.32: outside, ceil(6.6)
}

TEST(AutoscaleFormula, ToleranceZeroOrNoCurrentUsesFormula) {
  const Spec s = S(1, 20, 10);
  EXPECT_EQ(DesiredReplicas(41, s, 4, 0.0), 5);
  EXPECT_EQ(DesiredReplicas(41, s, 4, -1.0), 5);  // negative: 0
  EXPECT_EQ(DesiredReplicas(40, s, 4, 0.0), 4);
  EXPECT_EQ(DesiredReplicas(41, s, 0, 0.5), 5);  // C = 0: no tolerance
  EXPECT_EQ(DesiredReplicas(41, s, -2, 0.5), 5);
  EXPECT_EQ(DesiredReplicas(0, s, 4, 0.10), 1);  // L = 0: ratio 0, outside
}

TEST(AutoscaleFormula, ToleranceResultIsClampedToTheSpec) {
  // Current 12 is above a max lowered to 8: the band keeps "current", but
  // clamped.
  EXPECT_EQ(DesiredReplicas(120, S(1, 8, 10), 12, 0.1), 8);
  // Current 1 below a raised min of 3.
  EXPECT_EQ(DesiredReplicas(10, S(3, 8, 10), 1, 0.1), 3);
  // Huge current: C*T computed in double, no overflow.
  EXPECT_EQ(DesiredReplicas(1e300, S(1, 100, 1 << 30), 1 << 30, 0.1), 100);
}

Spec G(int min, int max, int target_gpu) { return Spec{min, max, 5, target_gpu}; }

TEST(AutoscaleFormula, GpuUtilizationIsTheHpaRuleForAUtilizationTarget) {
  // (U, spec, pods reporting, current replicas, tolerance)
  EXPECT_EQ(GpuDesiredReplicas(90, G(1, 10, 60), 2, 2, 0.10), 3);  // ceil(2 x 90 / 60)
  EXPECT_EQ(GpuDesiredReplicas(90, G(1, 10, 60), 2, 3, 0.10), 3);  // the third pod does not report yet: still 3
  EXPECT_EQ(GpuDesiredReplicas(60, G(1, 10, 60), 3, 3, 0.10), 3);  // at the target
  EXPECT_EQ(GpuDesiredReplicas(65, G(1, 10, 60), 3, 3, 0.10), 3);  // 8% over: within the tolerance
  EXPECT_EQ(GpuDesiredReplicas(70, G(1, 10, 60), 3, 3, 0.10), 4);  // ceil(3.5)
  EXPECT_EQ(GpuDesiredReplicas(20, G(1, 10, 60), 6, 6, 0.10), 2);  // scale down: ceil(2)
  EXPECT_EQ(GpuDesiredReplicas(100, G(1, 4, 10), 3, 3, 0.10), 4);  // max
  EXPECT_EQ(GpuDesiredReplicas(1, G(2, 10, 60), 3, 3, 0.10), 2);   // min
  EXPECT_EQ(GpuDesiredReplicas(90, G(1, 10, 60), 0, 0, 0.10), 2);  // no pod counted: from 1
  EXPECT_EQ(GpuDesiredReplicas(0, G(1, 10, 60), 4, 4, 0.10), 1);   // idle GPUs: min
  EXPECT_EQ(GpuDesiredReplicas(std::nan(""), G(1, 10, 60), 4, 4, 0.10), 1);
  EXPECT_EQ(GpuDesiredReplicas(90, G(1, 10, 0), 4, 4, 0.10), 1);  // no GPU target: min
  EXPECT_EQ(GpuDesiredReplicas(1e300, G(1, 10, 1), 4, 4, 0.10), 10);
}

}  // namespace
}  // namespace ms::autoscale
