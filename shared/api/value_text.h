// A field's value as JSON text, byte for byte what nlohmann's dump() writes
// for ToJsonValue(v) (field_rules.h), without building the nlohmann value:
// for the defaults patch on the webhook's hot path. Each generated struct
// has an AppendJson (spec.gen.cc) writing its members in key order, as
// nlohmann keeps an object's members; a test compares the two writers.
#pragma once

#include <charconv>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "shared/api/field_rules.h"
#include "shared/base/json_text.h"

namespace ms::api {

template <class T>
void AppendJsonValue(std::string& out, const T& v);

inline void AppendJsonInteger(std::string& out, int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

// 3 or "25%".
inline void AppendJsonValue(std::string& out, const IntOrPercent& v) {
  if (!v.percent) return AppendJsonInteger(out, v.value);
  out += '"';
  AppendJsonInteger(out, v.value);
  out += "%\"";
}

template <class T>
void AppendJsonValue(std::string& out, const std::vector<T>& list) {
  out += '[';
  for (const T& v : list) {
    if (&v != list.data()) out += ',';
    AppendJsonValue(out, v);
  }
  out += ']';
}

template <class T>
void AppendJsonValue(std::string& out, const std::map<std::string, T>& map) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : map) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonValue(out, v);
  }
  out += '}';
}

template <class T>
void AppendJsonValue(std::string& out, const T& v) {
  if constexpr (std::is_enum_v<T>) {
    AppendJsonString(out, ToString(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    AppendJsonInteger(out, v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    AppendJsonString(out, v);
  } else if constexpr (requires { AppendJson(out, v); }) {
    AppendJson(out, v);  // a generated struct
  } else {
    // Quantity, an opaque object: rare in a patch, written by nlohmann.
    out += ToJsonValue(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace ms::api
