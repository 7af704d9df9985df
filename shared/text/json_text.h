// JSON text written without building a tree, byte for byte as
// nlohmann::json's dump() (compact, ensure_ascii off, invalid UTF-8
// replaced) writes the same value, for the answers on the webhook's hot
// path; a test compares the two on every kind of string.
#pragma once

#include <string>
#include <string_view>

namespace ms::text {

// `s` as a JSON string literal: '"' and '\' escaped, \b \f \n \r \t by
// their short escapes, other bytes below 0x20 as \u00xx (lowercase, as
// nlohmann writes them), everything else as it is.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace ms::text
