// Which objects a ModelService owns. Ownership is the controller
// ownerReference, never the labels: a Deployment whose labels were removed is
// still ours, and a same-named object without our ownerReference is never
// ours, whatever its labels. Every function here accepts any JSON (a
// malformed ownerReference, e.g. `controller: "yes"`, is simply not a
// controller reference).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ms::modelservice {

// The uid of the object's controller ownerReference, or "" when none.
std::string ControllerUid(const nlohmann::json& object);

// True when the object's controller ownerReference has `owner_uid`.
bool IsControlledBy(const nlohmann::json& object, const std::string& owner_uid);

// "ns/name" of the ModelService controlling `object` (its controller
// ownerReference of kind ModelService in our API group), or "" when none.
std::string OwnerKey(const nlohmann::json& object);

}  // namespace ms::modelservice
