// What the API server does to a ModelService before admission: pruning of
// unknown fields (with their paths, for strict field validation) and the
// dropping of nulls.
#include "shared/api/prune.h"

#include <gtest/gtest.h>

namespace ms::api {
namespace {

using nlohmann::json;

TEST(PruneTest, UnknownFieldsArePrunedAndListedSorted) {
  json o = json::parse(R"({
    "apiVersion": "modelops.dev/v1", "kind": "ModelService", "extra": 1,
    "metadata": {"name": "m", "labels": {"a": "b"}, "lables": {}},
    "spec": {"model": "m", "colour": "red", "env": [{"name": "A", "vaule": "1"}],
             "nodeSelector": {"any-key": "v"},
             "strategy": {"type": "Recreate", "rollingupdate": {}}},
    "status": {"phase": "Ready", "mood": "good"}})");
  EXPECT_EQ(PruneUnknownFields(o),
            (std::vector<std::string>{"extra", "metadata.lables", "spec.colour", "spec.env[0].vaule",
                                      "spec.strategy.rollingupdate", "status.mood"}));
  EXPECT_EQ(o, json::parse(R"({
    "apiVersion": "modelops.dev/v1", "kind": "ModelService",
    "metadata": {"name": "m", "labels": {"a": "b"}},
    "spec": {"model": "m", "env": [{"name": "A"}], "nodeSelector": {"any-key": "v"},
             "strategy": {"type": "Recreate"}},
    "status": {"phase": "Ready"}})"));
  // Nothing unknown: nothing changes.
  const json before = o;
  EXPECT_TRUE(PruneUnknownFields(o).empty());
  EXPECT_EQ(o, before);
  EXPECT_EQ(StrictDecodingError({"spec.a", "spec.b"}),
            "strict decoding error: unknown field \"spec.a\", unknown field \"spec.b\"");
}

TEST(PruneTest, NullMembersTheSchemaKnowsAreDropped) {
  json o = json::parse(R"({"apiVersion": "modelops.dev/v1", "kind": "ModelService", "metadata": {"name": "m"},
    "spec": {"model": "m", "replicas": null, "strategy": {"type": null}, "nodeSelector": {"a": null},
             "env": [null, {"name": "A", "value": null}]}})");
  DropNulls(o);
  EXPECT_EQ(o["spec"], json::parse(R"({"model": "m", "strategy": {}, "nodeSelector": {},
    "env": [null, {"name": "A"}]})"));
}

}  // namespace
}  // namespace ms::api
