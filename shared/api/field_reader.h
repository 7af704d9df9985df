// Reads the fields of one JSON object of a spec by their rules
// (field_rules.h): what it can read it returns, what it cannot it reports as
// a FieldError in the API server's wording ("spec.replicas: Invalid value:
// 0: must be between 1 and 100"), and unknown members become warnings. The
// generated parser (spec.gen.cc) is one call per field; the rules of each
// kind are applied by the ReadValue overloads.
//
// A field is read (set) when the object has it in a form it can be read in,
// even out of range: an integer field any JSON integer (beyond int64
// saturated), a string field any string, an int-or-percent an integer or a
// valid "N%", an enum a supported value, an object field an object. What
// cannot be read stays unset and is reported.
#pragma once

#include <array>
#include <map>
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/field_rules.h"
#include "shared/text/json_ref.h"

namespace ms::api {

// `parent` `open` `key` `close` ("spec" "." "replicas", "spec.args" "[" "2"
// "]") in one allocation, not one per `+`: a reader's path is made for each
// object it reads, and an error's for each error.
std::string JoinPath(std::string_view parent, std::string_view open, std::string_view key, std::string_view close = {});

// The path of a field as errors name it ("spec.replicas", "spec.args[2]",
// "spec.nodeSelector[pool]"), made into a string only when an error needs
// it: most fields read have none.
class FieldPath {
 public:
  FieldPath(const std::string& path) : parent_(path) {}  // NOLINT(google-explicit-constructor): a whole path
  FieldPath(const std::string& parent, std::string_view key) : parent_(parent), key_(key), kind_(kMember) {}
  FieldPath(const std::string& parent, size_t index) : parent_(parent), index_(index), kind_(kIndex) {}
  static FieldPath Entry(const std::string& parent, std::string_view key) {
    FieldPath p(parent, key);
    p.kind_ = kEntry;
    return p;
  }
  std::string str() const;
  operator std::string() const { return str(); }  // NOLINT(google-explicit-constructor)

 private:
  enum Kind { kWhole, kMember, kIndex, kEntry };
  const std::string& parent_;
  std::string_view key_;
  size_t index_ = 0;
  Kind kind_ = kWhole;
};

// Where the parser reports.
struct FieldReport {
  std::vector<FieldError>& errors;
  std::vector<std::string>& warnings;
};

// "must be of type integer, not string" for the value at `path`.
FieldError TypeError(const std::string& path, text::JsonRef v, const char* want);
inline FieldError TypeError(const FieldPath& path, text::JsonRef v, const char* want) {
  return TypeError(path.str(), v, want);
}

std::optional<int64_t> ReadValue(text::JsonRef v, const FieldPath& path, const IntRule& rule,
                                 std::vector<FieldError>& errors);
std::optional<std::string> ReadValue(text::JsonRef v, const FieldPath& path, const StringRule& rule,
                                     std::vector<FieldError>& errors);
std::optional<bool> ReadValue(text::JsonRef v, const FieldPath& path, const BoolRule& rule,
                              std::vector<FieldError>& errors);
std::optional<IntOrPercent> ReadValue(text::JsonRef v, const FieldPath& path, const IntOrPercentRule& rule,
                                      std::vector<FieldError>& errors);
std::optional<Quantity> ReadValue(text::JsonRef v, const FieldPath& path, const QuantityRule& rule,
                                  std::vector<FieldError>& errors);
// A port number (IsValidPortNum) or name (IsValidPortName), each problem an
// "Invalid value" in the API server's words (ValidatePortNumOrName).
std::optional<PortNumberOrName> ReadValue(text::JsonRef v, const FieldPath& path, const PortRule& rule,
                                          std::vector<FieldError>& errors);
std::optional<nlohmann::json> ReadValue(text::JsonRef v, const FieldPath& path, const OpaqueRule& rule,
                                        std::vector<FieldError>& errors);
// One of rule.values, else "Unsupported value" listing them.
std::optional<size_t> ReadEnumIndex(text::JsonRef v, const FieldPath& path, const char* const* values, size_t count,
                                    std::vector<FieldError>& errors);
template <class E, size_t N>
std::optional<E> ReadValue(text::JsonRef v, const FieldPath& path, const EnumRule<E, N>& rule,
                           std::vector<FieldError>& errors) {
  const auto i = ReadEnumIndex(v, path, rule.values.data(), N, errors);
  return i ? std::optional<E>(static_cast<E>(*i)) : std::nullopt;
}

// A field of the object a FieldReader reads: its name, and its place in
// the list of the object's fields given to FieldReader::Index (the
// generated parser numbers them).
struct Field {
  std::string_view name;
  size_t index;
};

class FieldReader {
 public:
  // The most fields an object may have (tools/apigen checks it).
  static constexpr size_t kMaxFields = 48;

