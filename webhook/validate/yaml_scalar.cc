#include "webhook/validate/yaml_scalar.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

namespace ms::validate {

using nlohmann::json;

namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64): optional sign
// (signed only), then 0x/0o/0b prefixes or a leading 0 for octal, else
// decimal; the whole string must be consumed, no overflow.
std::optional<uint64_t> ParseGoMagnitude(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16, s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8, s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2, s.remove_prefix(2);
    } else {
      base = 8, s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseGoInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) negative = s[0] == '-', s.remove_prefix(1);
  auto m = ParseGoMagnitude(s);
  if (!m) return std::nullopt;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (*m > kMax + 1) return std::nullopt;
    return *m == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(*m);
  }
  if (*m > kMax) return std::nullopt;
  return static_cast<int64_t>(*m);
}

// go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  } else {
    if (!digits()) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// strconv.ParseFloat for the decimal forms that reach it: the whole string,
// finite (an overflow is an error in Go, and the scalar stays a string).
std::optional<double> ParseFloat(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isinf(d) || std::isnan(d)) return std::nullopt;
  return d;
}

// A float as the API server receives it after kubectl's round trip through
// Go's encoding/json: integral values below 1e21 are written without a
// fraction and decoded as int64 when they fit.
json FloatValue(double d, const YAML::Mark& mark, const std::string& text) {
  if (std::isnan(d) || std::isinf(d)) throw Fail(mark, "unsupported value " + text + ": JSON has no NaN or infinity");
  if (std::trunc(d) == d && std::fabs(d) < 9.2233720368547758e18) return static_cast<int64_t>(d);
  return d;
}

json UnsignedValue(uint64_t u) {
  if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(u);
  return static_cast<double>(u);  // the API server decodes numbers beyond int64 as floats
}

}  // namespace

Resolved ResolvePlain(const std::string& in, const YAML::Mark& mark) {
  static const std::map<std::string_view, Resolved> kMap = [] {
    std::map<std::string_view, Resolved> m;
    for (const char* s : {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
      m[s] = {Kind::kBool, true};
    for (const char* s : {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
      m[s] = {Kind::kBool, false};
    for (const char* s : {"", "~", "null", "Null", "NULL"}) m[s] = {Kind::kNull, nullptr};
    for (const char* s :
         {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"})
      m[s] = {Kind::kFloat, json()};  // NaN and infinities: no JSON form
    m["<<"] = {Kind::kMerge, "<<"};
    return m;
  }();
  if (auto it = kMap.find(in); it != kMap.end()) {
    if (it->second.kind == Kind::kFloat) throw Fail(mark, "unsupported value " + in + ": JSON has no NaN or infinity");
    return it->second;
  }
  const char c = in[0];
  if (c == '.') {
    if (auto d = ParseFloat(in)) return {Kind::kFloat, FloatValue(*d, mark, in)};
  } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
    std::string plain;
    plain.reserve(in.size());
    for (char ch : in)
      if (ch != '_') plain += ch;
    if (auto i = ParseGoInt(plain)) return {Kind::kInt, *i};
    if (plain[0] != '+' && plain[0] != '-')
      if (auto u = ParseGoMagnitude(plain)) return {Kind::kInt, UnsignedValue(*u)};
    if (IsYamlStyleFloat(plain))
      if (auto d = ParseFloat(plain)) return {Kind::kFloat, FloatValue(*d, mark, in)};
  }
  return {Kind::kString, in};
}

Resolved ResolveScalar(const std::string& tag, const std::string& value, const YAML::Mark& mark) {
  if (tag == "?") return ResolvePlain(value, mark);
  if (tag.rfind(kTagPrefix, 0) != 0) return {Kind::kString, value};  // "!" or a tag JSON cannot express
  const std::string_view want = std::string_view(tag).substr(kTagPrefix.size());
  if (want == "str" || want == "binary" || want == "timestamp") return {Kind::kString, value};
  Kind kind;
  if (want == "bool")
    kind = Kind::kBool;
  else if (want == "int")
    kind = Kind::kInt;
  else if (want == "float")
    kind = Kind::kFloat;
  else if (want == "null")
    kind = Kind::kNull;
  else
    return {Kind::kString, value};
  Resolved r = ResolvePlain(value, mark);
  if (r.kind == kind) return r;
  if (kind == Kind::kFloat && r.kind == Kind::kInt) return r;  // an int is a valid !!float (and integral anyway)
  throw Fail(mark, "cannot decode `" + value + "` as !!" + std::string(want));
}

std::string KeyString(const json& key, const YAML::Mark& mark) {
  switch (key.type()) {
    case json::value_t::string:
      return key.get<std::string>();
    case json::value_t::boolean:
      return key.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return key.dump();
    case json::value_t::number_float: {
      std::array<char, 64> buf{};
      auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<float>(key.get<double>()),
                                     std::chars_format::general);
      return ec == std::errc() ? std::string(buf.data(), end) : key.dump();
    }
    case json::value_t::null:
      throw Fail(mark, "unsupported map key: null");
    default:
      throw Fail(mark, "invalid map key: a map key must be a scalar");
  }
}

}  // namespace ms::validate
