// Projection of a JSON object onto the fields a controller reads, for the
// informers' cache transforms (controller-runtime's cache transform idea:
// keep less than the API server sends, managedFields never).
#pragma once

#include <nlohmann/json.hpp>

namespace ms::runtime {

// Keeps the parts of `value` that `mask` names. A mask `true` keeps the whole
// subtree; an object mask keeps only its keys, each projected by its own
// mask; on an array, the mask applies to each element. A value of another
// shape than the mask expects (a string where an object is expected) is kept
// as it is: the reader judges it, as it would the whole object.
nlohmann::json Project(const nlohmann::json& value, const nlohmann::json& mask);

}  // namespace ms::runtime
