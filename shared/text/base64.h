// Standard base64 (RFC 4648): encoding for JSON Patch responses, decoding for
// kubeconfig's *-data fields and tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ms::text {

std::string Base64Encode(std::string_view data);
// Whitespace is ignored and padding optional; nullopt on any other invalid
// character, data after padding, or a truncated quantum.
std::optional<std::string> Base64Decode(std::string_view in);

}  // namespace ms::text
