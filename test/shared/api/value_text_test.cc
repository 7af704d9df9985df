// The JSON text writers of the defaults patch (value_text.h, the generated
// AppendJson, patch_text.h) against nlohmann's dump() of the same value,
// which is what the patch wrote before and what the tests pin.
#include "shared/api/value_text.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "shared/api/patch_text.h"
#include "shared/api/spec.h"
#include "test/support/modelservice_corpus.h"

namespace ms::api {
namespace {

using nlohmann::json;

template <class T>
std::string Text(const T& v) {
  std::string out = "prefix";
  AppendJsonValue(out, v);
  EXPECT_EQ(out.substr(0, 6), "prefix");
  return out.substr(6);
}

template <class T>
std::string Dump(const T& v) {
  return ToJsonValue(v).dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(ValueText, ScalarsAsNlohmannWritesThem) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{8080}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()})
    EXPECT_EQ(Text(v), Dump(v));
  EXPECT_EQ(Text(true), "true");
  EXPECT_EQ(Text(false), "false");
  for (const std::string& s :
       std::vector<std::string>{"", "plain", "quote\" back\\slash", std::string("nul\0x", 5), "\x01\x1f\x7f",
                                "tab\tnl\ncr\r\b\f", "caf\xc3\xa9", "bad\xff\xfe utf-8", "/slash"})
    EXPECT_EQ(Text(s), Dump(s)) << s;
  EXPECT_EQ(Text(StrategyType::kRollingUpdate), "\"RollingUpdate\"");
  for (const IntOrPercent& v :
       {IntOrPercent{0, false}, IntOrPercent{3, false}, IntOrPercent{25, true}, IntOrPercent{100, true}})
    EXPECT_EQ(Text(v), Dump(v));
  for (const Quantity& q : {Quantity{"500m", false}, Quantity{"8Gi", false}, Quantity{"2", true}})
    EXPECT_EQ(Text(q), Dump(q));
}

TEST(ValueText, ContainersAsNlohmannWritesThem) {
  EXPECT_EQ(Text(std::vector<std::string>{}), "[]");
  EXPECT_EQ(Text(std::vector<std::string>{"a", "b\"c"}), Dump(std::vector<std::string>{"a", "b\"c"}));
  const std::map<std::string, Quantity> map = {{"nvidia.com/gpu", {"1", true}}, {"cpu", {"500m", false}}};
  EXPECT_EQ(Text(map), Dump(map));
  EXPECT_EQ(Text(std::map<std::string, Quantity>{}), "{}");
}

// Every object a patch can add, from every defaulted spec of the corpus,
// written as nlohmann writes its ToJson() (members in key order).
TEST(ValueText, GeneratedObjectsAsNlohmannWritesThem) {
  size_t compared = 0;
  for (const json& obj : test::ModelServiceCorpus()) {
    const ModelServiceSpec d = ParseModelService(obj).spec.Defaulted();
    if (d.strategy) {
      EXPECT_EQ(Text(*d.strategy), d.strategy->ToJson().dump()) << obj.dump();
    }
    if (d.strategy && d.strategy->rolling_update) {
      EXPECT_EQ(Text(*d.strategy->rolling_update), d.strategy->rolling_update->ToJson().dump());
    }
    if (d.autoscaling) {
      EXPECT_EQ(Text(*d.autoscaling), d.autoscaling->ToJson().dump()) << obj.dump();
    }
    if (d.rollout) {
      EXPECT_EQ(Text(*d.rollout), d.rollout->ToJson().dump()) << obj.dump();
    }
    compared += d.autoscaling.has_value();
  }
  EXPECT_GT(compared, 100u);
  EXPECT_EQ(Text(Rollout{}), "{}");
}

TEST(ValueText, PatchWriterWritesNlohmannsArray) {
  AddPatchWriter empty;
  EXPECT_EQ(std::move(empty).Finish(), "");
  AddPatchWriter w;
  w.Add("spec", json::object());
  {
    const AddPatchWriter::Scope spec(w, "spec");
    w.Add("port", int64_t{8080});
    {
      const AddPatchWriter::Scope strategy(w, "strategy");
      w.Add("type", StrategyType::kRecreate);
    }
    w.Add("gpus", int64_t{0});
  }
  const json expected = json::parse(R"([{"op":"add","path":"/spec","value":{}},
      {"op":"add","path":"/spec/port","value":8080},{"op":"add","path":"/spec/strategy/type","value":"Recreate"},
      {"op":"add","path":"/spec/gpus","value":0}])");
  EXPECT_EQ(std::move(w).Finish(), expected.dump());
}

}  // namespace
}  // namespace ms::api
