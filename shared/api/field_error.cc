#include "shared/api/field_error.h"

#include <algorithm>
#include <string_view>

#include "shared/text/json_text.h"

namespace ms::api {

std::string RenderValue(const nlohmann::json& value) {
  std::string s;
  // Integers and strings as nlohmann writes them, without its serializer
  // (and its localeconv per number).
  if (value.is_number_unsigned()) {
    s = std::to_string(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    s = std::to_string(value.get<int64_t>());
  } else if (value.is_string()) {
    const auto& str = value.get_ref<const std::string&>();
    s.reserve(str.size() + 2);
    text::AppendJsonString(s, str);
  } else if (value.is_structured() && value.size() > 64) {
    s = value.is_object() ? "{...}" : "[...]";
  } else {
    s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

void FieldError::AppendTo(std::string& out) const {
  out += path;
  const auto then = [&out](std::string_view label, const std::string& text) {
    out += label;
    out += text;
  };
  switch (type) {
    case Type::kRequired:
      out += ": Required value";
      if (!detail.empty()) then(": ", detail);
      return;
    case Type::kInvalid:
      then(": Invalid value: ", value);
      if (!detail.empty()) then(": ", detail);
      return;
    case Type::kUnsupported:
      then(": Unsupported value: ", value);
      then(": ", detail);
      return;
    case Type::kForbidden:
      then(": Forbidden: ", detail);
      return;
    case Type::kTooLong:
      then(": Too long: ", detail);
      return;
    case Type::kTooMany:
      then(": Too many: ", value);
      then(": ", detail);
      return;
    case Type::kDuplicate:
      then(": Duplicate value: ", value);
      return;
  }
  then(": ", detail);
}

std::string FieldError::ToString() const {
  std::string out;
  AppendTo(out);
  return out;
}

FieldError FieldError::Required(std::string path, std::string detail) {
  return {Type::kRequired, std::move(path), {}, std::move(detail), {}, {}};
}

FieldError FieldError::Invalid(std::string path, const nlohmann::json& value, std::string detail) {
  return {Type::kInvalid, std::move(path), RenderValue(value), std::move(detail), {}, {}};
}

FieldError FieldError::Unsupported(std::string path, const nlohmann::json& value,
                                   const std::vector<std::string>& supported) {
  std::string d = "supported values: ";
  for (size_t i = 0; i < supported.size(); ++i) {
    if (i) d += ", ";
    d += "\"" + supported[i] + "\"";
  }
  return {Type::kUnsupported, std::move(path), RenderValue(value), std::move(d), {}, {}};
}

FieldError FieldError::Forbidden(std::string path, std::string detail) {
  return {Type::kForbidden, std::move(path), {}, std::move(detail), {}, {}};
}

FieldError FieldError::TooLong(std::string path, size_t max_bytes) {
  return {Type::kTooLong, std::move(path), {}, "may not be more than " + std::to_string(max_bytes) + " bytes", {}, {}};
}

FieldError FieldError::TooMany(std::string path, size_t actual, size_t max_items) {
  return {Type::kTooMany,
          std::move(path),
          std::to_string(actual),
          "must have at most " + std::to_string(max_items) + (max_items == 1 ? " item" : " items"),
          {},
          {}};
}

FieldError FieldError::Duplicate(std::string path, const nlohmann::json& value) {
  return {Type::kDuplicate, std::move(path), RenderValue(value), {}, {}, {}};
}

std::string CutText(std::string text, size_t limit) {
  if (text.size() <= limit) return text;
  // The marker counts: it is at most as long as with the whole size in it.
  const size_t marker = std::string_view("...[cut  bytes]").size() + std::to_string(text.size()).size();
  size_t cut = limit > marker ? limit - marker : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  const size_t left_out = text.size() - cut;
  text.resize(cut);
  text += "...[cut " + std::to_string(left_out) + " bytes]";
  return text;
}

std::string JoinErrors(const std::vector<FieldError>& errors) {
  const size_t listed = std::min(errors.size(), kMaxListedErrors);
  size_t size = 0;  // enough for the labels and separators too: one allocation
  for (size_t i = 0; i < listed; ++i)
    size += std::min(errors[i].path.size() + errors[i].value.size() + errors[i].detail.size(), kMaxErrorBytes) + 32;
  std::string out;
  out.reserve(size + 40);
  std::string one;
  for (size_t i = 0; i < listed; ++i) {
    if (i) out += "; ";
    const FieldError& e = errors[i];
    if (e.path.size() + e.value.size() + e.detail.size() + 32 <= kMaxErrorBytes) {
      e.AppendTo(out);  // short enough whatever its labels: no copy
      continue;
    }
    one.clear();
    e.AppendTo(one);
    out += CutText(std::move(one), kMaxErrorBytes);
  }
  if (const size_t more = errors.size() - listed; more > 0)
    out += "; ... and " + std::to_string(more) + (more == 1 ? " more error" : " more errors");
  return out;
}

}  // namespace ms::api
