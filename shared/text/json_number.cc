#include "shared/text/json_number.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace ms::text {

std::optional<nlohmann::json> JsonNumber(std::string_view token) {
  if (token.empty()) return std::nullopt;
  if (token.find_first_of(".eE") == std::string_view::npos) {
    const char* first = token.data();
    const char* last = token.data() + token.size();
    if (token.front() == '-') {
      std::int64_t v = 0;
      auto [p, ec] = std::from_chars(first, last, v);
      if (ec == std::errc() && p == last) return nlohmann::json(v);
    } else {
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(first, last, v);
      if (ec == std::errc() && p == last) return nlohmann::json(v);
    }
  }
  const std::string text(token);  // strtod needs the terminator
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(d)) return std::nullopt;  // nlohmann: out_of_range 406
  return nlohmann::json(d);
}

}  // namespace ms::text
