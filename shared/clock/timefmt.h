// Timestamps as the API writes them: metav1.Time (RFC 3339, seconds) and
// metav1.MicroTime (2006-01-02T15:04:05.000000Z), always in UTC.
#pragma once

#include <optional>
#include <string>

#include "shared/clock/clock.h"

namespace ms::clock {

std::string FormatTime(Clock::WallTime t);       // 2006-01-02T15:04:05Z
std::string FormatMicroTime(Clock::WallTime t);  // 2006-01-02T15:04:05.000000Z
// Parses either form (fraction optional, 'Z' or +00:00); nullopt when invalid.
std::optional<Clock::WallTime> ParseTime(const std::string& s);

}  // namespace ms::clock
