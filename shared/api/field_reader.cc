#include "shared/api/field_reader.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>

#include "shared/api/k8s_names.h"

namespace ms::api {

using nlohmann::json;

namespace {

const char* TypeName(text::JsonRef v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_null()) return "null";
  if (v.is_number_float()) return "number";
  return "integer";
}

// The value clamped into int64 (uint64 beyond INT64_MAX saturates). Integers
// only: JSON numbers written with a fraction or exponent (2.5, 1e2) and
// integers beyond 64 bits (parsed as floats) are not integers here.
int64_t AsInt64(text::JsonRef v) {
  if (v.is_number_unsigned()) {
    auto u = v.uint64();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(u);
  }
  return v.int64();
}

// Whether an integer is within int64 (the schema's checks, as valijson
// makes them, read one beyond INT64_MAX as negative: such a value is out of
// every range, as the schema sees it too).
bool FitsInt64(text::JsonRef v) {
  return !v.is_number_unsigned() || v.uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

bool HasWhitespaceOrControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c <= 0x20 || c == 0x7F;  // control characters and space (\t\n\v\f\r are controls)
  });
}

// Whether `s` passes `format`; the detail of an Invalid value of a string rule.
bool FormatOk(StringFormat format, std::string_view s) {
  switch (format) {
    case StringFormat::kAny:
      return true;
    case StringFormat::kNoWhitespaceOrControl:
      return !HasWhitespaceOrControl(s);
  }
  return false;
}
std::string FormatDetail(const StringRule& rule) {
  switch (rule.format) {
    case StringFormat::kNoWhitespaceOrControl:
      return "must be a non-empty string with no whitespace or control characters";
    case StringFormat::kAny:
      break;
  }
  return rule.min_length <= 1 ? "must not be empty"
                              : "must be at least " + std::to_string(rule.min_length) + " bytes long";
}

// "N%" with N in 0..100, no sign, no leading zeros except "0%".
std::optional<IntOrPercent> ParsePercent(std::string_view s) {
  if (s.size() < 2 || s.size() > 4 || s.back() != '%') return std::nullopt;
  const std::string_view digits(s.data(), s.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  int64_t n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  if (n > 100) return std::nullopt;
  return IntOrPercent{n, true};
}

// Digits with at most one '.', at least one digit; advances `i`.
bool Decimal(std::string_view s, size_t& i) {
  size_t digits = 0, dots = 0;
  for (; i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); ++i) (s[i] == '.' ? dots : digits)++;
  return digits > 0 && dots <= 1;
}

// The grammar of a Kubernetes quantity: [+-] decimal, then a binary suffix
// (Ki..Ei), a decimal one (n u m k M G T P E) or an exponent (e3, E-2).
bool IsQuantity(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (!Decimal(s, i)) return false;
  const std::string_view suffix = s.substr(i);
  if (suffix.empty()) return true;
  if (suffix.size() == 2 && suffix[1] == 'i')
    return std::string_view("KMGTPE").find(suffix[0]) != std::string_view::npos;
  if (suffix.size() == 1) return std::string_view("numkMGTPE").find(suffix[0]) != std::string_view::npos;
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  size_t j = 1;
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  return Decimal(suffix, j) && j == suffix.size();
}

}  // namespace

std::string JoinPath(std::string_view parent, std::string_view open, std::string_view key, std::string_view close) {
  std::string out;
  out.reserve(parent.size() + open.size() + key.size() + close.size());
  out.append(parent).append(open).append(key).append(close);
  return out;
}

std::string FieldPath::str() const {
  switch (kind_) {
    case kWhole:
      break;
    case kMember:
      return JoinPath(parent_, ".", key_);
    case kIndex: {
      char digits[24];
      const auto end = std::to_chars(digits, digits + sizeof digits, index_).ptr;
      return JoinPath(parent_, "[", std::string_view(digits, static_cast<size_t>(end - digits)), "]");
    }
    case kEntry:
      return JoinPath(parent_, "[", key_, "]");
  }
  return parent_;
}

FieldError TypeError(const std::string& path, text::JsonRef v, const char* want) {
  return FieldError::Invalid(path, v, std::string("must be of type ") + want + ", not " + TypeName(v));
}

std::optional<int64_t> ReadValue(text::JsonRef v, const FieldPath& path, const IntRule& rule,
                                 std::vector<FieldError>& errors) {
  if (!v.is_number_integer()) {
    errors.push_back(TypeError(path, v, "integer"));
    return std::nullopt;
  }
  const int64_t n = AsInt64(v);
  if (FitsInt64(v) && rule.Contains(n)) return n;
  constexpr IntRule kUnbounded;
  std::string detail;
  if (rule.max == kUnbounded.max && !FitsInt64(v))
    detail = "must be less than or equal to " + std::to_string(kUnbounded.max);
  else if (rule.max == kUnbounded.max)
    detail = "must be greater than or equal to " + std::to_string(rule.min);
  else if (rule.min == kUnbounded.min)
    detail = "must be less than or equal to " + std::to_string(rule.max);
  else
    detail = "must be between " + std::to_string(rule.min) + " and " + std::to_string(rule.max);
  errors.push_back(FieldError::Invalid(path, v, detail));
  return n;
}

