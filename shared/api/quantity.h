// The value of a Kubernetes quantity (field_rules.h's Quantity keeps the
// text) as the API server reads it (k8s.io/apimachinery/pkg/api/resource):
// exact to the nano, rounded up beyond that, comparable, and written back in
// the API server's canonical form ("1500m", "2", "1536Mi", "1e3"), the form
// its error messages show.
#pragma once

#include <optional>
#include <string>

#include "shared/api/field_rules.h"

namespace ms::api {

class QuantityValue {
 public:
  // The suffix family the text was written in, which the canonical form keeps.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  // nullopt when `q` is not a quantity.
  static std::optional<QuantityValue> Parse(const Quantity& q);

  bool negative() const { return nanos_ < 0; }
  // Compares the values (-1, 0, 1); values beyond about 10^20 compare as equal to each other.
  int Compare(const QuantityValue& other) const;
  // Whether the value is a whole number (MilliValue() % 1000 == 0, as the API
  // server checks memory and ephemeral-storage).
  bool WholeMillis() const;
  // The canonical form (Quantity.String()).
  std::string Canonical() const;

 private:
  __extension__ using Int128 = __int128;
  QuantityValue(Int128 nanos, Format format, std::string text)
      : nanos_(nanos), format_(format), text_(std::move(text)) {}

  Int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
  std::string text_;  // as written: the canonical form when the value is out of range
};

}  // namespace ms::api
