// Setting the members the controller owns on an object the API server
// returned, and the form in which it returns values. Internal to
// controller/modelservice (pod_fields.cc, container_fields.cc).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ms::modelservice {

// obj[key] = want, or no member when `want` is null; appends `field` to
// `drift` when that changed `obj`.
void Own(nlohmann::json& obj, const char* key, const nlohmann::json& want, const std::string& field,
         std::vector<std::string>& drift);

// `v`, or null when it is empty (an absent member).
nlohmann::json OrNull(nlohmann::json v);

// A value as the API server returns it: members with an empty string
// (omitempty) dropped, in nested objects and arrays too.
nlohmann::json Served(nlohmann::json v);

}  // namespace ms::modelservice
