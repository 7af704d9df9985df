#include "shared/api/quantity.h"

#include <gtest/gtest.h>

namespace ms::api {
namespace {

std::string Canonical(const std::string& text) {
  auto v = QuantityValue::Parse(Quantity{text, false});
  return v ? v->Canonical() : "(not a quantity)";
}

int Compare(const std::string& a, const std::string& b) {
  return QuantityValue::Parse(Quantity{a, false})->Compare(*QuantityValue::Parse(Quantity{b, false}));
}

// Each row is what resource.MustParse(text).String() gives in
// k8s.io/apimachinery v0.34.4 (run with Go on the module it was built from).
TEST(QuantityTest, CanonicalFormAsTheApiServerWritesIt) {
  const std::pair<const char*, const char*> rows[] = {
      {"1500m", "1500m"},
      {"2000m", "2"},
      {"0.5", "500m"},
      {"1.5Gi", "1536Mi"},
      {"8Gi", "8Gi"},
      {"512Ki", "512Ki"},
      {"0.5Ki", "512"},
      {"1e3", "1e3"},
      {"1.5e3", "1500"},
      {"1E6", "1E6"},
      {"100m", "100m"},
      {"0.1", "100m"},
      {"1n", "1n"},
      {"0.1n", "1n"},
      {"1.0000000001", "1000000001n"},
      {"-1", "-1"},
      {"-100m", "-100m"},
      {"1024", "1024"},
      {"1Ki", "1Ki"},
      {"1025Ki", "1025Ki"},
      {"12e2", "1200"},
      {"1k", "1k"},
      {"1000", "1k"},
      {"1M", "1M"},
      {"0", "0"},
      {"0Gi", "0"},
      {"1.5", "1500m"},
      {"2.5Ki", "2560"},
      {"1536Mi", "1536Mi"},
      {"3Gi", "3Gi"},
      {"1000000Ki", "1000000Ki"},
      {"1e-3", "1e-3"},
      {"123456789", "123456789"},
      {".5", "500m"},
      {"5.", "5."},
      {"+3", "+3"},
      {"1Ei", "1Ei"},
      {"8E", "8E"},
      {"0.001Ki", "1024m"},
      {"007", "007"},
      {"2048Ki", "2Mi"},
      {"1.5k", "1500"},
      {"0.9999999", "999999900n"},
      {"00.5", "500m"},
      {"0010", "0010"},
      {"010k", "010k"},
  };
  for (const auto& [text, want] : rows) EXPECT_EQ(Canonical(text), want) << text;
}

TEST(QuantityTest, ComparesValuesNotText) {
  EXPECT_EQ(Compare("1", "1000m"), 0);
  EXPECT_EQ(Compare("0.5", "500m"), 0);
  EXPECT_EQ(Compare("1Gi", "1073741824"), 0);
  EXPECT_EQ(Compare("1G", "1Gi"), -1);
  EXPECT_EQ(Compare("2", "1500m"), 1);
  EXPECT_EQ(Compare("1e3", "1k"), 0);
  EXPECT_EQ(Compare("-1", "0"), -1);
  EXPECT_EQ(Compare("0.1n", "1n"), 0);  // rounded up to a nano
  // Beyond the range they saturate rather than wrap.
  EXPECT_EQ(Compare("99999999999999999999999999999999E", "1"), 1);
  EXPECT_EQ(Compare("1e999", "1Ei"), 1);
  EXPECT_EQ(Canonical("1e999"), "1e999");
}

TEST(QuantityTest, WholeMillisAsMilliValue) {
  auto whole = [](const char* t) { return QuantityValue::Parse(Quantity{t, false})->WholeMillis(); };
  EXPECT_TRUE(whole("8Gi"));
  EXPECT_TRUE(whole("1"));
  EXPECT_FALSE(whole("1500m"));
  EXPECT_FALSE(whole("1.0000000001"));  // MilliValue rounds up to 1001
  EXPECT_TRUE(whole("0.9999999"));      // ... and this one up to 1000
}

TEST(QuantityTest, NotAQuantity) {
  for (const char* t : {"", "abc", "1x", "1Kib", "--1", "1e", "1e+", ".", "1.2.3", "e3"})
    EXPECT_FALSE(QuantityValue::Parse(Quantity{t, false})) << t;
  EXPECT_EQ(Canonical("12"), "12");
  auto integer = QuantityValue::Parse(Quantity{"64", true});
  ASSERT_TRUE(integer);
  EXPECT_EQ(integer->Canonical(), "64");
}

}  // namespace
}  // namespace ms::api
