// The value nlohmann::json::parse makes of one JSON number token, for the
// parsers that read with RapidJSON (its kParseNumbersAsStringsFlag) and must
// build the same tree as nlohmann would: an integer without '.', 'e' or 'E'
// is unsigned unless it starts with '-', one that does not fit 64 bits is a
// double, and a double out of range is an error. The conversion is strtod's
// (correctly rounded), not RapidJSON's own: its full-precision path shifts by
// __builtin_clzll(0) on a zero significand with an exponent ("0e40"), which
// is undefined behaviour (found by the watch_decoder fuzz target).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ms::text {

// A number as nlohmann's parser types it, without a tree's value around it.
struct TypedNumber {
  enum class Type : uint8_t { kUnsigned, kInteger, kFloat };
  Type type = Type::kUnsigned;
  uint64_t u = 0;  // kUnsigned
  int64_t i = 0;   // kInteger (negative)
  double d = 0;    // kFloat
};

// The number, or nullopt where nlohmann's parser reports an error.
std::optional<TypedNumber> ReadJsonNumber(std::string_view token);
std::optional<nlohmann::json> JsonNumber(std::string_view token);

}  // namespace ms::text
