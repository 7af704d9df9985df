#include "controller/modelservice/owned.h"

namespace ms::modelservice {

using nlohmann::json;

void Own(json& obj, const char* key, const json& want, const std::string& field, std::vector<std::string>& drift) {
  const auto it = obj.find(key);
  if (want.is_null()) {
    if (it == obj.end()) return;
    obj.erase(it);
  } else if (it != obj.end() && *it == want) {
    return;
  } else {
    obj[key] = want;
  }
  drift.push_back(field);
}

json OrNull(json v) { return v.empty() ? json() : std::move(v); }

json Served(json v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_string() && it->get<std::string>().empty()) {
        it = v.erase(it);
        continue;
      }
      *it = Served(*it);
      ++it;
    }
  } else if (v.is_array()) {
    for (auto& e : v) e = Served(e);
  }
  return v;
}

}  // namespace ms::modelservice
