// The value types and field rules the generated spec (spec.gen.h) is made of.
// A rule is a constexpr description of one field's constraints, generated
// from the definition (shared/api/schema/modelservice.schema.json) and read
// by FieldReader (field_reader.h), which words each violation as the API
// server does; code that needs a limit or a default reads it from the rule
// (e.g. ModelServiceSpec::kReplicas.max).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace ms::api {

// An int-or-string field that takes an integer >= 0 or "N%" with N in 0..100.
struct IntOrPercent {
  int64_t value = 0;
  bool percent = false;

  constexpr bool IsZero() const { return value == 0; }
  bool operator==(const IntOrPercent&) const = default;
};

// A Kubernetes quantity ("500m", "2", "8Gi", "1e3"), kept as written: a
// string, or a JSON integer (which the API server also accepts).
struct Quantity {
  std::string text;
  bool integer = false;  // written as a JSON integer

  bool operator==(const Quantity&) const = default;
};

// A container port by number (1 to 65535) or by name (an IANA service name):
// an int-or-string, as a probe's httpGet.port.
struct PortNumberOrName {
  int64_t number = 0;  // when !is_name
  std::string name;    // when is_name
  bool is_name = false;

  bool operator==(const PortNumberOrName&) const = default;
};

// The fields a JSON object read into a struct had (bit i: its i-th field),
// whatever their values: the defaults patch adds none of them. Not part of
// the struct's value: any two compare equal.
struct FieldSet {
  uint64_t bits = 0;

  constexpr bool Has(size_t i) const { return (bits >> i & 1) != 0; }
  constexpr bool operator==(const FieldSet&) const { return true; }
};

// An integer in [min, max].
struct IntRule {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  std::optional<int64_t> default_value = std::nullopt;

  constexpr bool Contains(int64_t v) const { return v >= min && v <= max; }
};

// The named checks a string rule may add (each implements a pattern of the
// schema; the generator checks which).
enum class StringFormat : uint8_t { kAny, kNoWhitespaceOrControl };

// A string of min_length..max_length bytes, in `format`.
struct StringRule {
  size_t min_length = 0;
  size_t max_length = std::numeric_limits<size_t>::max();
  StringFormat format = StringFormat::kAny;
  const char* default_value = nullptr;
};

struct BoolRule {
  std::optional<bool> default_value = std::nullopt;
};

// One of `values` (E's enumerators in the same order).
template <class E, size_t N>
struct EnumRule {
  std::array<const char*, N> values;
  std::optional<E> default_value = std::nullopt;
};

struct IntOrPercentRule {
  std::optional<IntOrPercent> default_value = std::nullopt;
};

struct QuantityRule {};

struct PortRule {};

// An object kept as JSON (x-kubernetes-preserve-unknown-fields).
struct OpaqueRule {};

// An array of at most max_items items (maxItems).
struct ArrayRule {
  size_t max_items = std::numeric_limits<size_t>::max();
};

// A map of at most max_properties entries (maxProperties).
struct MapRule {
  size_t max_properties = std::numeric_limits<size_t>::max();
};

}  // namespace ms::api
