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

// The DeleteOptions of a DELETE of `object`, an owned object as it was read:
// background propagation, and preconditions on that read, so that a decision
// taken on it deletes nothing else: its uid (a same-named object made since
// is not ours) and its resourceVersion (one changed since, e.g. whose
// ownerReference the garbage collector removed to orphan it, is read and
// decided on again: the API server answers 409 Conflict).
nlohmann::json DeleteOptionsFor(const nlohmann::json& object);

// "ns/name" of the ModelService controlling `object` (its controller
// ownerReference of kind ModelService in our API group), or "" when none.
std::string OwnerKey(const nlohmann::json& object);

}  // namespace ms::modelservice
