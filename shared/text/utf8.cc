#include "shared/text/utf8.h"

#include <cstdint>
#include <cstring>

namespace ms::text {

size_t Utf8SequenceLength(std::string_view text, size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  const size_t left = text.size() - pos;
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  // RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (left <= n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i <= n; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n + 1;
}

bool IsValidUtf8(std::string_view text) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    // ASCII fast path, eight bytes at a time.
    while (text.size() - pos >= 8) {
      std::uint64_t word;
      std::memcpy(&word, data + pos, 8);
      if (word & 0x8080808080808080ULL) break;
      pos += 8;
    }
    if (pos == text.size()) break;
    const size_t n = Utf8SequenceLength(text, pos);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = Utf8SequenceLength(text, pos);
    if (n == 0) {
      const auto c = static_cast<unsigned char>(text[pos]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++pos;
    } else {
      out.append(text, pos, n);
      pos += n;
    }
  }
  return out;
}

}  // namespace ms::text
