#include "shared/api/quantity.h"

#include <string_view>

namespace ms::api {

namespace {

__extension__ using Int128 = __int128;

// |nanos| beyond which a value is kept as "out of range" (10^21 units: more
// than any cpu, memory or storage amount; the API server caps at 2^63-1).
constexpr Int128 kLimit = static_cast<Int128>(1000000000000000LL) * 1000000000000000LL;

// A quantity's text taken apart as resource.ParseQuantity does.
struct Parsed {
  bool negative = false;
  std::string_view num, denom;  // the digits before and after the dot
  QuantityValue::Format format = QuantityValue::Format::kDecimalSI;
  int exponent = 0;  // of 10 (decimal, exponent) or of 2 (binary: 10, 20, ... 60)
};

std::string_view Digits(std::string_view s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return s.substr(start, i - start);
}

bool ParseSuffix(std::string_view suffix, Parsed& p) {
  if (suffix.empty()) return true;
  static constexpr std::string_view kBinary = "KMGTPE";
  if (suffix.size() == 2 && suffix[1] == 'i' && kBinary.find(suffix[0]) != std::string_view::npos) {
    p.exponent = (static_cast<int>(kBinary.find(suffix[0])) + 1) * 10;
    p.format = QuantityValue::Format::kBinarySI;
    return true;
  }
  static constexpr std::string_view kDecimal = "num kMGTPE";  // 10^-9 .. 10^18 in steps of 3
  if (suffix.size() == 1 && suffix[0] != ' ' && kDecimal.find(suffix[0]) != std::string_view::npos) {
    p.exponent = (static_cast<int>(kDecimal.find(suffix[0])) - 3) * 3;
    return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  size_t i = 1;
  const bool minus = i < suffix.size() && suffix[i] == '-';
  if (i < suffix.size() && (suffix[i] == '+' || suffix[i] == '-')) ++i;
  const std::string_view digits = Digits(suffix, i);
  if (digits.empty() || i != suffix.size()) return false;
  int e = 0;
  for (char c : digits) e = e < 100000 ? e * 10 + (c - '0') : e;
  p.exponent = minus ? -e : e;
  p.format = QuantityValue::Format::kDecimalExponent;
  return true;
}

// The magnitude in nanos, rounded up to a whole nano, saturated at kLimit
// (`saturated` set).
Int128 ToNanos(const Parsed& p, bool& saturated) {
  saturated = false;
  Int128 v = 0;
  int shift = 9 - static_cast<int>(p.denom.size()) + (p.format == QuantityValue::Format::kBinarySI ? 0 : p.exponent);
  for (std::string_view part : {p.num, p.denom}) {
    for (char c : part) {
      if (v < kLimit) {
        v = v * 10 + (c - '0');
      } else {
        ++shift;  // a digit beyond the limit: keeps the magnitude
      }
    }
  }
  for (int k = 0; p.format == QuantityValue::Format::kBinarySI && k < p.exponent / 10 && v != 0; ++k) {
    if (v > kLimit / 1024) return saturated = true, kLimit;
    v *= 1024;
  }
  for (; shift > 0 && v != 0; --shift) {
    if (v > kLimit / 10) return saturated = true, kLimit;
    v *= 10;
  }
  bool remainder = false;
  for (; shift < 0 && v != 0; ++shift) {
    remainder = remainder || v % 10 != 0;
    v /= 10;
  }
  return remainder ? v + 1 : v;  // rounded up to the next nano
}

// Whether resource.ParseQuantity keeps the text as the quantity's String():
// its fast path (at most 18 digits, a value within int64, no finer than a
// nano) for text already in the canonical form's shape.
bool KeepsText(const Parsed& p) {
  const int digits = static_cast<int>(p.num.size() + p.denom.size());
  std::string shifted = std::string(p.num) + std::string(p.denom);
  if (p.format == QuantityValue::Format::kBinarySI) {
    const int precision = 15 - static_cast<int>(p.num.size()) - p.exponent * 3 / 10 - 1;
    if (!p.denom.empty() || precision < 0 || shifted.size() > 18) return false;
    const long long value = std::stoll(shifted);
    return value != 0 && value <= (0x7FFFFFFFFFFFFFFFLL >> p.exponent) && (value & 0x07) != 0;
  }
  const int scale = p.exponent - static_cast<int>(p.denom.size());
  if (18 - digits < 0 || scale < -9 || scale % 3 != 0) return false;
  return shifted[0] != '0' && !(shifted.size() >= 3 && shifted.compare(shifted.size() - 3, 3, "000") == 0);
}

std::string ToString(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  if (negative) v = -v;
  std::string out;
  for (; v > 0; v /= 10) out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return negative ? "-" + out : out;
}

// The suffix of a power of ten in the decimal SI family ("" for 10^0).
std::string DecimalSuffix(int exponent) {
  static constexpr std::string_view kDecimal = "num kMGTPE";
  if (exponent % 3 == 0 && exponent >= -9 && exponent <= 18) {
    const char c = kDecimal[static_cast<size_t>(exponent / 3 + 3)];
    return c == ' ' ? "" : std::string(1, c);
  }
  return "e" + std::to_string(exponent);
}

}  // namespace

std::optional<QuantityValue> QuantityValue::Parse(const Quantity& q) {
  const std::string_view s = q.text;
  Parsed p;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) p.negative = s[i++] == '-';
  p.num = Digits(s, i);
  if (i < s.size() && s[i] == '.') p.denom = Digits(s, ++i);
  if ((p.num.empty() && p.denom.empty()) || !ParseSuffix(s.substr(i), p)) return std::nullopt;
  // Leading zeros do not count (nor show in the canonical form); no digits is "0".
  while (!p.num.empty() && p.num[0] == '0') p.num.remove_prefix(1);
  if (p.num.empty()) p.num = "0";
  bool saturated = false;
  Int128 nanos = ToNanos(p, saturated);
  if (p.negative) nanos = -nanos;
  const bool keep = saturated || (nanos != 0 && KeepsText(p));
  return QuantityValue(nanos, p.format, keep ? q.text : std::string());
}

int QuantityValue::Compare(const QuantityValue& other) const {
  return nanos_ < other.nanos_ ? -1 : nanos_ > other.nanos_ ? 1 : 0;
}

bool QuantityValue::WholeMillis() const {
  constexpr Int128 kMilli = 1000000;
  const Int128 abs = nanos_ < 0 ? -nanos_ : nanos_;
  const Int128 millis = abs / kMilli + (abs % kMilli != 0 ? 1 : 0);  // MilliValue() rounds up
  return millis % 1000 == 0;
}

std::string QuantityValue::Canonical() const {
  if (!text_.empty()) return text_;
  if (nanos_ == 0) return "0";
  constexpr Int128 kUnit = 1000000000;
  const Int128 abs = nanos_ < 0 ? -nanos_ : nanos_;
  if (format_ == Format::kBinarySI && abs >= 1024 * kUnit && abs % kUnit == 0) {
    Int128 v = nanos_ / kUnit;
    int k = 0;
    while ((v >= 1024 || v <= -1024) && v % 1024 == 0 && k < 6) v /= 1024, ++k;
    static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    return ToString(v) + kBinary[k];
  }
  // A mantissa and a power of ten that is a multiple of 3, as large as it can be.
  Int128 m = nanos_;
  int exponent = -9;
  while (m % 10 == 0) m /= 10, ++exponent;
  while (exponent % 3 != 0) m *= 10, --exponent;
  if (format_ == Format::kDecimalExponent) return ToString(m) + (exponent == 0 ? "" : "e" + std::to_string(exponent));
  return ToString(m) + DecimalSuffix(exponent);
}

}  // namespace ms::api
