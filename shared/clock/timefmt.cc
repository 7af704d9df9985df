#include "shared/clock/timefmt.h"

#include <cstdio>
#include <ctime>

namespace ms::clock {

namespace {
std::string Format(Clock::WallTime t, bool micro) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto us = duration_cast<microseconds>(t - secs).count();
  const std::time_t tt = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out = buf;
  if (micro) {
    char frac[32];
    std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(us));
    out += frac;
  }
  out += 'Z';
  return out;
}
}  // namespace

std::string FormatTime(Clock::WallTime t) { return Format(t, false); }
std::string FormatMicroTime(Clock::WallTime t) { return Format(t, true); }

std::optional<Clock::WallTime> ParseTime(const std::string& s) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t i = static_cast<std::size_t>(consumed);
  long long micros = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 6; ++digits) micros *= 10;
  }
  const std::string zone = s.substr(i);
  if (zone != "Z" && zone != "+00:00") return std::nullopt;
  const std::time_t tt = timegm(&tm);
  return std::chrono::system_clock::from_time_t(tt) + std::chrono::microseconds(micros);
}

}  // namespace ms::clock
