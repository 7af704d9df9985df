#include "shared/text/strings.h"

#include <gtest/gtest.h>

#include <limits>

namespace ms::text {
namespace {

TEST(FormatNumber, ShortestRoundTripInTheCLocale) {
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatNumber(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(12), "12");
  EXPECT_EQ(FormatNumber(1e21), "1e+21");
}

}  // namespace
}  // namespace ms::text
