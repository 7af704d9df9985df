// Small text helpers both programs use.
#pragma once

#include <string>
#include <string_view>

namespace ms::text {

// `s` without the leading and trailing characters in `chars` (by default
// white space and line ends).
std::string_view Trim(std::string_view s, std::string_view chars = " \t\r\n");

// `v` in the C locale, the shortest text that reads back as the same
// double; "NaN", "+Inf", "-Inf" as Prometheus writes them.
std::string FormatNumber(double v);

}  // namespace ms::text
