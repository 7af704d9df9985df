#include "base/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include <sstream>

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
