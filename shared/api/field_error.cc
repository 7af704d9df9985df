#include "api/field_error.h"

namespace ms::api {

std::string RenderValue(JsonRef value) {
  std::string s;
  if (value.is_structured() && value.size() > 64) {
    s = value.is_object() ? "{...}" : "[...]";
  } else {
    s = value.dump();
  }
  // At most 128 bytes quoted, cut before a character, never inside one: the
  // message is logged and answered as UTF-8.
  constexpr size_t kMax = 128;
  if (s.size() > kMax) {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string FieldError::ToString() const {
  switch (type) {
    case Type::kRequired:
      return path + ": Required value" + (detail.empty() ? "" : ": " + detail);
    case Type::kInvalid:
      return path + ": Invalid value: " + value + (detail.empty() ? "" : ": " + detail);
    case Type::kUnsupported:
      return path + ": Unsupported value: " + value + ": " + detail;
    case Type::kForbidden:
      return path + ": Forbidden: " + detail;
    case Type::kTooLong:
      return path + ": Too long: " + detail;
    case Type::kTooMany:
      return path + ": Too many: " + value + ": " + detail;
    case Type::kDuplicate:
      return path + ": Duplicate value: " + value;
  }
  return path + ": " + detail;
}

FieldError FieldError::Required(std::string path, std::string detail) {
  return {Type::kRequired, std::move(path), {}, std::move(detail)};
}

FieldError FieldError::Invalid(std::string path, JsonRef value, std::string detail) {
  return {Type::kInvalid, std::move(path), RenderValue(value), std::move(detail)};
}

FieldError FieldError::Unsupported(std::string path, JsonRef value, const std::vector<std::string>& supported) {
  std::string d = "supported values: ";
  for (size_t i = 0; i < supported.size(); ++i) {
    if (i) d += ", ";
    d += "\"" + supported[i] + "\"";
  }
  return {Type::kUnsupported, std::move(path), RenderValue(value), std::move(d)};
}

FieldError FieldError::Forbidden(std::string path, std::string detail) {
  return {Type::kForbidden, std::move(path), {}, std::move(detail)};
}

FieldError FieldError::TooLong(std::string path, size_t max_bytes) {
  return {Type::kTooLong, std::move(path), {}, "may not be more than " + std::to_string(max_bytes) + " bytes"};
}

FieldError FieldError::TooMany(std::string path, size_t actual, size_t max_items) {
  return {Type::kTooMany, std::move(path), std::to_string(actual),
          "must have at most " + std::to_string(max_items) + " items"};
}

FieldError FieldError::Duplicate(std::string path, JsonRef value) {
  return {Type::kDuplicate, std::move(path), RenderValue(value), {}};
}

std::string JoinErrors(const std::vector<FieldError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "; ";
    out += e.ToString();
  }
  return out;
}

}  // namespace ms::api
