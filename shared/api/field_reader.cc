#include "shared/api/field_reader.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>

#include "shared/api/k8s_names.h"

namespace ms::api {

using nlohmann::json;

namespace {

const char* TypeName(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_null()) return "null";
  if (v.is_number_float()) return "number";
  return "integer";
}

// The value clamped into int64 (uint64 beyond INT64_MAX saturates).
int64_t AsInt64(const text::TypedNumber& n) {
  if (n.type == text::TypedNumber::Type::kInteger) return n.i;
  return n.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(n.u);
}

// Whether an integer is within int64 (the schema's checks, as valijson
// makes them, read one beyond INT64_MAX as negative: such a value is out of
// every range, as the schema sees it too).
bool FitsInt64(const text::TypedNumber& n) {
  return n.type != text::TypedNumber::Type::kUnsigned ||
         n.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

bool IsInteger(const text::TypedNumber& n) { return n.type != text::TypedNumber::Type::kFloat; }

json ToJson(const text::TypedNumber& n) {
  switch (n.type) {
    case text::TypedNumber::Type::kUnsigned:
      return n.u;
    case text::TypedNumber::Type::kInteger:
      return n.i;
    case text::TypedNumber::Type::kFloat:
      break;
  }
  return n.d;
}

std::string IntegerText(const text::TypedNumber& n) {
  return n.type == text::TypedNumber::Type::kInteger ? std::to_string(n.i) : std::to_string(n.u);
}

// Names compared without a call to memcmp when the first bytes differ
// (most names differ there).
bool NameEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && a == b));
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

json TakeValue(text::JsonReader& in) {
  std::string_view raw;
  if (!in.Capture(raw)) return nullptr;
  // Valid JSON (the reader checked it) within the reader's depth.
  return json::parse(raw, nullptr, /*allow_exceptions=*/false);
}

FieldError TypeError(const std::string& path, const json& v, const char* want) {
  return FieldError::Invalid(path, v, std::string("must be of type ") + want + ", not " + TypeName(v));
}

