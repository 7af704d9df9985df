// The one JSON writer of the typed spec's values (value_text.h, the
// generated AppendJson): nlohmann's dump() of the same value byte for byte,
// which is what the defaults patch and the spec hash were written as
// before; and the reader reads back what it writes.
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

std::string Dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

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
  EXPECT_EQ(Text(IntOrPercent{0, false}), "0");
  EXPECT_EQ(Text(IntOrPercent{3, false}), "3");
  EXPECT_EQ(Text(IntOrPercent{25, true}), R"("25%")");
  EXPECT_EQ(Text(IntOrPercent{100, true}), R"("100%")");
  EXPECT_EQ(Text(Quantity{"500m", false}), R"("500m")");
  EXPECT_EQ(Text(Quantity{"2", true}), "2");
  EXPECT_EQ(Text(PortNumberOrName{8080, "", false}), "8080");
  EXPECT_EQ(Text(PortNumberOrName{0, "metrics", true}), R"("metrics")");
}

TEST(ValueText, ContainersAsNlohmannWritesThem) {
  EXPECT_EQ(Text(std::vector<std::string>{}), "[]");
  EXPECT_EQ(Text(std::vector<std::string>{"a", "b\"c"}), Dump(json::array({"a", "b\"c"})));
  const std::map<std::string, Quantity> map = {{"nvidia.com/gpu", {"1", true}}, {"cpu", {"500m", false}}};
  EXPECT_EQ(Text(map), R"({"cpu":"500m","nvidia.com/gpu":1})");
  EXPECT_EQ(Text(std::map<std::string, Quantity>{}), "{}");
}

// Every defaulted spec of the corpus: its text is in nlohmann's form (read
// and written again by nlohmann, the same bytes), and the spec's parser
// reads it back into the same spec.
TEST(ValueText, EverySpecIsWrittenInNlohmannsFormAndReadsBack) {
  size_t compared = 0;
  for (const json& obj : test::ModelServiceCorpus()) {
    const ModelServiceSpec d = ParseModelService(obj).spec.Defaulted();
    const std::string text = Text(d);
    EXPECT_EQ(json::parse(text).dump(), text) << obj.dump();
    EXPECT_EQ(ParseSpec(ToJsonValue(d)).spec, d) << text;
    compared += d.autoscaling.has_value() && d.strategy.has_value();
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
