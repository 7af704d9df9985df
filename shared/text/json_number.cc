#include "shared/text/json_number.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace ms::text {

std::optional<TypedNumber> ReadJsonNumber(std::string_view token) {
  if (token.empty()) return std::nullopt;
  TypedNumber n;
  if (token.find_first_of(".eE") == std::string_view::npos) {
    const char* first = token.data();
    const char* last = token.data() + token.size();
    if (token.front() == '-') {
      n.type = TypedNumber::Type::kInteger;
      auto [p, ec] = std::from_chars(first, last, n.i);
      if (ec == std::errc() && p == last) return n;
    } else {
      auto [p, ec] = std::from_chars(first, last, n.u);
      if (ec == std::errc() && p == last) return n;
    }
  }
  const std::string text(token);  // strtod needs the terminator
  char* end = nullptr;
  n.type = TypedNumber::Type::kFloat;
  n.d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(n.d)) return std::nullopt;  // nlohmann: out_of_range 406
  return n;
}

std::optional<nlohmann::json> JsonNumber(std::string_view token) {
  const auto n = ReadJsonNumber(token);
  if (!n) return std::nullopt;
  switch (n->type) {
    case TypedNumber::Type::kUnsigned:
      return nlohmann::json(n->u);
    case TypedNumber::Type::kInteger:
      return nlohmann::json(n->i);
    case TypedNumber::Type::kFloat:
      break;
  }
  return nlohmann::json(n->d);
}

}  // namespace ms::text