std::optional<int64_t> ReadValue(text::JsonReader& in, const FieldPath& path, const IntRule& rule,
                                 std::vector<FieldError>& errors) {
  text::TypedNumber v;
  if (in.Peek() != text::JsonReader::Kind::kNumber) {
    errors.push_back(TypeError(path, in, "integer"));
    return std::nullopt;
  }
  if (!in.Number(v)) return std::nullopt;
  if (!IsInteger(v)) {
    errors.push_back(TypeError(path.str(), ToJson(v), "integer"));
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
  errors.push_back(FieldError::Invalid(path, ToJson(v), detail));
  return n;
}

std::optional<std::string> ReadValue(text::JsonReader& in, const FieldPath& path, const StringRule& rule,
                                     std::vector<FieldError>& errors) {
  std::string_view s;
  if (in.Peek() != text::JsonReader::Kind::kString) {
    errors.push_back(TypeError(path, in, "string"));
    return std::nullopt;
  }
  if (!in.String(s)) return std::nullopt;
  if (s.size() > rule.max_length)
    errors.push_back(FieldError::TooLong(path, rule.max_length));
  else if (s.size() < rule.min_length || !FormatOk(rule.format, s))
    errors.push_back(FieldError::Invalid(path, json(s), FormatDetail(rule)));
  return std::string(s);
}

std::optional<bool> ReadValue(text::JsonReader& in, const FieldPath& path, const BoolRule&,
                              std::vector<FieldError>& errors) {
  bool b = false;
  if (in.Peek() == text::JsonReader::Kind::kBool) return in.Bool(b) ? std::optional<bool>(b) : std::nullopt;
  errors.push_back(TypeError(path, in, "boolean"));
  return std::nullopt;
}

std::optional<IntOrPercent> ReadValue(text::JsonReader& in, const FieldPath& path, const IntOrPercentRule&,
                                      std::vector<FieldError>& errors) {
  std::optional<IntOrPercent> out;
  json value;
  bool ok = false;
  if (in.Peek() == text::JsonReader::Kind::kString) {
    std::string_view s;
    if (!in.String(s)) return std::nullopt;
    out = ParsePercent(s);
    ok = out.has_value();
    if (!ok) value = s;
  } else if (in.Peek() == text::JsonReader::Kind::kNumber) {
    text::TypedNumber n;
    if (!in.Number(n)) return std::nullopt;
    if (IsInteger(n)) {
      out = IntOrPercent{AsInt64(n), false};
      ok = out->value >= 0 && FitsInt64(n);
    }
    if (!ok) value = ToJson(n);
  } else {
    value = TakeValue(in);
  }
  if (!ok)
    errors.push_back(FieldError::Invalid(path, value, "must be an integer >= 0 or a percentage between 0% and 100%"));
  return out;
}

std::optional<Quantity> ReadValue(text::JsonReader& in, const FieldPath& path, const QuantityRule&,
                                  std::vector<FieldError>& errors) {
  json value;
  if (in.Peek() == text::JsonReader::Kind::kNumber) {
    text::TypedNumber n;
    if (!in.Number(n)) return std::nullopt;
    if (IsInteger(n)) return Quantity{IntegerText(n), true};
    value = ToJson(n);
  } else if (in.Peek() == text::JsonReader::Kind::kString) {
    std::string_view s;
    if (!in.String(s)) return std::nullopt;
    if (s.size() <= 64 && IsQuantity(s)) return Quantity{std::string(s), false};
    value = s;
  } else {
    value = TakeValue(in);
  }
  errors.push_back(FieldError::Invalid(path, value, "must be a quantity such as 500m, 2 or 8Gi"));
  return std::nullopt;
}

std::optional<PortNumberOrName> ReadValue(text::JsonReader& in, const FieldPath& path, const PortRule&,
                                          std::vector<FieldError>& errors) {
  if (in.Peek() == text::JsonReader::Kind::kNumber) {
    text::TypedNumber v;
    if (!in.Number(v)) return std::nullopt;
    if (!IsInteger(v)) {
      errors.push_back(TypeError(path.str(), ToJson(v), "integer or string"));
      return std::nullopt;
    }
    const int64_t n = AsInt64(v);
    if (!FitsInt64(v) || n < 1 || n > 65535)
      errors.push_back(FieldError::Invalid(path, ToJson(v), "must be between 1 and 65535, inclusive"));
    return PortNumberOrName{.number = n, .name = {}, .is_name = false};
  }
  if (in.Peek() != text::JsonReader::Kind::kString) {
    errors.push_back(TypeError(path, in, "integer or string"));
    return std::nullopt;
  }
  std::string_view s;
  if (!in.String(s)) return std::nullopt;
  for (auto& problem : PortNameProblems(s)) errors.push_back(FieldError::Invalid(path, json(s), std::move(problem)));
  return PortNumberOrName{.number = 0, .name = std::string(s), .is_name = true};
}

std::optional<json> ReadValue(text::JsonReader& in, const FieldPath& path, const OpaqueRule&,
                              std::vector<FieldError>& errors) {
  const bool object = in.Peek() == text::JsonReader::Kind::kObject;
  json v = TakeValue(in);
  if (object) return v;
  errors.push_back(TypeError(path.str(), v, "object"));
  return std::nullopt;
}

std::optional<size_t> ReadEnumIndex(text::JsonReader& in, const FieldPath& path, const char* const* values,
                                    size_t count, std::vector<FieldError>& errors) {
  if (in.Peek() != text::JsonReader::Kind::kString) {
    errors.push_back(TypeError(path, in, "string"));
    return std::nullopt;
  }
  std::string_view s;
  if (!in.String(s)) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    if (s == values[i]) return i;
  }
  errors.push_back(FieldError::Unsupported(path, json(s), std::vector<std::string>(values, values + count)));
  return std::nullopt;
}

FieldReader::FieldReader(text::JsonReader& in, std::string path, FieldReport report)
    : in_(in), path_(std::move(path)), report_(report), start_(Here()) {
  in_.BeginObject();
}

