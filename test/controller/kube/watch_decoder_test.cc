#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller/kube/watch_decoder.h"

namespace ms::kube {
namespace {

struct Collector {
  std::vector<WatchEvent> events;
  std::vector<std::string> errors;
  WatchDecoder decoder{[this](const WatchEvent& e) {
                         events.push_back(e);
                         return true;
                       },
                       [this](const std::string& m) { errors.push_back(m); }};
};

const std::string kAdded = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})";
const std::string kModified = R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})";
const std::string kBookmark = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";

TEST(KubeWatchDecoder, WholeLines) {
  Collector c;
  EXPECT_TRUE(c.decoder.Feed(kAdded + "\n" + kModified + "\n"));
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].type, "ADDED");
  EXPECT_EQ(c.events[1].type, "MODIFIED");
  EXPECT_EQ(c.events[1].object["metadata"]["resourceVersion"], "2");
  EXPECT_TRUE(c.errors.empty());
}

TEST(KubeWatchDecoder, EveryPossibleSplitPoint) {
  const std::string stream = kAdded + "\n\n" + kBookmark + "\r\n" + kModified + "\n";
  for (size_t cut1 = 0; cut1 <= stream.size(); cut1 += 7) {
    for (size_t cut2 = cut1; cut2 <= stream.size(); cut2 += 13) {
      Collector c;
      c.decoder.Feed(stream.substr(0, cut1));
      c.decoder.Feed(stream.substr(cut1, cut2 - cut1));
      c.decoder.Feed(stream.substr(cut2));
      ASSERT_EQ(c.events.size(), 3u) << cut1 << "," << cut2;
      EXPECT_EQ(c.events[0].type, "ADDED");
      EXPECT_EQ(c.events[1].type, "BOOKMARK");
      EXPECT_EQ(c.events[1].object["metadata"]["resourceVersion"], "9");
      EXPECT_EQ(c.events[2].type, "MODIFIED");
      EXPECT_TRUE(c.errors.empty());
    }
  }
}

TEST(KubeWatchDecoder, ByteAtATime) {
  const std::string stream = kAdded + "\n" + kModified + "\n";
  Collector c;
  for (char ch : stream) c.decoder.Feed(std::string_view(&ch, 1));
  EXPECT_EQ(c.events.size(), 2u);
}

TEST(KubeWatchDecoder, BlankLinesIgnored) {
  Collector c;
  c.decoder.Feed("\n\n  \n\r\n");
  c.decoder.Finish();
  EXPECT_TRUE(c.events.empty());
  EXPECT_TRUE(c.errors.empty());
}

TEST(KubeWatchDecoder, MalformedLinesReportedAndSkipped) {
  Collector c;
  c.decoder.Feed("{not json}\n");
  c.decoder.Feed("[1,2]\n");
  c.decoder.Feed(R"({"object":{}})"
                 "\n");
  c.decoder.Feed(R"({"type":"ADDED","object":"str"})"
                 "\n");
  c.decoder.Feed(kAdded + "\n");
  EXPECT_EQ(c.errors.size(), 4u);
  EXPECT_EQ(c.decoder.errors(), 4u);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].type, "ADDED");
}

TEST(KubeWatchDecoder, FinishDecodesTrailingLineWithoutNewline) {
  Collector c;
  c.decoder.Feed(kAdded);
  EXPECT_TRUE(c.events.empty());
  c.decoder.Finish();
  EXPECT_EQ(c.events.size(), 1u);
}

TEST(KubeWatchDecoder, OversizedLineIsDroppedAndStreamResumes) {
  std::vector<WatchEvent> events;
  std::vector<std::string> errors;
  WatchDecoder d(
      [&](const WatchEvent& e) {
        events.push_back(e);
        return true;
      },
      [&](const std::string& m) { errors.push_back(m); }, /*max_line=*/64);
  const std::string big = R"({"type":"ADDED","object":{"data":")" + std::string(200, 'x') + R"("}})";
  // Split across chunks so the limit trips while buffering.
  d.Feed(big.substr(0, 50));
  d.Feed(big.substr(50, 100));
  d.Feed(big.substr(150) + "\n" +
         R"({"type":"DELETED","object":{}})"
         "\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("longer than 64"), std::string::npos);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "DELETED");
}

TEST(KubeWatchDecoder, ConsumerStopEndsDecoding) {
  int n = 0;
  WatchDecoder d([&](const WatchEvent&) { return ++n < 2; });
  EXPECT_FALSE(d.Feed(kAdded + "\n" + kAdded + "\n" + kAdded + "\n"));
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(d.stopped());
  EXPECT_FALSE(d.Feed(kAdded + "\n"));
  EXPECT_EQ(n, 2);
}

TEST(KubeWatchDecoder, ErrorEventCarriesStatus) {
  Collector c;
  c.decoder.Feed(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
                 R"J("message":"too old resource version: 1 (5)","reason":"Expired","code":410}})J"
                 "\n");
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].type, "ERROR");
  EXPECT_EQ(c.events[0].object["code"], 410);
  EXPECT_EQ(c.events[0].object["reason"], "Expired");
}

TEST(KubeWatchDecoder, ManagedFieldsAreNotBuilt) {
  Collector c;
  c.decoder.Feed(R"({"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"kubectl",)"
                 R"("fieldsV1":{"f:spec":{"f:replicas":{}}}}],"labels":{"x":"y"}},"spec":{"replicas":2}}})"
                 "\n");
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].object,
            nlohmann::json::parse(R"({"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"replicas":2}})"));
}

}  // namespace
}  // namespace ms::kube
