// The names of the ModelService API (design.md §2): group, version, kind,
// plural, finalizer, and the values its status reports (phases, condition
// types and reasons), generated from the definition into types.gen.h. The
// limits and defaults of the spec's fields are their rules (spec.gen.h),
// e.g. ModelServiceSpec::kReplicas.max.
#pragma once

#include <string_view>

#include "shared/api/types.gen.h"  // IWYU pragma: export

namespace ms::api {

// Whether `api_version` names a version of this API's group
// ("modelops.dev/v1", "modelops.dev/v2beta1"): an object of ours, perhaps
// of another version.
inline bool InGroup(std::string_view api_version) {
  const std::string_view group = kGroup;
  return api_version.size() > group.size() && api_version.starts_with(group) && api_version[group.size()] == '/';
}

}  // namespace ms::api
