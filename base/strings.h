// Small text helpers both programs use.
#pragma once

#include <string>

namespace ms {

// `v` in the C locale, the shortest text that reads back as the same
// double; "NaN", "+Inf", "-Inf" as Prometheus writes them.
std::string FormatNumber(double v);

}  // namespace ms
