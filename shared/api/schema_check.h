// The ModelService schema compiled once into a plain tree of checks, for the
// admission path: it answers WHERE a document breaks the schema (the paths
// valijson reports, in SchemaError::path's form) at a small fraction of
// valijson's cost, and leaves the wording to valijson, which runs only when
// a violation is found that no hand-written check explains (validation.h).
//
// Draft 4 as valijson applies it with strong types (integer = a JSON integer,
// minimum/maximum compare numbers as valijson does, lengths in UTF-8 code
// points up to a NUL byte), for the keywords the schema uses: type, enum (of
// strings), minimum, maximum, minLength, maxLength, pattern, required,
// properties, additionalProperties, maxProperties, items (one schema),
// maxItems and anyOf. A schema
// with any other keyword is not compiled (supported() is false) and the
// caller asks valijson every time. A test compares the paths with valijson's
// on the admission tests' objects, the fuzz corpora and mutations of them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "shared/text/json_ref.h"

namespace ms::api {

class CompiledSchema {
 public:
  // Never throws: a schema it cannot compile gives supported() == false.
  explicit CompiledSchema(std::string_view schema_json);
  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  bool supported() const { return !nodes_.empty(); }

  // The path of every value that breaks a constraint (once per value and
  // constraint kind at most; "" for the root), in no particular order.
  // With `skipped` (not empty), the root's member of that name is neither
  // walked nor required. Thread-safe. Only when supported().
  std::vector<std::string> ViolationPaths(JsonRef document, std::string_view skipped = {}) const;

  struct Node;

 private:
  class Walk;
  std::vector<Node> nodes_;  // nodes_[0] is the root
};

// The native matcher for a regular expression of the schema, or nullptr
// when the pattern is not one of the few it knows; a test checks each
// against std::regex_search.
using PatternMatcher = bool (*)(std::string_view);
PatternMatcher NativePattern(std::string_view pattern);

}  // namespace ms::api
