// Decoding metav1.Status answers into ms::kube::Status.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "controller/kube/client.h"

namespace ms::kube {

// The StatusReason the API server uses for an HTTP code (404 -> "NotFound",
// 409 -> "Conflict", 410 -> "Gone", 422 -> "Invalid", ...); "Unknown" otherwise.
std::string ReasonForHttpCode(int http_code);

// A Status from a metav1.Status object. Missing fields fall back to
// `http_code` and ReasonForHttpCode(http_code).
Status StatusFromJson(const nlohmann::json& status, int http_code);

// A Status from an error response body: the metav1.Status when the body is
// one, else the code's reason with the body text (truncated) as message.
Status StatusFromBody(std::string_view body, int http_code);

// True for a 410 Gone / Expired status: the resourceVersion is too old and the
// caller must relist.
bool IsGone(const Status& status);

// A transport failure (code 0, reason "Transport").
Status TransportError(std::string message);

}  // namespace ms::kube
