#include "shared/text/base64.h"

#include <gtest/gtest.h>

namespace ms::text {
namespace {

TEST(Base64, RoundTripsAllLengths) {
  std::string data;
  for (int i = 0; i < 300; ++i) {
    auto out = Base64Decode(Base64Encode(data));
    ASSERT_TRUE(out.has_value());
    ASSERT_EQ(*out, data);
    data += static_cast<char>(i * 7);
  }
  EXPECT_EQ(Base64Encode("Man"), "TWFu");
  EXPECT_EQ(Base64Encode("Ma"), "TWE=");
  EXPECT_EQ(Base64Encode("M"), "TQ==");
  EXPECT_EQ(Base64Encode(""), "");
}

TEST(Base64, DecodesLikeKubeconfigDataAndRejectsGarbage) {
  EXPECT_EQ(Base64Decode("aGVsbG8gd29ybGQ="), "hello world");
  EXPECT_EQ(Base64Decode("aGVs\nbG8g d29y\r\nbGQ"), "hello world");
  EXPECT_EQ(Base64Decode("YQ=="), "a");
  EXPECT_FALSE(Base64Decode("T!==").has_value());
  EXPECT_FALSE(Base64Decode("YQ==YQ").has_value());
  EXPECT_FALSE(Base64Decode("Y").has_value());
}

}  // namespace
}  // namespace ms::text
