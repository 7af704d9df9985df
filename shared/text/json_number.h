#pragma once
// The value nlohmann::json::parse makes of one JSON number token, for the
// parsers that read with RapidJSON (its kParseNumbersAsStringsFlag) and must
// build the same tree as nlohmann would: an integer without '.', 'e' or 'E'
// is unsigned unless it starts with '-', one that does not fit 64 bits is a
// double, and a double out of range is an error. The conversion is strtod's
// (correctly rounded), not RapidJSON's own: its full-precision path shifts by
// __builtin_clzll(0) on a zero significand with an exponent ("0e40"), which
// is undefined behaviour (found by the watch_decoder fuzz target).

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ms::text {

// The number, or nullopt where nlohmann's parser reports an error.
std::optional<nlohmann::json> JsonNumber(std::string_view token);

}  // namespace ms::text
