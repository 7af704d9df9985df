// JSON values written as block YAML that ReadYaml (yaml_reader.h) reads back
// as the same values: the documents `modelservice-webhook validate
// --show-defaults` prints.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ms::validate {

// One JSON value as block YAML that ReadYaml reads back as the same value:
// strings are quoted where a plain scalar would be read as something else.
std::string ToYaml(const nlohmann::json& value);

}  // namespace ms::validate
