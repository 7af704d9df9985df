#include "api/json_patch.h"

#include <gtest/gtest.h>

namespace ms::jsonpatch {
namespace {

TEST(JsonPointer, EscapesTildeAndSlash) {
  EXPECT_EQ(EscapeToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(EscapeToken("~1"), "~01");  // '~' first, so "~1" does not turn into '/'
  EXPECT_EQ(Pointer({"spec", "nvidia.com/gpu"}), "/spec/nvidia.com~1gpu");
  EXPECT_EQ(Pointer({}), "");
}

TEST(JsonPatch, BuildsOps) {
  Patch p;
  p.Add("/spec", nlohmann::json::object());
  p.Replace("/spec/replicas", 2);
  p.Remove("/spec/x");
  EXPECT_EQ(p.Dump(), R"([{"op":"add","path":"/spec","value":{}},{"op":"replace","path":"/spec/replicas","value":2},)"
                      R"({"op":"remove","path":"/spec/x"}])");
  // The ops apply as RFC 6902 says (nlohmann implements it independently).
  nlohmann::json doc = {{"spec", {{"x", 1}}}};
  nlohmann::json applied = nlohmann::json::object().patch(nlohmann::json::array({p.ops()[0]}));
  EXPECT_EQ(applied, nlohmann::json({{"spec", nlohmann::json::object()}}));
  (void)doc;
}

}  // namespace
}  // namespace ms::jsonpatch
