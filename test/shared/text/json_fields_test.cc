#include "shared/text/json_fields.h"

#include <gtest/gtest.h>

namespace ms::text {
namespace {

using nlohmann::json;

TEST(JsonFields, StringFieldIsTheStringElseTheDefault) {
  const json obj = {{"s", "x"}, {"n", 1}, {"empty", ""}};
  EXPECT_EQ(StringField(obj, "s"), "x");
  EXPECT_EQ(StringField(obj, "n"), "") << "a number is not a string";
  EXPECT_EQ(StringField(obj, "n", "d"), "d");
  EXPECT_EQ(StringField(obj, "missing", "d"), "d");
  EXPECT_EQ(StringField(obj, "empty", "d"), "") << "present and a string, even empty";
  EXPECT_EQ(StringField(json::array({1}), "s", "d"), "d");
  EXPECT_EQ(StringField(json("text"), "s"), "");
  EXPECT_EQ(StringField(json(), "s"), "");
}

TEST(JsonFields, MetadataString) {
  const json obj = {{"metadata", {{"name", "a"}, {"generation", 2}}}};
  EXPECT_EQ(MetadataString(obj, "name"), "a");
  EXPECT_EQ(MetadataString(obj, "generation"), "");
  EXPECT_EQ(MetadataString(obj, "namespace"), "");
  EXPECT_EQ(MetadataString(json{{"metadata", "oops"}}, "name"), "");
  EXPECT_EQ(MetadataString(json::array(), "name"), "");
}

}  // namespace
}  // namespace ms::text
