#include "controller/kube/status.h"

namespace ms::kube {

std::string ReasonForHttpCode(int http_code) {
  switch (http_code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

Status StatusFromJson(const nlohmann::json& status, int http_code) {
  Status out;
  out.code = http_code;
  if (status.is_object()) {
    if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) out.code = it->get<int>();
    if (auto it = status.find("reason"); it != status.end() && it->is_string()) out.reason = it->get<std::string>();
    if (auto it = status.find("message"); it != status.end() && it->is_string()) out.message = it->get<std::string>();
  }
  if (out.reason.empty()) out.reason = ReasonForHttpCode(out.code);
  return out;
}

Status StatusFromBody(std::string_view body, int http_code) {
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && (parsed.value("kind", "") == "Status" || parsed.contains("reason"))) {
    Status s = StatusFromJson(parsed, http_code);
    s.code = http_code;  // the HTTP answer is authoritative for the caller's checks
    return s;
  }
  Status s;
  s.code = http_code;
  s.reason = ReasonForHttpCode(http_code);
  constexpr size_t kMaxMessage = 1024;
  s.message = std::string(body.substr(0, kMaxMessage));
  if (s.message.empty()) s.message = "HTTP " + std::to_string(http_code);
  return s;
}

bool IsGone(const Status& status) {
  return status.code == 410 || status.reason == "Expired" || status.reason == "Gone";
}

Status TransportError(std::string message) {
  Status s;
  s.code = 0;
  s.reason = "Transport";
  s.message = std::move(message);
  return s;
}

}  // namespace ms::kube
