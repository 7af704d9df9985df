#include "controller/runtime/list_pages.h"

#include <gtest/gtest.h>

#include <cstddef>

namespace ms::runtime {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The defaults: a first page of 100, then 1 MiB a page.
TEST(NextPageLimit, SmallObjectsComeInAFewLargePages) {
  const PageBudget b;
  EXPECT_EQ(b.first, 100);
  // ModelServices as the API server lists them, about 2.5 KB each with
  // their managedFields: 419 a page after the first.
  const int next = NextPageLimit(b, 100, 100 * 2500, 100);
  EXPECT_EQ(next, static_cast<int>(kMiB / 2500));
  EXPECT_GE(next, 400);
  // Tiny objects: up to `max` a page.
  EXPECT_EQ(NextPageLimit(b, 100, 100 * 8, 100), 100'000);
}

TEST(NextPageLimit, LargeObjectsComeInSmallPages) {
  const PageBudget b;
  // 200 KiB of tenants' annotations each: 5 a page, 1 MiB.
  EXPECT_EQ(NextPageLimit(b, 100, 100 * 200 * 1024 + 300, 100), 5);
  // An object larger than the whole budget: one at a time, never 0.
  EXPECT_EQ(NextPageLimit(b, 100, 3 * 2 * kMiB, 3), 1);
}

TEST(NextPageLimit, TheBytesPerItemAreRoundedUp) {
  const PageBudget b{.first = 10, .bytes = 1000, .max = 1000};
  EXPECT_EQ(NextPageLimit(b, 10, 301, 3), 9);  // 100.33 bytes an item count as 101
  EXPECT_EQ(NextPageLimit(b, 10, 300, 3), 10);
}

TEST(NextPageLimit, NothingLearnedKeepsTheLimit) {
  const PageBudget b{.first = 10, .bytes = 1000, .max = 50};
  EXPECT_EQ(NextPageLimit(b, 17, 0, 5), 17);     // the size not known (a fake client)
  EXPECT_EQ(NextPageLimit(b, 17, 4000, 0), 17);  // an empty page
  EXPECT_EQ(NextPageLimit(b, 80, 0, 0), 50);     // still within max
  EXPECT_EQ(NextPageLimit(b, 0, 0, 0), 1);       // and at least 1
}

}  // namespace
}  // namespace ms::runtime
