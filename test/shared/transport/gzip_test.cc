// The gzip coding of /metrics: which Accept-Encoding values ask for it, and
// that what GzipWriter writes is one gzip member that zlib (as Prometheus'
// Go client would) reads back to the exact text, whatever its size.
#include "shared/transport/gzip.h"

#include <gtest/gtest.h>

#include <ostream>

#include "test/support/gunzip.h"

namespace ms::transport {
namespace {

bool Accepts(const char* value) {
  const std::string v = value;
  return AcceptsGzip(&v);
}

TEST(Gzip, AcceptEncodingValues) {
  EXPECT_FALSE(AcceptsGzip(nullptr));
  EXPECT_TRUE(Accepts("gzip"));  // Prometheus
  EXPECT_TRUE(Accepts("deflate, gzip"));
  EXPECT_TRUE(Accepts("gzip, deflate, br"));
  EXPECT_TRUE(Accepts("GZip"));
  EXPECT_TRUE(Accepts("x-gzip"));
  EXPECT_TRUE(Accepts("*"));
  EXPECT_TRUE(Accepts("br;q=1.0, gzip;q=0.5"));
  EXPECT_TRUE(Accepts(" gzip ;q=0.001"));
  EXPECT_FALSE(Accepts(""));
  EXPECT_FALSE(Accepts("identity"));
  EXPECT_FALSE(Accepts("deflate, br"));
  EXPECT_FALSE(Accepts("gzip;q=0"));
  EXPECT_FALSE(Accepts("gzip;Q=0.000"));
  EXPECT_FALSE(Accepts("gzip; q=0.0, identity"));
  EXPECT_FALSE(Accepts("gzipped"));
  EXPECT_FALSE(Accepts("xgzip"));
  EXPECT_FALSE(Accepts(",,;,"));
  // Named, gzip's own weight decides; "*" only speaks for what is not named.
  EXPECT_FALSE(Accepts("gzip;q=0, *"));
  EXPECT_FALSE(Accepts("*, gzip;q=0"));
  EXPECT_TRUE(Accepts("gzip, *;q=0"));
  EXPECT_FALSE(Accepts("br, *;q=0"));
}

std::string Compressed(const std::string& text, std::size_t piece) {
  GzipWriter gzip;
  std::ostream out(&gzip);
  for (std::size_t i = 0; i < text.size(); i += piece) out << text.substr(i, piece);
  return gzip.Finish();
}

TEST(Gzip, WritesOneMemberThatReadsBackToTheText) {
  EXPECT_EQ(Gunzip(Compressed("", 1)), "");
  EXPECT_EQ(Gunzip(Compressed("a", 1)), "a");
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "modelservice_replicas{name=\"m-" + std::to_string(i) + "\",namespace=\"bench\",type=\"ready\"} 2\n";
  ASSERT_GT(text.size(), 1'000'000u);  // many times the writer's 64 KiB buffer
  for (std::size_t piece : {1ul, 100ul, 65536ul, 200000ul}) {
    const std::string member = Compressed(text, piece);
    EXPECT_EQ(Gunzip(member), text) << piece;
    EXPECT_LT(member.size(), text.size() / 8) << piece;  // the point of it
  }
}

TEST(Gzip, FinishTwiceGivesNothingMore) {
  GzipWriter gzip;
  std::ostream out(&gzip);
  out << "text";
  EXPECT_EQ(Gunzip(gzip.Finish()), "text");
  EXPECT_EQ(gzip.Finish(), "");
}

}  // namespace
}  // namespace ms::transport
