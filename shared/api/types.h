// The names of the ModelService API (design.md §2): group, version, kind,
// plural, finalizer, and the values its status reports (phases, condition
// types and reasons), generated from the definition into types.gen.h. The
// limits and defaults of the spec's fields are their rules (spec.gen.h),
// e.g. ModelServiceSpec::kReplicas.max.
#pragma once

#include "api/types.gen.h"  // IWYU pragma: export