  FieldReader(text::JsonRef object, std::string path, FieldReport report)
      : obj_(object), path_(std::move(path)), report_(report) {}

  const std::string& path() const { return path_; }
  std::string Path(std::string_view key) const { return JoinPath(path_, ".", key); }

  // Finds the object's value of each of `fields` (the last of a repeated
  // key), in one pass over its members, and warns "unknown field
  // \"spec.colour\"" of each member not in `fields`, in key order. First,
  // before any other call. Throws std::logic_error beyond kMaxFields.
  void Index(std::initializer_list<std::string_view> fields);
  // The value of `field`, if the object has it.
  std::optional<text::JsonRef> Find(Field field) const { return slots_[field.index]; }
  // "spec.model: Required value" when `field` is absent.
  void Require(Field field) const;

  // A value field: absent gives nullopt.
  template <class Rule>
  auto Read(Field key, const Rule& rule) const
      -> decltype(ReadValue(std::declval<text::JsonRef>(), std::declval<const FieldPath&>(), rule,
                            std::declval<std::vector<FieldError>&>())) {
    if (auto v = Find(key)) return ReadValue(*v, FieldPath(path_, key.name), rule, report_.errors);
    return std::nullopt;
  }

  // An object field: its fields read into `out` (set) when it is an object.
  template <class T>
  void ReadObject(Field key, std::optional<T>& out) const {
    if (auto v = Object(key)) {
      FieldReader sub(*v, Path(key.name), report_);
      ReadFields(sub, out.emplace());
    }
  }

  // An array of values (item_rule) or of objects: "spec.args[2]" names an item.
  template <class T, class ItemRule>
  void ReadList(Field key, const ArrayRule& rule, const ItemRule& item_rule, std::optional<std::vector<T>>& out) const {
    if (auto v = Array(key, rule)) {
      auto& list = out.emplace();
      const std::string list_path = Path(key.name);
      for (size_t i = 0; i < v->size(); ++i) {
        if (auto item = ReadValue(v->at(i), FieldPath(list_path, i), item_rule, report_.errors))
          list.push_back(std::move(*item));
      }
    }
  }
  template <class T>
  void ReadList(Field key, const ArrayRule& rule, std::optional<std::vector<T>>& out) const {
    if (auto v = Array(key, rule)) {
      auto& list = out.emplace();
      const std::string list_path = Path(key.name);
      for (size_t i = 0; i < v->size(); ++i) {
        const std::string path = FieldPath(list_path, i).str();
        const text::JsonRef item = v->at(i);
        if (!item.is_object()) {
          report_.errors.push_back(TypeError(path, item, "object"));
          continue;
        }
        FieldReader sub(item, path, report_);
        ReadFields(sub, list.emplace_back());
      }
    }
  }

  // A map of values (value_rule) or of objects: "spec.nodeSelector[pool]"
  // names an entry. A map of more than rule.max_properties entries is
  // reported ("Too many", as the API server words maxProperties) and not read.
  template <class T, class ValueRule>
  void ReadMap(Field key, const MapRule& rule, const ValueRule& value_rule,
               std::optional<std::map<std::string, T>>& out) const {
    if (!Find(key)) return;  // most maps are absent: no call
    if (auto v = Map(key, rule)) {
      auto& map = out.emplace();
      const std::string map_path = Path(key.name);
      v->for_each_member([&](std::string_view k, text::JsonRef e) {
        if (auto value = ReadValue(e, FieldPath::Entry(map_path, k), value_rule, report_.errors))
          map.emplace(std::string(k), std::move(*value));
      });
    }
  }
  template <class T>
  void ReadMap(Field key, const MapRule& rule, std::optional<std::map<std::string, T>>& out) const {
    if (!Find(key)) return;  // most maps are absent: no call
    if (auto v = Map(key, rule)) {
      auto& map = out.emplace();
      const std::string map_path = Path(key.name);
      v->for_each_member([&](std::string_view k, text::JsonRef e) {
        const std::string path = FieldPath::Entry(map_path, k).str();
        if (!e.is_object()) {
          report_.errors.push_back(TypeError(path, e, "object"));
          return;
        }
        FieldReader sub(e, path, report_);
        ReadFields(sub, map[std::string(k)]);
      });
    }
  }

 private:
  // The value at `key` when it is an object (else reported, and null).
  std::optional<text::JsonRef> Object(Field key) const;
  // The value at `key` when it is an array of at most rule.max_items (else reported, and null).
  std::optional<text::JsonRef> Array(Field key, const ArrayRule& rule) const;
  // The value at `key` when it is an object of at most rule.max_properties members (else reported, and null).
  std::optional<text::JsonRef> Map(Field key, const MapRule& rule) const;

  text::JsonRef obj_;
  std::string path_;
  FieldReport report_;
  std::array<std::optional<text::JsonRef>, kMaxFields> slots_{};  // by Field::index, set by Index
};

}  // namespace ms::api
