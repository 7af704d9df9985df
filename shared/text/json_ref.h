// A read-only view of one JSON value held in either of the two trees the
// programs parse into: nlohmann::json (the controller's cache, the offline
// validator's YAML, tests) or a RapidJSON value (the webhook's one parse of
// a review, in a memory pool). The API's readers (field_reader.h, the
// compiled schema, validation, defaults) take a JsonRef, so both programs
// share one implementation of every rule and the webhook needs no second
// tree.
//
// A RapidJSON value is read as nlohmann::json::parse would have read the
// same text: numbers typed alike (an integer that fits 64 bits is an
// integer, unsigned when not negative; anything else a double), and an
// object's members visited in key order with the last of duplicate keys
// winning (nlohmann keeps objects in a std::map and its parser overwrites a
// repeated key). A test compares every reader on both trees.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ms::text {

class JsonRef {
 public:
  // Implicit, so a function taking a JsonRef takes either tree's value.
  JsonRef(const nlohmann::json& v) : n_(&v) {}    // NOLINT(google-explicit-constructor)
  JsonRef(const rapidjson::Value& v) : r_(&v) {}  // NOLINT(google-explicit-constructor)

  bool is_null() const { return n_ ? n_->is_null() : r_->IsNull(); }
  bool is_boolean() const { return n_ ? n_->is_boolean() : r_->IsBool(); }
  bool is_string() const { return n_ ? n_->is_string() : r_->IsString(); }
  bool is_object() const { return n_ ? n_->is_object() : r_->IsObject(); }
  bool is_array() const { return n_ ? n_->is_array() : r_->IsArray(); }
  bool is_structured() const { return is_object() || is_array(); }
  bool is_number() const { return n_ ? n_->is_number() : r_->IsNumber(); }
  bool is_number_float() const { return n_ ? n_->is_number_float() : r_->IsDouble(); }
  bool is_number_integer() const { return n_ ? n_->is_number_integer() : r_->IsNumber() && !r_->IsDouble(); }
  // A non-negative integer (nlohmann: as parsed; any integer >= 0 here).
  bool is_number_unsigned() const { return n_ ? n_->is_number_unsigned() : r_->IsUint64() && !r_->IsDouble(); }

  // Preconditions: is_string() / is_boolean() / is_number().
  std::string_view str() const {
    if (n_) return n_->get_ref<const std::string&>();
    return {r_->GetString(), r_->GetStringLength()};
  }
  // The string's bytes followed by a NUL (both trees keep one).
  const char* c_str() const { return n_ ? n_->get_ref<const std::string&>().c_str() : r_->GetString(); }
  bool boolean() const { return n_ ? n_->get<bool>() : r_->GetBool(); }
  // As nlohmann's get<int64_t>() / get<uint64_t>() / get<double>(): a
  // static_cast from whatever the number holds, except that a double
  // outside the integer type's range is clamped to it (NaN: 0) where the
  // cast would be undefined behaviour.
  int64_t int64() const;
  uint64_t uint64() const;
  double number() const;

  // An array's length, or an object's count of distinct keys.
  size_t size() const;
  // The i-th element of an array (precondition: is_array(), i < size()).
  JsonRef at(size_t i) const { return n_ ? JsonRef((*n_)[i]) : JsonRef((*r_)[static_cast<rapidjson::SizeType>(i)]); }
  // The member `key` of an object (the last of several with that key);
  // nothing when absent or when this is not an object.
  std::optional<JsonRef> find(std::string_view key) const;
  // f(std::string_view key, JsonRef value) for each member of an object, in
  // key order, once per key (the last of duplicates). Nothing for a
  // non-object.
  template <class F>
  void for_each_member(F&& f) const;
  // pred(std::string_view key, JsonRef value) for the members of an object
  // in no particular order (a repeated key once per occurrence, the last
  // one last), while it returns true: cheaper than for_each_member when the
  // order does not matter. True when pred never returned false.
  template <class P>
  bool every_member(P&& pred) const;

  // A copy as nlohmann::json.
  nlohmann::json ToJson() const;
  // As nlohmann's dump() with invalid UTF-8 replaced.
  std::string dump() const;

  const nlohmann::json* nlohmann_value() const { return n_; }

 private:
  using Member = rapidjson::GenericMember<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>;
  // The members of an object in key order, duplicates (but the last) left
  // out: `buf` when they fit, else `heap`. Returns how many.
  size_t SortedMembers(const Member** buf, size_t cap, std::unique_ptr<const Member*[]>& heap,
                       const Member**& out) const;

  const nlohmann::json* n_ = nullptr;
  const rapidjson::Value* r_ = nullptr;
};

// Names compared as std::string_view compares them, without a call to
// memcmp when the first bytes differ (most names differ there).
inline bool NameLess(std::string_view a, std::string_view b) {
  if (!a.empty() && !b.empty() && a[0] != b[0])
    return static_cast<unsigned char>(a[0]) < static_cast<unsigned char>(b[0]);
  return a < b;
}
inline bool NameEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && a == b));
}

// Deep equality as nlohmann's operator== sees it (objects as maps, an
// integer equal to a double of the same value).
bool JsonEqual(JsonRef a, JsonRef b);

template <class F>
void JsonRef::for_each_member(F&& f) const {
  if (n_) {
    if (!n_->is_object()) return;
    for (auto it = n_->begin(); it != n_->end(); ++it) f(std::string_view(it.key()), JsonRef(it.value()));
    return;
  }
  if (!r_->IsObject()) return;
  constexpr size_t kCap = 32;
  const Member* buf[kCap];
  std::unique_ptr<const Member*[]> heap;
  const Member** members = nullptr;
  const size_t n = SortedMembers(buf, kCap, heap, members);
  for (size_t i = 0; i < n; ++i)
    f(std::string_view(members[i]->name.GetString(), members[i]->name.GetStringLength()), JsonRef(members[i]->value));
}

template <class P>
bool JsonRef::every_member(P&& pred) const {
  if (n_) {
    if (!n_->is_object()) return true;
    for (auto it = n_->begin(); it != n_->end(); ++it)
      if (!pred(std::string_view(it.key()), JsonRef(it.value()))) return false;
    return true;
  }
  if (!r_->IsObject()) return true;
  for (auto it = r_->MemberBegin(); it != r_->MemberEnd(); ++it)
    if (!pred(std::string_view(it->name.GetString(), it->name.GetStringLength()), JsonRef(it->value))) return false;
  return true;
}

}  // namespace ms::text