bool FieldReader::Next(std::span<const std::string_view> fields, size_t& index) {
  if (current_ < kMaxFields) slots_[current_].end = Here();
  current_ = kMaxFields;
  std::string_view key;
  while (in_.NextKey(key)) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (NameEqual(fields[i], key)) {
        present_ |= uint64_t{1} << i;
        slots_[i] = {Here(), Here()};  // of repeated keys the last, as nlohmann's parser keeps it
        current_ = index = i;
        return true;
      }
    }
    unknown_.push_back(key);
    if (!in_.Skip()) return false;
  }
  return false;
}

void FieldReader::Truncate(Mark mark) const {
  report_.errors.erase(report_.errors.begin() + static_cast<std::ptrdiff_t>(mark.errors), report_.errors.end());
  report_.warnings.erase(report_.warnings.begin() + static_cast<std::ptrdiff_t>(mark.warnings), report_.warnings.end());
}

void FieldReader::Finish(std::span<const std::string_view> fields, std::span<const size_t> required) {
  bool missing = false;
  for (size_t i : required) missing = missing || !(present_ >> i & 1);
  const Mark now = Here();
  if (!missing && (unknown_.empty() || path_.empty())) {
    if (now.errors == start_.errors && now.warnings == start_.warnings) return;  // the usual object
    // In order already when the fields came in the definition's order,
    // once each: their errors and warnings follow one another from start_.
    Mark at = start_;
    bool ordered = true;
    for (size_t i = 0; i < fields.size() && ordered; ++i) {
      if (!(present_ >> i & 1)) continue;
      const Slot& s = slots_[i];
      ordered = s.begin.errors == at.errors && s.begin.warnings == at.warnings;
      at = s.end;
    }
    if (ordered && at.errors == now.errors && at.warnings == now.warnings) return;
  }
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  errors.reserve(now.errors - start_.errors + required.size());
  if (!path_.empty()) {
    std::sort(unknown_.begin(), unknown_.end());
    unknown_.erase(std::unique(unknown_.begin(), unknown_.end()), unknown_.end());
    for (std::string_view key : unknown_) warnings.push_back("unknown field \"" + JoinPath(path_, ".", key, "\""));
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!(present_ >> i & 1)) {
      if (std::find(required.begin(), required.end(), i) != required.end())
        errors.push_back(FieldError::Required(Path(fields[i])));
      continue;
    }
    const Slot& s = slots_[i];
    for (size_t e = s.begin.errors; e < s.end.errors; ++e) errors.push_back(std::move(report_.errors[e]));
    for (size_t w = s.begin.warnings; w < s.end.warnings; ++w) warnings.push_back(std::move(report_.warnings[w]));
  }
  Truncate(start_);
  std::move(errors.begin(), errors.end(), std::back_inserter(report_.errors));
  std::move(warnings.begin(), warnings.end(), std::back_inserter(report_.warnings));
}

bool FieldReader::Object(Field key) {
  if (in_.Peek() == text::JsonReader::Kind::kObject) return true;
  report_.errors.push_back(TypeError(Path(key.name), in_, "object"));
  return false;
}

bool FieldReader::Array(Field key) {
  if (in_.Peek() == text::JsonReader::Kind::kArray) return in_.BeginArray();
  report_.errors.push_back(TypeError(Path(key.name), in_, "array"));
  return false;
}

void FieldReader::OrderEntries(Mark mark, std::vector<std::pair<std::string_view, Slot>>& entries) {
  const Mark now = Here();
  if (now.errors == mark.errors && now.warnings == mark.warnings) return;
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The last of each key.
  std::vector<const Slot*> last;
  for (size_t i = 0; i < entries.size(); ++i)
    if (i + 1 == entries.size() || entries[i + 1].first != entries[i].first) last.push_back(&entries[i].second);
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  for (const Slot* s : last) {
    for (size_t e = s->begin.errors; e < s->end.errors; ++e) errors.push_back(std::move(report_.errors[e]));
    for (size_t w = s->begin.warnings; w < s->end.warnings; ++w) warnings.push_back(std::move(report_.warnings[w]));
  }
  Truncate(mark);
  std::move(errors.begin(), errors.end(), std::back_inserter(report_.errors));
  std::move(warnings.begin(), warnings.end(), std::back_inserter(report_.warnings));
}

}  // namespace ms::api
