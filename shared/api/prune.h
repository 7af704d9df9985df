// What the API server does to a ModelService before admission
// (k8s.io/apiextensions-apiserver v1.34, a CRD with a structural schema):
// it prunes the members the schema does not know, which kubectl's default
// strict field validation turns into an error listing them, and drops the
// null members the schema knows (none of its fields is nullable, none has a
// default). `modelservice-webhook validate` does the same, so its verdict is
// the API server's. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ms::api {

// Removes from `object` every member the schema does not know (in metadata,
// those not of an ObjectMeta) and returns their paths, sorted as the API
// server lists them: "spec.colour", "spec.env[0].nam", "metadata.lables".
// Below a field that keeps unknown fields (affinity) nothing is pruned.
std::vector<std::string> PruneUnknownFields(nlohmann::json& object);

// Drops every null member of an object the schema describes ("replicas:
// null" is as if absent); nulls inside arrays stay (and are type errors).
void DropNulls(nlohmann::json& object);

// The API server's message for the pruned fields under strict field
// validation: `strict decoding error: unknown field "spec.a", unknown field "spec.b"`.
std::string StrictDecodingError(const std::vector<std::string>& unknown_fields);

}  // namespace ms::api
