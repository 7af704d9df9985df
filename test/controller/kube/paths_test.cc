#include <gtest/gtest.h>

#include "controller/kube/paths.h"
#include "controller/kube/status.h"

namespace ms::kube {
namespace {

TEST(KubePaths, UrlEncodeKeepsUnreservedOnly) {
  EXPECT_EQ(UrlEncode("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
  EXPECT_EQ(UrlEncode("a=b,c!=d"), "a%3Db%2Cc%21%3Dd");
  EXPECT_EQ(UrlEncode("x y/z&?#%"), "x%20y%2Fz%26%3F%23%25");
  EXPECT_EQ(UrlEncode("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(UrlEncode("a b&c=d+e/f?g#h%\"\n"), "a%20b%26c%3Dd%2Be%2Ff%3Fg%23h%25%22%0A");
  EXPECT_EQ(UrlEncode("\xff"), "%FF");
}

TEST(KubePaths, CollectionAndObjectPaths) {
  EXPECT_EQ(CollectionPath("", "v1", "services"), "/api/v1/services");
  EXPECT_EQ(CollectionPath("", "v1", "services", "ns1"), "/api/v1/namespaces/ns1/services");
  EXPECT_EQ(CollectionPath("apps", "v1", "deployments"), "/apis/apps/v1/deployments");
  EXPECT_EQ(CollectionPath("modelops.dev", "v1", "modelservices", "default"),
            "/apis/modelops.dev/v1/namespaces/default/modelservices");
  EXPECT_EQ(ObjectPath("apps", "v1", "deployments", "ns", "web"), "/apis/apps/v1/namespaces/ns/deployments/web");
  EXPECT_EQ(ObjectPath("coordination.k8s.io", "v1", "leases", "kube-system", "ms-lock"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ms-lock");
  EXPECT_EQ(ObjectPath("", "v1", "namespaces", "", "default"), "/api/v1/namespaces/default");
  EXPECT_EQ(StatusPath("modelops.dev", "v1", "modelservices", "ns", "bert"),
            "/apis/modelops.dev/v1/namespaces/ns/modelservices/bert/status");
}

TEST(KubePaths, NamespacedCollectionPath) {
  EXPECT_EQ(NamespacedCollectionPath("/apis/apps/v1/deployments", ""), "/apis/apps/v1/deployments");
  EXPECT_EQ(NamespacedCollectionPath("/apis/apps/v1/deployments", "prod"), "/apis/apps/v1/namespaces/prod/deployments");
  EXPECT_EQ(NamespacedCollectionPath("/api/v1/services?limit=5", "a"), "/api/v1/namespaces/a/services?limit=5");
}

TEST(KubePaths, Query) {
  EXPECT_EQ(WithQuery("/api/v1/pods", "limit", "500"), "/api/v1/pods?limit=500");
  EXPECT_EQ(WithQuery("/api/v1/pods?limit=500", "continue", "a+b/c="), "/api/v1/pods?limit=500&continue=a%2Bb%2Fc%3D");
}

TEST(KubePaths, ObjectKeyAndResourceVersion) {
  auto obj = nlohmann::json::parse(R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"42"}})");
  EXPECT_EQ(ObjectKey(obj), "ns/a");
  EXPECT_EQ(ResourceVersionOf(obj), "42");
  EXPECT_EQ(ObjectKey(nlohmann::json::parse(R"({"metadata":{"name":"node1"}})")), "node1");
  EXPECT_EQ(ObjectKey(nlohmann::json::parse(R"({"metadata":{}})")), "");
  EXPECT_EQ(ObjectKey(nlohmann::json::parse("[1]")), "");
  EXPECT_EQ(ResourceVersionOf(nlohmann::json::object()), "");
}

TEST(KubeStatus, DecodesMetav1Status) {
  Status s = StatusFromBody(
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"deployments.apps \"x\" not found",)"
      R"("reason":"NotFound","details":{"name":"x"},"code":404})",
      404);
  EXPECT_EQ(s.code, 404);
  EXPECT_EQ(s.reason, "NotFound");
  EXPECT_EQ(s.message, "deployments.apps \"x\" not found");
}

TEST(KubeStatus, NonStatusBodyFallsBackToCodeReason) {
  Status s = StatusFromBody("<html>bad gateway</html>", 503);
  EXPECT_EQ(s.code, 503);
  EXPECT_EQ(s.reason, "ServiceUnavailable");
  EXPECT_EQ(s.message, "<html>bad gateway</html>");
  EXPECT_EQ(StatusFromBody("", 418).reason, "Unknown");
  EXPECT_EQ(StatusFromBody("", 418).message, "HTTP 418");
}

TEST(KubeStatus, GoneDetection) {
  EXPECT_TRUE(IsGone(StatusFromJson(nlohmann::json::parse(R"({"code":410,"reason":"Expired"})"), 0)));
  EXPECT_TRUE(IsGone(StatusFromJson(nlohmann::json::parse(R"({"reason":"Gone"})"), 0)));
  EXPECT_FALSE(IsGone(StatusFromJson(nlohmann::json::parse(R"({"code":500,"reason":"InternalError"})"), 0)));
  Status t = TransportError("Connection refused");
  EXPECT_EQ(t.code, 0);
  EXPECT_EQ(t.reason, "Transport");
}

}  // namespace
}  // namespace ms::kube
