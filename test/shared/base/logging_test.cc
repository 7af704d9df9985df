#include "base/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "base/utf8.h"

namespace ms::log {
namespace {

TEST(Logging, JsonLinesAreValidJsonWithEscapedMessages) {
  std::ostringstream os;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(os);
  auto logger = MakeLogger("webhook", Format::kJson, spdlog::level::info, sink);
  logger->info("denied: spec.model: Invalid value: \"a b\"\twith\nnewline and \\ and \x01");
  logger->debug("not shown");
  logger->flush();
  std::string line = os.str();
  ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["logger"], "webhook");
  EXPECT_EQ(j["msg"], "denied: spec.model: Invalid value: \"a b\"\twith\nnewline and \\ and \x01");
  EXPECT_EQ(j["ts"].get<std::string>().size(), 24u);
}

// A message that carries bytes from a client (a parser's "last read: '\xff'")
// still makes a line of valid JSON and valid UTF-8; valid UTF-8 is kept.
TEST(Logging, InvalidUtf8InAMessageIsEscapedNotCopied) {
  std::ostringstream os;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(os);
  auto logger = MakeLogger("webhook", Format::kJson, spdlog::level::info, sink);
  logger->info(
      "last read: '\xff\xfe', overlong \xc0\xaf, surrogate \xed\xa0\x80, cut \xe2\x82, ok \xc3\xa9\xe2\x82\xac");
  logger->flush();
  const std::string line = os.str();
  EXPECT_TRUE(IsValidUtf8(line)) << line;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(line)) << line;
  EXPECT_EQ(j["msg"],
            "last read: '\\xff\\xfe', overlong \\xc0\\xaf, surrogate \\xed\\xa0\\x80, cut \\xe2\\x82, ok "
            "\xc3\xa9\xe2\x82\xac");
}

TEST(Utf8, SanitizeKeepsValidTextAndWritesInvalidBytesAsHex) {
  EXPECT_EQ(SanitizeUtf8("plain \xc3\xa9\xf0\x9f\x98\x80"), "plain \xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(SanitizeUtf8("a\xff"
                         "b\xc3"),
            "a\\xffb\\xc3");
  EXPECT_EQ(SanitizeUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\x80\x81\xc0\xc1\xf5\xff")));
}

TEST(Logging, ParsesFormatsAndLevels) {
  EXPECT_EQ(ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("text"), Format::kText);
  EXPECT_FALSE(ParseFormat("yaml"));
  EXPECT_EQ(ParseLevel("warning"), spdlog::level::warn);
  EXPECT_EQ(ParseLevel("0"), spdlog::level::info);
  EXPECT_EQ(ParseLevel("2"), spdlog::level::debug);
  EXPECT_EQ(ParseLevel("5"), spdlog::level::trace);
  EXPECT_FALSE(ParseLevel("loud"));
}

}  // namespace
}  // namespace ms::log
