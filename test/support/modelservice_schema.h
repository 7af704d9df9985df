// The ModelService schema compiled once per test binary (valijson compiles
// its regular expressions and subschemas: tens of milliseconds), for the
// tests that validate many objects.
#pragma once

#include "api/schema.h"

namespace ms::test {

inline const api::SchemaValidator& ModelServiceSchema() {
  static const api::SchemaValidator schema;
  return schema;
}

}  // namespace ms::test
