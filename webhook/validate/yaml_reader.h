// YAML (and JSON, which is YAML) manifests read into the JSON that kubectl
// would send to the API server: a stream of documents, each converted as
// sigs.k8s.io/yaml converts it (go-yaml v2's YAML 1.1 scalars: yes/no/on/off
// are booleans, 0x1F and 0o17 and 017 integers, 1_000 is 1000, timestamps
// stay strings; map keys become strings; a float with an integral value
// reaches the API server as an integer, 2.0 -> 2; `<<` merge keys; the last of
// duplicate keys wins). Built on yaml-cpp's event parser; parses untrusted
// bytes: every failure is an error with its line, never an exception out of
// here; aliases are expanded under a budget (no "billion laughs"), nesting
// is bounded by yaml-cpp (2000 levels), text must be printable UTF-8.
// Scalars are resolved by yaml_scalar.h; yaml_writer.h writes values back.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ms::validate {

struct YamlDocument {
  nlohmann::json value;  // null for an empty document
  int line = 0;          // 1-based line where the document's content starts
};

struct YamlReadResult {
  std::vector<YamlDocument> documents;  // those before an error, if any
  // Set when the stream is not valid YAML or cannot be converted to JSON:
  // "line L, column C: what", 1-based.
  std::optional<std::string> error;
};

struct YamlLimits {
  // JSON values (scalars, arrays, objects) that aliases may copy in one
  // stream, counted at every use (the values written out are bounded by the
  // text's size).
  size_t max_alias_nodes = 1'000'000;
};

YamlReadResult ReadYaml(std::string_view text, const YamlLimits& limits = {});

}  // namespace ms::validate
