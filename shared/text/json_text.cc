#include "shared/text/json_text.h"

#include <nlohmann/json.hpp>

#include <cstring>

#include "shared/text/json_stops.h"
#include "shared/text/utf8.h"

namespace ms::text {

namespace {

// The index of the first byte from `i` on that JSON must escape ('"', '\\'
// or below 0x20) or that is above 0x7F (to be checked as UTF-8), or
// s.size(). Sixteen bytes at a time where SSE2 is there: the denial
// messages run to a kilobyte.
size_t NextStop(std::string_view s, size_t i) {
  for (; i + 16 <= s.size(); i += 16)
    if (const unsigned mask = JsonStops16(s.data() + i, /*high=*/true)) return i + __builtin_ctz(mask);
  if (i == s.size()) return i;
  // The last 1-15 bytes in one test too, not byte by byte (most strings of
  // an answer are short): the sixteen bytes ending at the end, those before
  // `i` masked out, or the tail copied into a block of plain bytes.
  unsigned mask;
  if (s.size() >= 16) {
    mask = JsonStops16(s.data() + s.size() - 16, /*high=*/true) >> (i + 16 - s.size());
  } else {
    char block[16];
    std::memset(block, 'a', sizeof block);
    std::memcpy(block, s.data() + i, s.size() - i);
    mask = JsonStops16(block, /*high=*/true);
  }
  return mask ? i + __builtin_ctz(mask) : s.size();
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out.size();
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = NextStop(s, 0); i < s.size(); i = NextStop(s, i)) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {  // UTF-8 is checked where it appears, in the same pass
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {  // nlohmann's replacement of what is not UTF-8, as it does it
        out.resize(start);
        out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
      i += n;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = ++i;
    out += '\\';
    switch (c) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '\b':
        out += 'b';
        break;
      case '\f':
        out += 'f';
        break;
      case '\n':
        out += 'n';
        break;
      case '\r':
        out += 'r';
        break;
      case '\t':
        out += 't';
        break;
      default:
        out += "u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace ms::text
