// Reads the fields of one JSON object of a spec by their rules
// (field_rules.h) from the JSON pull reader (shared/text/json_reader.h), in
// one pass over the object's members as the text has them: what it can read
// it returns, what it cannot it reports as a FieldError in the API server's
// wording ("spec.replicas: Invalid value: 0: must be between 1 and 100"),
// and unknown members become warnings. The generated parser (spec.gen.cc)
// switches on each member's key to one call per field; the rules of each
// kind are applied by the ReadValue overloads.
//
// What is read is what nlohmann's tree of the same text holds: of a
// repeated key the last (its value and its errors replace the earlier
// one's), errors in the definition's order of the fields (each field's in a
// slot, joined at the object's end), unknown fields warned once each in key
// order, before the warnings of the nested objects.
//
// A field is read (set) when the object has it in a form it can be read in,
// even out of range: an integer field any JSON integer (beyond int64
// saturated), a string field any string, an int-or-percent an integer or a
// valid "N%", an enum a supported value, an object field an object. What
// cannot be read stays unset and is reported.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/field_rules.h"
#include "shared/text/json_reader.h"

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

// The next value, whatever it is, as nlohmann's tree of it (for an error's
// words; null when the text is not JSON there).
nlohmann::json TakeValue(text::JsonReader& in);

// "must be of type integer, not string" for `v` at `path`, its value
// rendered as the API server renders it.
FieldError TypeError(const std::string& path, const nlohmann::json& v, const char* want);
// ... for the next value, read.
inline FieldError TypeError(const std::string& path, text::JsonReader& in, const char* want) {
  return TypeError(path, TakeValue(in), want);
}
inline FieldError TypeError(const FieldPath& path, text::JsonReader& in, const char* want) {
  return TypeError(path.str(), in, want);
}

// Each reads the next value; false only when the text is not JSON there.
std::optional<int64_t> ReadValue(text::JsonReader& in, const FieldPath& path, const IntRule& rule,
                                 std::vector<FieldError>& errors);
std::optional<std::string> ReadValue(text::JsonReader& in, const FieldPath& path, const StringRule& rule,
                                     std::vector<FieldError>& errors);
std::optional<bool> ReadValue(text::JsonReader& in, const FieldPath& path, const BoolRule& rule,
                              std::vector<FieldError>& errors);
std::optional<IntOrPercent> ReadValue(text::JsonReader& in, const FieldPath& path, const IntOrPercentRule& rule,
                                      std::vector<FieldError>& errors);
std::optional<Quantity> ReadValue(text::JsonReader& in, const FieldPath& path, const QuantityRule& rule,
                                  std::vector<FieldError>& errors);
// A port number (IsValidPortNum) or name (IsValidPortName), each problem an
// "Invalid value" in the API server's words (ValidatePortNumOrName).
std::optional<PortNumberOrName> ReadValue(text::JsonReader& in, const FieldPath& path, const PortRule& rule,
                                          std::vector<FieldError>& errors);
std::optional<nlohmann::json> ReadValue(text::JsonReader& in, const FieldPath& path, const OpaqueRule& rule,
                                        std::vector<FieldError>& errors);
// One of rule.values, else "Unsupported value" listing them.
std::optional<size_t> ReadEnumIndex(text::JsonReader& in, const FieldPath& path, const char* const* values,
                                    size_t count, std::vector<FieldError>& errors);
template <class E, size_t N>
std::optional<E> ReadValue(text::JsonReader& in, const FieldPath& path, const EnumRule<E, N>& rule,
                           std::vector<FieldError>& errors) {
  const auto i = ReadEnumIndex(in, path, rule.values.data(), N, errors);
  return i ? std::optional<E>(static_cast<E>(*i)) : std::nullopt;
}

// A field of the object a FieldReader reads: its name, and its place in
// the object's list of fields (the generated parser numbers them).
struct Field {
  std::string_view name;
  size_t index;
};

class FieldReader {
 public:
  // The most fields an object may have (tools/apigen checks it).
  static constexpr size_t kMaxFields = 48;

  // At an object (the caller has checked that the next value is one). At
  // the root (`path` ""), fields are named without a leading '.' and
  // unknown ones are not warned about.
  FieldReader(text::JsonReader& in, std::string path, FieldReport report);

  const std::string& path() const { return path_; }
  std::string Path(std::string_view key) const { return JoinPath(path_, path_.empty() ? "" : ".", key); }

  // The next member that is one of `fields`: true and its index, whose
  // value the caller reads next (one Read call); false at the object's
  // end. Other members are skipped and warned about at Finish.
  bool Next(std::span<const std::string_view> fields, size_t& index);
  // After the last Next: "spec.model: Required value" for each of
  // `required` the object lacks, the errors and warnings in order (above).
  void Finish(std::span<const std::string_view> fields, std::span<const size_t> required);
  // The fields the object had (bit i: fields[i]), whatever their values.
  FieldSet present() const { return {present_}; }

  // A value field.
  template <class Rule>
  auto Read(Field key, const Rule& rule)
      -> decltype(ReadValue(std::declval<text::JsonReader&>(), std::declval<const FieldPath&>(), rule,
                            std::declval<std::vector<FieldError>&>())) {
    return ReadValue(in_, FieldPath(path_, key.name), rule, report_.errors);
  }

  // An object field: its fields read into `out` (set) when it is an object.
  template <class T>
  void ReadObject(Field key, std::optional<T>& out) {
    out.reset();
    if (!Object(key)) return;
    FieldReader sub(in_, Path(key.name), report_);
    ReadFields(sub, out.emplace());
  }

