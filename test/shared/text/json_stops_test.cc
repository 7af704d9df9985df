// The sixteen-byte stop test against the byte-by-byte one: every byte value
// at every position, with and without the bytes above 0x7F, and the lowest
// stop of a block with several.
#include "shared/text/json_stops.h"

#include <gtest/gtest.h>

#include <array>

namespace ms::text {
namespace {

TEST(JsonStops, IsJsonStopIsWhatJsonEscapesAndUtf8) {
  EXPECT_TRUE(IsJsonStop('"', false));
  EXPECT_TRUE(IsJsonStop('\\', false));
  EXPECT_TRUE(IsJsonStop(0x00, false));
  EXPECT_TRUE(IsJsonStop(0x1F, false));
  EXPECT_FALSE(IsJsonStop(0x20, false));
  EXPECT_FALSE(IsJsonStop('/', false));
  EXPECT_FALSE(IsJsonStop(0x7F, false));
  EXPECT_FALSE(IsJsonStop(0x80, false));
  EXPECT_TRUE(IsJsonStop(0x80, true));
  EXPECT_TRUE(IsJsonStop(0xFF, true));
  EXPECT_FALSE(IsJsonStop(0x7F, true));
}

TEST(JsonStops, SixteenBytesAtOnceMatchOneByOne) {
  for (int c = 0; c < 256; ++c) {
    for (int pos = 0; pos < 16; ++pos) {
      std::array<char, 16> block;
      block.fill('a');
      block[pos] = static_cast<char>(c);
      for (bool high : {false, true}) {
        const unsigned want = IsJsonStop(static_cast<unsigned char>(c), high) ? 1u << pos : 0u;
        EXPECT_EQ(JsonStops16(block.data(), high), want) << "byte " << c << " at " << pos << " high " << high;
      }
    }
  }
  const char several[] = "ab\"cd\\e\x01\x80xyzwvut";
  EXPECT_EQ(__builtin_ctz(JsonStops16(several, false)), 2);
  EXPECT_EQ(JsonStops16(several, false), (1u << 2) | (1u << 5) | (1u << 7));
  EXPECT_EQ(JsonStops16(several, true), (1u << 2) | (1u << 5) | (1u << 7) | (1u << 8));
}

}  // namespace
}  // namespace ms::text
