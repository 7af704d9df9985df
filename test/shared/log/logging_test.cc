#include "shared/log/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

#include "shared/text/utf8.h"

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
  EXPECT_TRUE(text::IsValidUtf8(line)) << line;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(line)) << line;
  EXPECT_EQ(j["msg"],
            "last read: '\\xff\\xfe', overlong \\xc0\\xaf, surrogate \\xed\\xa0\\x80, cut \\xe2\\x82, ok "
            "\xc3\xa9\xe2\x82\xac");
}

TEST(Utf8, SanitizeKeepsValidTextAndWritesInvalidBytesAsHex) {
  EXPECT_EQ(text::SanitizeUtf8("plain \xc3\xa9\xf0\x9f\x98\x80"), "plain \xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(text::SanitizeUtf8("a\xff"
                               "b\xc3"),
            "a\\xffb\\xc3");
  EXPECT_EQ(text::SanitizeUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_TRUE(text::IsValidUtf8(text::SanitizeUtf8("\x80\x81\xc0\xc1\xf5\xff")));
}

// Fields of the scopes open on the thread: JSON keys of the line (a value
// from a client escaped like the message), key=value after a text message;
// scopes nest and end with their block; other threads do not see them.
TEST(Logging, FieldScopesAddKeysToTheLinesOfTheirThread) {
  std::ostringstream json_out, text_out;
  auto json_logger = MakeLogger("controller", Format::kJson, spdlog::level::info,
                                std::make_shared<spdlog::sinks::ostream_sink_mt>(json_out));
  auto text_logger = MakeLogger("controller", Format::kText, spdlog::level::info,
                                std::make_shared<spdlog::sinks::ostream_sink_mt>(text_out));
  {
    FieldScope outer({{"controller", "modelservice"}, {"namespace", "ml"}, {"name", "bert"}});
    {
      FieldScope inner({{"error", "update Deployment ml/bert: 409 Conflict: \"x\"\n"}});
      json_logger->error("Reconciler error");
      text_logger->error("Reconciler error");
    }
    std::thread([&] { json_logger->info("other thread"); }).join();
    json_logger->info("outer only");
  }
  json_logger->info("none");
  json_logger->flush();
  text_logger->flush();
  std::istringstream lines(json_out.str());
  std::vector<nlohmann::json> got;
  for (std::string line; std::getline(lines, line);) got.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(got.size(), 4u) << json_out.str();
  EXPECT_EQ(got[0]["msg"], "Reconciler error");
  EXPECT_EQ(got[0]["controller"], "modelservice");
  EXPECT_EQ(got[0]["namespace"], "ml");
  EXPECT_EQ(got[0]["name"], "bert");
  EXPECT_EQ(got[0]["error"], "update Deployment ml/bert: 409 Conflict: \"x\"\n");
  EXPECT_FALSE(got[1].contains("controller")) << got[1];
  EXPECT_EQ(got[2]["name"], "bert");
  EXPECT_FALSE(got[2].contains("error")) << got[2];
  EXPECT_EQ(got[3].size(), 4u) << got[3];  // ts, level, logger, msg
  const std::string text = text_out.str();
  EXPECT_NE(text.find(" E controller: Reconciler error controller=modelservice namespace=ml name=bert "
                      "error=\"update Deployment ml/bert: 409 Conflict: \\\"x\\\"\\n\"\n"),
            std::string::npos)
      << text;
}

// A text line is one line whatever the client sent: the message's control
// characters and backslashes are escaped (a review's uid holding a newline
// cannot start a forged line), quotes kept; a field value with a newline,
// a quote or a control character is quoted and escaped, as klog's text
// format quotes it.
TEST(Logging, TextLinesEscapeTheMessageAndQuoteFieldValues) {
  std::ostringstream os;
  auto logger =
      MakeLogger("webhook", Format::kText, spdlog::level::info, std::make_shared<spdlog::sinks::ostream_sink_mt>(os));
  {
    FieldScope fields({{"uid", "u1\nI forged=1"}, {"name", "plain"}, {"note", "say \"hi\"\x1b[31m"}});
    logger->info("denied /validate CREATE ns/x (uid u1\nI forged=1, code 422): spec.model: Invalid value: \"a\\b\"\r");
  }
  logger->info("del\x7f and \xff");
  logger->flush();
  const std::string text = os.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find(" I webhook: denied /validate CREATE ns/x (uid u1\\nI forged=1, code 422): spec.model: Invalid "
                      "value: \"a\\\\b\"\\r uid=\"u1\\nI forged=1\" name=plain note=\"say \\\"hi\\\"\\u001b[31m\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" I webhook: del\\u007f and \\xff\n"), std::string::npos) << text;
}

// Every line is bounded in both formats, at every level: the message is cut
// at kMaxMessageBytes and each field value at kMaxFieldBytes of escaped text,
// with a marker saying how many bytes of the original were left out; a cut
// JSON line is still one valid JSON object.
TEST(Logging, LinesAreCutAtAFixedSizeWithAMarker) {
  const std::string message = "denied: " + std::string(1'000'000, 'x');
  const std::string uid(5000, 'u');
  for (Format format : {Format::kJson, Format::kText}) {
    std::ostringstream os;
    auto logger =
        MakeLogger("webhook", format, spdlog::level::trace, std::make_shared<spdlog::sinks::ostream_sink_mt>(os));
    {
      FieldScope fields({{"uid", uid}});
      logger->trace("{}", message);
      logger->error("{}", message);
    }
    logger->flush();
    std::istringstream lines(os.str());
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      EXPECT_LT(line.size(), kMaxMessageBytes + kMaxFieldBytes + 150) << line.substr(0, 200);
      const std::string cut_message = message.substr(0, kMaxMessageBytes) + "...[cut " +
                                      std::to_string(message.size() - kMaxMessageBytes) + " bytes]";
      const std::string cut_uid = uid.substr(0, kMaxFieldBytes) + "...[cut 3976 bytes]";
      if (format == Format::kJson) {
        const auto j = nlohmann::json::parse(line);
        EXPECT_EQ(j["msg"], cut_message);
        EXPECT_EQ(j["uid"], cut_uid);
      } else {
        EXPECT_NE(line.find(": " + cut_message + " uid=" + cut_uid), std::string::npos) << line.substr(0, 200);
      }
    }
    EXPECT_EQ(n, 2);
  }
  // An escape is never split: the cut falls before the whole of it.
  std::string out;
  AppendEscaped(out, "ab\ncd", Escape::kJson, 3);
  EXPECT_EQ(out, "ab...[cut 3 bytes]");
  out.clear();
  AppendEscaped(out, "a\xc3\xa9", Escape::kText, 2);
  EXPECT_EQ(out, "a...[cut 2 bytes]");
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