std::optional<std::string> ReadValue(text::JsonRef v, const FieldPath& path, const StringRule& rule,
                                     std::vector<FieldError>& errors) {
  if (!v.is_string()) {
    errors.push_back(TypeError(path, v, "string"));
    return std::nullopt;
  }
  const std::string_view s = v.str();
  if (s.size() > rule.max_length)
    errors.push_back(FieldError::TooLong(path, rule.max_length));
  else if (s.size() < rule.min_length || !FormatOk(rule.format, s))
    errors.push_back(FieldError::Invalid(path, v, FormatDetail(rule)));
  return std::string(s);
}

std::optional<bool> ReadValue(text::JsonRef v, const FieldPath& path, const BoolRule&,
                              std::vector<FieldError>& errors) {
  if (v.is_boolean()) return v.boolean();
  errors.push_back(TypeError(path, v, "boolean"));
  return std::nullopt;
}

std::optional<IntOrPercent> ReadValue(text::JsonRef v, const FieldPath& path, const IntOrPercentRule&,
                                      std::vector<FieldError>& errors) {
  std::optional<IntOrPercent> out;
  bool ok = false;
  if (v.is_string()) {
    out = ParsePercent(v.str());
    ok = out.has_value();
  } else if (v.is_number_integer()) {
    out = IntOrPercent{AsInt64(v), false};
    ok = out->value >= 0 && FitsInt64(v);
  }
  if (!ok)
    errors.push_back(FieldError::Invalid(path, v, "must be an integer >= 0 or a percentage between 0% and 100%"));
  return out;
}

std::optional<Quantity> ReadValue(text::JsonRef v, const FieldPath& path, const QuantityRule&,
                                  std::vector<FieldError>& errors) {
  if (v.is_number_integer()) return Quantity{v.dump(), true};
  if (v.is_string() && v.str().size() <= 64 && IsQuantity(v.str())) return Quantity{std::string(v.str()), false};
  errors.push_back(FieldError::Invalid(path, v, "must be a quantity such as 500m, 2 or 8Gi"));
  return std::nullopt;
}

std::optional<PortNumberOrName> ReadValue(text::JsonRef v, const FieldPath& path, const PortRule&,
                                          std::vector<FieldError>& errors) {
  if (v.is_number_integer()) {
    const int64_t n = AsInt64(v);
    if (!FitsInt64(v) || n < 1 || n > 65535)
      errors.push_back(FieldError::Invalid(path, v, "must be between 1 and 65535, inclusive"));
    return PortNumberOrName{.number = n, .name = {}, .is_name = false};
  }
  if (!v.is_string()) {
    errors.push_back(TypeError(path, v, "integer or string"));
    return std::nullopt;
  }
  for (auto& problem : PortNameProblems(v.str())) errors.push_back(FieldError::Invalid(path, v, std::move(problem)));
  return PortNumberOrName{.number = 0, .name = std::string(v.str()), .is_name = true};
}

std::optional<json> ReadValue(text::JsonRef v, const FieldPath& path, const OpaqueRule&,
                              std::vector<FieldError>& errors) {
  if (v.is_object()) return v.ToJson();
  errors.push_back(TypeError(path, v, "object"));
  return std::nullopt;
}

std::optional<size_t> ReadEnumIndex(text::JsonRef v, const FieldPath& path, const char* const* values, size_t count,
                                    std::vector<FieldError>& errors) {
  if (!v.is_string()) {
    errors.push_back(TypeError(path, v, "string"));
    return std::nullopt;
  }
  for (size_t i = 0; i < count; ++i) {
    if (v.str() == values[i]) return i;
  }
  errors.push_back(FieldError::Unsupported(path, v, std::vector<std::string>(values, values + count)));
  return std::nullopt;
}

void FieldReader::Index(std::initializer_list<std::string_view> fields) {
  if (fields.size() > kMaxFields) throw std::logic_error("FieldReader::Index: more fields than kMaxFields");
  bool unknown = false;
  obj_.every_member([&](std::string_view key, text::JsonRef value) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (text::NameEqual(fields.begin()[i], key)) {
        slots_[i] = value;  // of repeated keys the last, as nlohmann's parser keeps it
        return true;
      }
    }
    unknown = true;
    return true;
  });
  if (!unknown) return;
  obj_.for_each_member([&](std::string_view key, text::JsonRef) {
    if (std::none_of(fields.begin(), fields.end(), [&](std::string_view f) { return text::NameEqual(f, key); }))
      report_.warnings.push_back("unknown field \"" + JoinPath(path_, ".", key, "\""));
  });
}

void FieldReader::Require(Field field) const {
  if (!Find(field)) report_.errors.push_back(FieldError::Required(Path(field.name)));
}

std::optional<text::JsonRef> FieldReader::Object(Field key) const {
  auto v = Find(key);
  if (v && !v->is_object()) {
    report_.errors.push_back(TypeError(Path(key.name), *v, "object"));
    return std::nullopt;
  }
  return v;
}

std::optional<text::JsonRef> FieldReader::Array(Field key, const ArrayRule& rule) const {
  auto v = Find(key);
  if (v && !v->is_array()) {
    report_.errors.push_back(TypeError(Path(key.name), *v, "array"));
    return std::nullopt;
  }
  if (v && v->size() > rule.max_items) {
    report_.errors.push_back(FieldError::TooMany(Path(key.name), v->size(), rule.max_items));
    return std::nullopt;
  }
  return v;
}

std::optional<text::JsonRef> FieldReader::Map(Field key, const MapRule& rule) const {
  auto v = Object(key);
  if (v && v->size() > rule.max_properties) {
    report_.errors.push_back(FieldError::TooMany(Path(key.name), v->size(), rule.max_properties));
    return std::nullopt;
  }
  return v;
}

}  // namespace ms::api
