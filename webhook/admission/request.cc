#include "webhook/admission/request.h"

#include <nlohmann/json.hpp>

namespace ms::admission {

std::optional<std::string> JsonString(const std::optional<std::string_view>& json) {
  if (!json || json->size() < 2 || json->front() != '"') return std::nullopt;
  const std::string_view inner = json->substr(1, json->size() - 2);
  if (inner.find('\\') == std::string_view::npos) return std::string(inner);  // checked UTF-8, no escapes
  auto v = nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false);
  return v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
}

std::string JsonDump(const std::optional<std::string_view>& json) {
  if (!json) return "null";
  return nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ms::admission
