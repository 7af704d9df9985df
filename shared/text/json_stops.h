// Where a JSON string's run of plain bytes stops, sixteen bytes at a time:
// the one SSE2 test behind the review's scanner (webhook/admission/
// json_scanner.cc) and the escaping of the answers (shared/text/json_text.cc).
//
//   if (unsigned mask = JsonStops16(p, /*high=*/true)) p += __builtin_ctz(mask);
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ms::text {

// '"', '\\' or a byte below 0x20: what a JSON string must escape. With
// `high`, also a byte above 0x7F (where UTF-8 has to be checked).
inline bool IsJsonStop(unsigned char c, bool high) { return c == '"' || c == '\\' || c < 0x20 || (high && c >= 0x80); }

// Bit i set when byte i of the sixteen at `p` is a stop (IsJsonStop); 0
// when none is. Reads all sixteen bytes: the caller makes sure they are
// there. One SSE2 comparison where the target has it.
inline unsigned JsonStops16(const char* p, bool high) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i stops =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                   _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v));  // v <= 0x1F
  int mask = _mm_movemask_epi8(stops);
  if (high) mask |= _mm_movemask_epi8(v);  // the top bit of each byte: above 0x7F
  return static_cast<unsigned>(mask);
#else
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i)
    if (IsJsonStop(static_cast<unsigned char>(p[i]), high)) mask |= 1u << i;
  return mask;
#endif
}

}  // namespace ms::text
