// Defaulting of a ModelService object (design.md §2 "Mutation"). The defaults
// themselves are the typed spec's (ModelServiceSpec::Defaulted); here
// they are added to the object where it has no value, and the mutating
// webhook's JSON Patch is the difference between the object and that
// defaulted form, so the patch cannot say anything the defaults do not.
// Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include "shared/api/spec.h"
#include "shared/text/json_reader.h"

#include <string>
#include <string_view>

namespace ms::api {

// The object with its typed spec's defaults added wherever the object has
// no value: a value the object has, even one of the wrong type, is never
// replaced, and nothing is added inside a field that is not an object (a
// malformed part is left to validation). `spec` is added when absent; an
// object that is not a JSON object, or whose spec is not one, is returned
// unchanged.
nlohmann::json DefaultedObject(const nlohmann::json& object);

// The RFC 6902 JSON Patch from `object` to DefaultedObject(object), as the
// webhook sends it: `add` operations only, `/spec` first when absent, then
// each default the spec lacks in the order of design.md §2, written as text
// by the generated AppendDefaultsPatch (spec.gen.cc) from the typed
// defaults, byte for byte as nlohmann's dump() writes the array. "" when
// the object already has every default (reinvocation is a no-op), or is not
// an object, or its spec is not one (validation denies those).
std::string DefaultsPatchText(text::JsonText object);
// ... of an object read already (the webhook's, in its pass over the review).
std::string DefaultsPatchText(const ParsedModelService& object);
// The same patch as a JSON array (empty when there is nothing to add).
nlohmann::json DefaultsPatch(const nlohmann::json& object);

}  // namespace ms::api
