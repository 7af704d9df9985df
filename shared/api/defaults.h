// Defaulting of a ModelService object (design.md §2 "Mutation"). The defaults
// themselves are the typed spec's (ModelServiceSpec::Defaulted); here
// they are added to the object where it has no value, and the mutating
// webhook's JSON Patch is the difference between the object and that
// defaulted form, so the patch cannot say anything the defaults do not.
// Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include "base/json_ref.h"

#include <string>

namespace ms::api {

// The object with its typed spec's defaults added wherever the object has
// no value: a value the object has, even one of the wrong type, is never
// replaced, and nothing is added inside a field that is not an object (a
// malformed part is left to validation). `spec` is added when absent; an
// object that is not a JSON object, or whose spec is not one, is returned
// unchanged.
nlohmann::json DefaultedObject(const nlohmann::json& object);

// The RFC 6902 JSON Patch (an array of operations) from `object` to
// DefaultedObject(object): `add` operations only, `/spec` first when absent,
// then the fields in the order of design.md §2. Empty when the object
// already has every default (reinvocation is a no-op).
nlohmann::json DefaultsPatch(JsonRef object);
// The same patch as JSON text (DefaultsPatch(object).dump()), written
// without building the array; "" when the patch is empty.
std::string DefaultsPatchText(JsonRef object);

}  // namespace ms::api
