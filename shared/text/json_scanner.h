// The tokens of a JSON text, strictly by RFC 8259 as nlohmann's parser takes
// it, read from a buffer the scanner may rewrite (strings are decoded in
// place). JsonReader (json_reader.h) drives it for its callers: it reads
// the values they ask for and skips the rest with SkipValue, which checks
// them without decoding them.
//
// Why not RapidJSON's reader, which the review parser used before: for a
// review's many short strings its SSE2 scan runs byte by byte up to the next
// 16-byte boundary, and it decodes every string, read or not. This scanner
// loads 16 unaligned bytes at a time (the buffer's padding makes that safe)
// and only checks what it skips. Measured with callgrind on the valid review
// fixture (bench/admission_profile): reading the body into the tree took
// about 33,000 instructions with RapidJSON's reader and the checks it needed
// around it, about 19,000 with this scanner (docs/contributor/benchmarks.md).
//
// The buffer: `size` bytes of text followed by at least kPadding NUL bytes.
// The scanner refuses (returns false) whatever RFC 8259 refuses; \u escapes
// of UTF-16 surrogates are taken as pairs (decoded to 4 bytes of UTF-8) and
// refused alone, as nlohmann's parser does. Strings are checked to be RFC
// 3629 UTF-8 as they are scanned (outside strings the grammar allows ASCII
// only).
#pragma once

#include <cstddef>
#include <string_view>

namespace ms::text {

class JsonScanner {
 public:
  static constexpr size_t kPadding = 16;

  JsonScanner(char* text, size_t size) : p_(text), end_(text + size) {}

  // Skips whitespace and returns the next byte ('\0' at the end).
  char Peek() {
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t') ++p_;
    return *p_;
  }
  bool AtEnd() { return Peek() == '\0' && p_ == end_; }
  // Where the scanner is.
  const char* position() const { return p_; }
  // Consumes `c` when it is the next byte after whitespace.
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++p_;
    return true;
  }

  // At a '"': the string, decoded in place and NUL-terminated.
  bool String(std::string_view& out);
  // At a '"': the string checked, not decoded (the buffer unchanged): its
  // text between the quotes, escapes as written.
  bool RawString(std::string_view& out) {
    const char* start = p_ + 1;
    if (!SkipString()) return false;
    out = std::string_view(start, static_cast<size_t>(p_ - 1 - start));
    return true;
  }
  // At a '-' or digit: the number's text (its grammar checked).
  bool Number(std::string_view& out);
  // At a 't', 'f' or 'n': the literal.
  bool Literal(std::string_view word);
  // Any value, checked and not decoded; false also when it nests more than
  // `depth_left` containers deep, which then sets `too_deep`.
  bool SkipValue(int depth_left, bool& too_deep);

 private:
  bool SkipString();
  char* p_;
  const char* end_;
};

}  // namespace ms::text
