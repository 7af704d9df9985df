// A field error in the Kubernetes API server's wording
// (k8s.io/apimachinery/pkg/util/validation/field): "<path>: <kind>: <detail>".
#pragma once

#include <nlohmann/json.hpp>

#include "base/json_ref.h"

#include <string>
#include <vector>

namespace ms::api {

struct FieldError {
  enum class Type { kRequired, kInvalid, kUnsupported, kForbidden, kTooLong, kTooMany, kDuplicate };
  Type type = Type::kInvalid;
  std::string path;    // e.g. spec.strategy.rollingUpdate.maxSurge
  std::string value;   // the offending value rendered as JSON (Invalid/Unsupported)
  std::string detail;  // e.g. "must be between 1 and 100"

  std::string ToString() const;
  void AppendTo(std::string& out) const;  // ToString() appended to `out`

  static FieldError Required(std::string path, std::string detail = {});
  // The value in either tree (JsonRef), or anything nlohmann::json is made of.
  static FieldError Invalid(std::string path, JsonRef value, std::string detail);
  static FieldError Invalid(std::string path, const nlohmann::json& value, std::string detail) {
    return Invalid(std::move(path), JsonRef(value), std::move(detail));
  }
  static FieldError Unsupported(std::string path, JsonRef value, const std::vector<std::string>& supported);
  static FieldError Unsupported(std::string path, const nlohmann::json& value,
                                const std::vector<std::string>& supported) {
    return Unsupported(std::move(path), JsonRef(value), supported);
  }
  static FieldError Forbidden(std::string path, std::string detail);
  static FieldError TooLong(std::string path, size_t max_bytes);
  static FieldError TooMany(std::string path, size_t actual, size_t max_items);
  static FieldError Duplicate(std::string path, JsonRef value);
  static FieldError Duplicate(std::string path, const nlohmann::json& value) {
    return Duplicate(std::move(path), JsonRef(value));
  }
};

// Renders a value as the API server does in "Invalid value: ..." (JSON; long
// values are cut at 128 bytes with "...").
std::string RenderValue(JsonRef value);

// All errors joined with "; ", as a denial's message.
std::string JoinErrors(const std::vector<FieldError>& errors);

}  // namespace ms::api
