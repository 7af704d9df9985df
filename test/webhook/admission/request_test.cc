// AdmissionRequest: each member admission reads found in the one pass, in
// either tree, the last of a repeated key winning as nlohmann's parser keeps
// it, and nothing else taken for one of them.
#include "webhook/admission/request.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

namespace ms::admission {
namespace {

using nlohmann::json;

constexpr const char* kRequest =
    R"({"uid":"u1","kind":{"kind":"ModelService"},"resource":{"resource":"modelservices"},"subResource":"scale",)"
    R"("name":"n","namespace":"ns","operation":"UPDATE","object":{"a":1},"oldObject":{"b":2},)"
    R"("requestKind":{"kind":"X"},"userInfo":{"username":"u"},"names":"not name","uid":"u2"})";

void ExpectEveryMember(const AdmissionRequest& r) {
  EXPECT_EQ(text::Text(r.uid), "u2");  // the last of the repeated key
  EXPECT_EQ(r.kind->find("kind")->str(), "ModelService");
  EXPECT_EQ(r.resource->find("resource")->str(), "modelservices");
  EXPECT_EQ(text::Text(r.sub_resource), "scale");
  EXPECT_EQ(text::Text(r.name), "n");
  EXPECT_EQ(text::Text(r.namespace_), "ns");
  EXPECT_EQ(text::Text(r.operation), "UPDATE");
  EXPECT_EQ(r.object->find("a")->int64(), 1);
  EXPECT_EQ(r.old_object->find("b")->int64(), 2);
}

TEST(AdmissionRequest, FindsEveryMemberInBothTrees) {
  ExpectEveryMember(AdmissionRequest(json::parse(kRequest)));
  rapidjson::Document doc;
  doc.Parse(kRequest);
  ASSERT_FALSE(doc.HasParseError());
  ExpectEveryMember(AdmissionRequest(doc));
}

TEST(AdmissionRequest, AbsentOrNotAStringIsEmptyText) {
  const json request = {{"uid", 7}, {"operation", nullptr}};
  const AdmissionRequest r(request);
  ASSERT_TRUE(r.uid.has_value());
  EXPECT_EQ(text::Text(r.uid), "");
  EXPECT_EQ(text::Text(r.operation), "");
  EXPECT_FALSE(r.name.has_value());
  EXPECT_FALSE(r.object.has_value());
  const AdmissionRequest none(json("not an object"));
  EXPECT_FALSE(none.uid.has_value());
  EXPECT_FALSE(none.kind.has_value());
}

}  // namespace
}  // namespace ms::admission
