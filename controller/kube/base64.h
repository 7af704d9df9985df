// Standard base64 (RFC 4648) decoding, as kubeconfig's *-data fields use.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ms::kube {

// Decodes standard base64; whitespace is ignored, padding optional.
// Returns nullopt on any other invalid character or a truncated quantum.
std::optional<std::string> Base64Decode(std::string_view in);

}  // namespace ms::kube
