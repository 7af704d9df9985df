// Defaulting of a ModelService (design.md §2): the minimal JSON Patch that
// adds what is missing and nothing else. Pure: no I/O. An object that already
// has every default yields an empty patch, so reinvocation is safe.
#pragma once

#include <nlohmann/json.hpp>

#include "api/json_patch.h"

namespace ms {

// Defaults applied (only where the parent exists with the right type; a
// malformed object gets no patch for the malformed part — validation denies it):
//   spec                                 {}            when absent
//   spec.replicas                        autoscaling.minReplicas when autoscaling
//                                        is set with a valid minReplicas, else 1
//   spec.port                            8080
//   spec.gpus                            0
//   spec.strategy.type                   RollingUpdate
//   spec.strategy.rollingUpdate          {maxSurge: "25%", maxUnavailable: 0}
//                                        (RollingUpdate only)
//   spec.strategy.rollingUpdate.maxSurge        "25%"
//   spec.strategy.rollingUpdate.maxUnavailable  0, or 1 when maxSurge is
//                                        explicitly 0 (both 0 is invalid)
//   spec.autoscaling.minReplicas         1
jsonpatch::Patch DefaultsPatch(const nlohmann::json& object);

// The object with the defaults applied (for tests and the controller).
nlohmann::json WithDefaults(const nlohmann::json& object);

}  // namespace ms