  // An array of values (item_rule) or of objects: "spec.args[2]" names an
  // item. One of more than rule.max_items items is reported ("Too many")
  // and not read.
  template <class T, class ItemRule>
  void ReadList(Field key, const ArrayRule& rule, const ItemRule& item_rule, std::optional<std::vector<T>>& out) {
    out.reset();
    if (!Array(key)) return;
    auto& list = out.emplace();
    const std::string list_path = Path(key.name);
    const Mark mark = Here();
    size_t n = 0;
    for (; in_.NextItem(); ++n) {
      if (n >= rule.max_items) {  // too many: counted, not read (a hostile list costs no errors)
        if (!in_.Skip()) break;
        continue;
      }
      if (auto item = ReadValue(in_, FieldPath(list_path, n), item_rule, report_.errors))
        list.push_back(std::move(*item));
    }
    EndList(key, rule, n, mark, out);
  }
  template <class T>
  void ReadList(Field key, const ArrayRule& rule, std::optional<std::vector<T>>& out) {
    out.reset();
    if (!Array(key)) return;
    auto& list = out.emplace();
    const std::string list_path = Path(key.name);
    const Mark mark = Here();
    size_t n = 0;
    for (; in_.NextItem(); ++n) {
      if (n >= rule.max_items) {  // too many: counted, not read (a hostile list costs no errors)
        if (!in_.Skip()) break;
        continue;
      }
      const std::string path = FieldPath(list_path, n).str();
      if (in_.Peek() != text::JsonReader::Kind::kObject) {
        report_.errors.push_back(TypeError(path, in_, "object"));
        continue;
      }
      FieldReader sub(in_, path, report_);
      ReadFields(sub, list.emplace_back());
    }
    EndList(key, rule, n, mark, out);
  }

  // A map of values (value_rule) or of objects: "spec.nodeSelector[pool]"
  // names an entry. A map of more than rule.max_properties entries is
  // reported ("Too many", as the API server words maxProperties) and not
  // read.
  template <class T, class ValueRule>
  void ReadMap(Field key, const MapRule& rule, const ValueRule& value_rule,
               std::optional<std::map<std::string, T>>& out) {
    ReadEntries(key, rule, out, [&](const std::string& map_path, std::string_view k, std::map<std::string, T>& map) {
      if (auto value = ReadValue(in_, FieldPath::Entry(map_path, k), value_rule, report_.errors))
        map.insert_or_assign(std::string(k), std::move(*value));
    });
  }
  template <class T>
  void ReadMap(Field key, const MapRule& rule, std::optional<std::map<std::string, T>>& out) {
    ReadEntries(key, rule, out, [&](const std::string& map_path, std::string_view k, std::map<std::string, T>& map) {
      const std::string path = FieldPath::Entry(map_path, k).str();
      if (in_.Peek() != text::JsonReader::Kind::kObject) {
        report_.errors.push_back(TypeError(path, in_, "object"));
        return;
      }
      FieldReader sub(in_, path, report_);
      ReadFields(sub, map[std::string(k)]);
    });
  }

 private:
  // Where the errors and warnings stood.
  struct Mark {
    size_t errors, warnings;
  };
  // The errors and warnings written while one member was read (left
  // uninitialized until then: a reader per object of every review).
  struct Slot {
    Mark begin, end;
  };
  Mark Here() const { return {report_.errors.size(), report_.warnings.size()}; }
  // Drops the errors and warnings written since `mark`.
  void Truncate(Mark mark) const;

  // Enters the value at `key` when it is an object or an array (else reported and skipped).
  bool Object(Field key);
  bool Array(Field key);
  // A list of `n` items read since `mark`: dropped and reported when over the rule's bound.
  template <class T>
  void EndList(Field key, const ArrayRule& rule, size_t n, Mark mark, std::optional<T>& out) {
    if (n <= rule.max_items) return;
    Truncate(mark);
    out.reset();
    report_.errors.push_back(FieldError::TooMany(Path(key.name), n, rule.max_items));
  }
  // The entries of the map at `key`, each read by read_entry(map_path, key,
  // map), the last of a repeated key kept, its errors and warnings ordered
  // by key as for_each over nlohmann's tree would give them.
  template <class Map, class ReadEntry>
  void ReadEntries(Field key, const MapRule& rule, std::optional<Map>& out, ReadEntry&& read_entry) {
    out.reset();
    if (!Object(key) || !in_.BeginObject()) return;
    auto& map = out.emplace();
    const std::string map_path = Path(key.name);
    const Mark mark = Here();
    std::vector<std::pair<std::string_view, Slot>> entries;
    std::unordered_set<std::string_view> keys;
    std::string_view k;
    while (in_.NextKey(k)) {
      keys.insert(k);
      if (keys.size() > rule.max_properties) {  // too many: counted, not read (a hostile map costs no errors)
        if (!in_.Skip()) break;
        continue;
      }
      map.erase(std::string(k));  // a repeated key: the last one only
      Slot slot{Here(), {}};
      read_entry(map_path, k, map);
      slot.end = Here();
      entries.emplace_back(k, slot);
    }
    if (keys.size() > rule.max_properties) {
      Truncate(mark);
      out.reset();
      report_.errors.push_back(FieldError::TooMany(Path(key.name), keys.size(), rule.max_properties));
      return;
    }
    OrderEntries(mark, entries);
  }
  // After a map's entries: their errors and warnings put in key order (the
  // last of a repeated key's).
  void OrderEntries(Mark mark, std::vector<std::pair<std::string_view, Slot>>& entries);

  text::JsonReader& in_;
  std::string path_;
  FieldReport report_;
  Mark start_;
  uint64_t present_ = 0;
  std::array<Slot, kMaxFields> slots_;     // by field index: the last occurrence's (when in present_)
  std::vector<std::string_view> unknown_;  // the keys not among the fields
  size_t current_ = kMaxFields;            // the field whose value is being read
};

}  // namespace ms::api
