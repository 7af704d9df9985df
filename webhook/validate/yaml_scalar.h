// YAML scalars as sigs.k8s.io/yaml turns them into JSON: go-yaml v2's
// resolution of YAML 1.1 scalars (yes/no/on/off are booleans, 0x1F, 0o17 and
// 017 integers, 1_000 is 1000, timestamps stay strings, integral floats reach
// the API server as integers) and of explicit tags, and map keys as JSON
// object keys. A value JSON cannot hold is a YAML::ParserException with its
// position, as a syntax error is. Used by the reader (yaml_reader.h) and by
// the writer, which quotes what a plain scalar would not read back as.
#pragma once

#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>

#include <nlohmann/json.hpp>

#include <string>

namespace ms::validate {

// A value from a YAML source that JSON cannot hold, or a budget exceeded:
// reported like a syntax error, with the position.
inline YAML::ParserException Fail(const YAML::Mark& mark, const std::string& what) { return {mark, what}; }

enum class Kind { kString, kBool, kInt, kFloat, kNull, kMerge };

struct Resolved {
  Kind kind = Kind::kString;
  nlohmann::json value;
};

// go-yaml v2's resolve() of a plain scalar.
Resolved ResolvePlain(const std::string& in, const YAML::Mark& mark);

// A scalar with its tag: "?" plain, "!" quoted or block, else an explicit tag.
Resolved ResolveScalar(const std::string& tag, const std::string& value, const YAML::Mark& mark);

// A map key as sigs.k8s.io/yaml turns it into a JSON object key.
std::string KeyString(const nlohmann::json& key, const YAML::Mark& mark);

}  // namespace ms::validate
