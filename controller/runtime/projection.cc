#include "controller/runtime/projection.h"

namespace ms::runtime {

using nlohmann::json;

json Project(const json& value, const json& mask) {
  if (!mask.is_object()) return value;
  if (value.is_array()) {
    json out = json::array();
    for (const auto& element : value) out.push_back(Project(element, mask));
    return out;
  }
  if (!value.is_object()) return value;
  json out = json::object();
  for (const auto& [key, sub] : mask.items()) {
    auto it = value.find(key);
    if (it != value.end()) out[key] = Project(*it, sub);
  }
  return out;
}

}  // namespace ms::runtime
