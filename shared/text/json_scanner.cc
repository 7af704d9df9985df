#include "shared/text/json_scanner.h"

#include <cstring>

#include "shared/text/json_number.h"
#include "shared/text/json_stops.h"
#include "shared/text/utf8.h"

namespace ms::text {

namespace {

// The first byte from `p` on that is '"', '\\', below 0x20 or above 0x7F
// (the padding's NUL ends every search inside the buffer).
char* FindSpecial(char* p) {
  // Unaligned: at most 15 bytes past the NUL at the text's end, which the
  // padding holds.
  for (;; p += 16)
    if (const unsigned mask = JsonStops16(p, /*high=*/true)) return p + __builtin_ctz(mask);
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of the four hex digits at `p`, or -1.
long HexValue(const char* p) {
  long v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = Hex(p[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// The code point of the four hex digits at `p`, or -1. A UTF-16 surrogate
// counts as -1 too: SurrogatePair reads it.
long HexQuad(const char* p) {
  const long cp = HexValue(p);
  return cp >= 0xD800 && cp <= 0xDFFF ? -1 : cp;
}

// The escape at `r` whose four hex digits HexQuad refused: when it is a
// UTF-16 surrogate pair (`\uD83D\uDE00`), its code point and the 12 bytes
// it takes; else nothing (not hex, or a lone or misordered surrogate, which
// nlohmann's parser refuses too). Reads past the end only into the
// padding. Out of line and cold: rare in a review, and inlined it costs
// String()'s common path instructions (callgrind).
struct Pair {
  long cp = -1;
  const char* end = nullptr;
};
[[gnu::cold, gnu::noinline]] Pair SurrogatePair(const char* r) {
  const long hi = HexValue(r + 2);
  if (hi < 0xD800 || hi > 0xDBFF || r[6] != '\\' || r[7] != 'u') return {};
  const long lo = HexValue(r + 8);
  if (lo < 0xDC00 || lo > 0xDFFF) return {};
  return {0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), r + 12};
}

// Writes `cp` (0x10000 and above) as the four bytes of UTF-8 at `w`.
[[gnu::cold]] char* PutUtf8Astral(char* w, long cp) {
  *w++ = static_cast<char>(0xF0 | (cp >> 18));
  *w++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  return w;
}

// The byte an escape's second character stands for ('u' aside), or 0.
char Unescaped(char c) {
  switch (c) {
    case '"':
    case '\\':
    case '/':
      return c;
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return 0;
  }
}

// Writes `cp` (below 0x10000, not a surrogate) as UTF-8 at `w`.
char* PutUtf8(char* w, long cp) {
  if (cp < 0x80) {
    *w++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *w++ = static_cast<char>(0xC0 | (cp >> 6));
    *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *w++ = static_cast<char>(0xE0 | (cp >> 12));
    *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *w++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return w;
}

// The length of the UTF-8 sequence at `p` (a byte above 0x7F, before
// `end`), or 0 when it is not RFC 3629 UTF-8, as nlohmann's parser requires.
size_t Utf8Length(const char* p, const char* end) {
  return Utf8SequenceLength(std::string_view(p, static_cast<size_t>(end - p)), 0);
}

bool Digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool JsonScanner::String(std::string_view& out) {
  char* const start = ++p_;  // past the opening quote
  char* r = FindSpecial(start);
  char* w = r;  // where decoded bytes go: behind r once an escape is decoded
  for (;;) {
    if (*r == '"') {
      out = {start, static_cast<size_t>(w - start)};
      *w = '\0';  // the quote or bytes already read
      p_ = r + 1;
      return true;
    }
    if (static_cast<unsigned char>(*r) >= 0x80) {
      const size_t n = Utf8Length(r, end_);
      if (n == 0) return false;
      std::memmove(w, r, n);
      w += n;
      r += n;
    } else if (*r != '\\') {
      return false;  // a control byte, or the end
    } else if (r[1] == 'u') {
      const long cp = HexQuad(r + 2);  // within the padding when the text ends early
      if (cp >= 0) {
        w = PutUtf8(w, cp);  // at most 3 bytes for the 6 read
        r += 6;
      } else {
        const Pair pair = SurrogatePair(r);
        if (!pair.end) return false;
        w = PutUtf8Astral(w, pair.cp);  // 4 bytes for the 12 read
        r += 12;
      }
    } else {
      const char c = Unescaped(r[1]);
      if (!c) return false;
      *w++ = c;
      r += 2;
    }
    char* next = FindSpecial(r);
    std::memmove(w, r, static_cast<size_t>(next - r));
    w += next - r;
    r = next;
  }
}

bool JsonScanner::SkipString() {
  char* r = FindSpecial(++p_);
  for (; *r != '"'; r = FindSpecial(r)) {
    if (static_cast<unsigned char>(*r) >= 0x80) {
      const size_t n = Utf8Length(r, end_);
      if (n == 0) return false;
      r += n;
    } else if (*r != '\\') {
      return false;  // a control byte, or the end
    } else if (r[1] == 'u') {
      if (HexQuad(r + 2) >= 0) {
        r += 6;
      } else if (SurrogatePair(r).end) {
        r += 12;
      } else {
        return false;
      }
    } else {
      if (!Unescaped(r[1])) return false;
      r += 2;
    }
  }
  p_ = r + 1;
  return true;
}

bool JsonScanner::Number(std::string_view& out) {
  const char* const start = p_;
  if (*p_ == '-') ++p_;
  if (*p_ == '0') {
    ++p_;
  } else if (*p_ >= '1' && *p_ <= '9') {
    while (Digit(*p_)) ++p_;
  } else {
    return false;
  }
  if (*p_ == '.') {
    if (!Digit(*++p_)) return false;
    while (Digit(*p_)) ++p_;
  }
  if (*p_ == 'e' || *p_ == 'E') {
    ++p_;
    if (*p_ == '+' || *p_ == '-') ++p_;
    if (!Digit(*p_)) return false;
    while (Digit(*p_)) ++p_;
  }
  out = {start, static_cast<size_t>(p_ - start)};
  return true;
}

bool JsonScanner::Literal(std::string_view word) {
  if (std::memcmp(p_, word.data(), word.size()) != 0) return false;  // the padding covers a short text
  p_ += word.size();
  return true;
}

bool JsonScanner::SkipValue(int depth_left, bool& too_deep) {
  switch (Peek()) {
    case '"':
      return SkipString();
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    case '{':
    case '[': {
      if (depth_left <= 0) {
        too_deep = true;
        return false;
      }
      const bool object = *p_++ == '{';
      const char close = object ? '}' : ']';
      if (Consume(close)) return true;
      do {
        if (object && !(Peek() == '"' && SkipString() && Consume(':'))) return false;
        if (!SkipValue(depth_left - 1, too_deep)) return false;
      } while (Consume(','));
      return Consume(close);
    }
    default: {
      // Checked as nlohmann reads it: a number beyond a double's range is
      // an error there.
      std::string_view number;
      return Number(number) && ReadJsonNumber(number).has_value();
    }
  }
}

}  // namespace ms::text
