// spec.affinity and spec.topologySpreadConstraints checked as the API server
// checks a pod template's (Kubernetes v1.34, pkg/apis/core/validation and
// apimachinery's label selector validation), in its wording, on the
// ModelService's field paths. What the schema already says (required
// members, enums, weights 1-100) the parser reports; these are the rules
// between members and the names inside them. Pure.
#pragma once

#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/spec.gen.h"

namespace ms::api {

void CheckAffinity(const Affinity& affinity, std::vector<FieldError>& errors);
void CheckTopologySpreadConstraints(const std::vector<TopologySpreadConstraint>& constraints,
                                    std::vector<FieldError>& errors);

}  // namespace ms::api
