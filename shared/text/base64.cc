#include "shared/text/base64.h"

#include <cstdint>
#include <cstring>

namespace ms::text {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of every 12 bits: three bytes are written with two
// lookups instead of four (a mutating review's patch is a few hundred bytes;
// callgrind: about 10 instructions a byte with one character per lookup).
struct Pairs {
  char c[4096][2];
};
constexpr Pairs MakePairs() {
  Pairs p{};
  for (int i = 0; i < 4096; ++i) {
    p.c[i][0] = kAlphabet[i >> 6];
    p.c[i][1] = kAlphabet[i & 63];
  }
  return p;
}
constexpr Pairs kPairs = MakePairs();
int Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::optional<std::string> Base64Decode(std::string_view in) {
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t symbols = 0;
  bool padding = false;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding) return std::nullopt;  // data after padding
    const int v = Value(c);
    if (v < 0) return std::nullopt;
    ++symbols;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (symbols % 4 == 1) return std::nullopt;  // a lone 6-bit symbol cannot encode a byte
  return out;
}

std::string Base64Encode(std::string_view data) {
  // Written through a pointer into a string sized once (appending a
  // character at a time cost as much as the rest of a mutating review).
  std::string out((data.size() + 2) / 3 * 4, '=');
  char* o = out.data();
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3, o += 4) {
    const uint32_t n = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    std::memcpy(o, kPairs.c[n >> 12], 2);
    std::memcpy(o + 2, kPairs.c[n & 0xFFF], 2);
  }
  if (i < data.size()) {  // one or two bytes left: the rest stays '='
    const uint32_t n = (uint32_t{p[i]} << 16) | (i + 1 < data.size() ? uint32_t{p[i + 1]} << 8 : 0);
    *o++ = kAlphabet[(n >> 18) & 63];
    *o++ = kAlphabet[(n >> 12) & 63];
    if (i + 1 < data.size()) *o++ = kAlphabet[(n >> 6) & 63];
  }
  return out;
}

}  // namespace ms::text
