// Validation ratcheting per value, as the API server ratchets a CRD's schema
// (KEP-4008, GA in Kubernetes 1.33), for the webhook's rules: on an UPDATE,
// an error is reported only when a value it is about changed from
// oldObject, so an object stored before a rule was tightened can still be
// scaled and edited elsewhere, while a change to a value the rule reads is
// validated as usual (design.md §2).
//
// The value an error is about is the one at its path, correlated with
// oldObject's as the API server correlates them: an object's member by its
// name, a map's entry by its key, and nothing below an atomic list's index
// (every list of the spec is atomic: a list is unchanged only as a whole, so
// an error inside it is reported when anything in the list changed). A
// Required error is about the object that lacks the member (its `required`
// is that object's own keyword). An error with `reads` (a rule between
// fields) is reported when any value it names changed; one with an `entry`
// (a map key or value reported on the map's path) when that entry changed. Values are compared as JSON (nlohmann's
// operator==: objects as maps, an integer equal to a double of the same value); a value absent from both objects is
// unchanged.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>
#include "shared/api/field_error.h"

namespace ms::api {

// Removes from `errors` each one about values that `object` has as
// `old_object` had them (in the errors' order). Linear in the errors: each
// value named is looked up and compared once.
void RatchetErrors(std::vector<FieldError>& errors, const nlohmann::json& object, const nlohmann::json& old_object);

}  // namespace ms::api
