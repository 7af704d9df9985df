#include "shared/flags/flags.h"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ms::flags {
namespace {

TEST(Flags, ParsesBothFormsAndAliases) {
  std::string dir = "/x", level = "info";
  int port = 9443;
  bool elect = false;
  std::chrono::milliseconds window{300000};
  FlagSet f("prog", "desc");
  f.String("cert-dir", &dir, "d");
  f.String("log-level", &level, "l");
  f.Alias("v", "log-level");
  f.Int("port", &port, "p");
  f.Bool("leader-elect", &elect, "e");
  f.Duration("window", &window, "w");
  const char* argv[] = {"prog", "--cert-dir=/certs", "--port", "8443", "--leader-elect", "-v=4", "--window", "1m30s"};
  EXPECT_EQ(f.Parse(8, argv), "");
  EXPECT_EQ(dir, "/certs");
  EXPECT_EQ(port, 8443);
  EXPECT_TRUE(elect);
  EXPECT_EQ(level, "4");
  EXPECT_EQ(window.count(), 90000);
  EXPECT_NE(f.Usage().find("--cert-dir value"), std::string::npos);
  EXPECT_NE(f.Usage().find("(default \"/x\")"), std::string::npos);
}

TEST(Flags, Errors) {
  int port = 1;
  FlagSet f("prog", "desc");
  f.Int("port", &port, "p");
  const char* a1[] = {"prog", "--nope"};
  EXPECT_EQ(f.Parse(2, a1), "unknown flag: --nope (see --help)");
  const char* a2[] = {"prog", "--port=abc"};
  EXPECT_EQ(f.Parse(2, a2), "invalid value \"abc\" for --port: not an integer");
  const char* a3[] = {"prog", "--port"};
  EXPECT_EQ(f.Parse(2, a3), "flag needs an argument: --port");
  const char* a4[] = {"prog", "--help"};
  EXPECT_EQ(f.Parse(2, a4), "");
  EXPECT_TRUE(f.help_requested());
}

TEST(Flags, DurationsAndAddresses) {
  std::chrono::milliseconds d{};
  EXPECT_TRUE(ParseDuration("300ms", &d));
  EXPECT_EQ(d.count(), 300);
  EXPECT_TRUE(ParseDuration("1h", &d));
  EXPECT_EQ(d.count(), 3600000);
  EXPECT_FALSE(ParseDuration("5", &d));
  EXPECT_FALSE(ParseDuration("5x", &d));
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(300000)), "5m");
  HostPort hp;
  EXPECT_TRUE(ParseBindAddress(":8080", &hp));
  EXPECT_EQ(hp.host, "0.0.0.0");
  EXPECT_EQ(hp.port, 8080);
  EXPECT_TRUE(ParseBindAddress("127.0.0.1:9", &hp));
  EXPECT_EQ(hp.host, "127.0.0.1");
  EXPECT_TRUE(ParseBindAddress("0", &hp));
  EXPECT_EQ(hp.port, -1);
  EXPECT_FALSE(ParseBindAddress("8080", &hp));
  EXPECT_FALSE(ParseBindAddress(":70000", &hp));
}

}  // namespace
TEST(Flags, GoStyleDurations) {
  auto parse = [](const std::string& s) -> std::optional<std::chrono::milliseconds> {
    std::chrono::milliseconds d{};
    if (!ParseDuration(s, &d)) return std::nullopt;
    return d;
  };
  using std::chrono::milliseconds;
  EXPECT_EQ(parse("15s"), milliseconds(15000));
  EXPECT_EQ(parse("5m"), milliseconds(300000));
  EXPECT_EQ(parse("1h30m"), milliseconds(5400000));
  EXPECT_EQ(parse("1.5s"), milliseconds(1500));
  EXPECT_EQ(parse("0"), milliseconds(0));
  for (const char* bad : {"", "15", "s", "10x", "-5s"}) EXPECT_FALSE(parse(bad)) << bad;
}

TEST(Flags, BindAddressForms) {
  HostPort hp;
  ASSERT_TRUE(ParseBindAddress("[::1]:80", &hp));
  EXPECT_EQ(hp.host, "::1");
  EXPECT_EQ(hp.port, 80);
  EXPECT_FALSE(ParseBindAddress("8080", &hp));
  EXPECT_FALSE(ParseBindAddress(":99999", &hp));
  EXPECT_FALSE(ParseBindAddress(":http", &hp));
}

TEST(Flags, ValidateRunsAfterEachSetAndReportsItsError) {
  int n = 1;
  FlagSet f("prog", "test");
  f.Int("n", &n, "a count");
  f.Validate("n", [&n] { return n >= 1 ? std::string() : std::string("--n must be at least 1"); });
  EXPECT_EQ(f.Parse({"--n=3"}), "");
  EXPECT_EQ(n, 3);
  EXPECT_EQ(f.Parse({"--n", "0"}), "--n must be at least 1");
  EXPECT_EQ(f.Parse({"--n=x"}), "invalid value \"x\" for --n: not an integer");
}

TEST(Flags, RepeatedFlagCollectsEachOccurrenceInOrder) {
  std::vector<std::string> headers;
  FlagSet f("prog", "test");
  f.Repeated("header", &headers, "Name=Value");
  EXPECT_EQ(f.Parse({"--header=A=1", "--header", "B=2", "--header=A=3"}), "");
  EXPECT_EQ(headers, (std::vector<std::string>{"A=1", "B=2", "A=3"}));
  EXPECT_NE(f.Usage().find("      --header value\n            Name=Value (repeatable)\n"), std::string::npos)
      << f.Usage();
}

TEST(Flags, ValidateAllRunsOnceEveryFlagIsParsed) {
  std::string a, b;
  FlagSet f("prog", "test");
  f.String("a", &a, "");
  f.String("b", &b, "");
  int runs = 0;
  f.ValidateAll([&] {
    ++runs;
    return !a.empty() && !b.empty() ? std::string("--a and --b are mutually exclusive") : std::string();
  });
  EXPECT_EQ(f.Parse({"--a=1"}), "");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(f.Parse({"--b=2"}), "--a and --b are mutually exclusive");  // with --a=1 from before
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f.Parse({"--help"}), "") << "not after --help";
  EXPECT_EQ(runs, 2);
}

// A help text of several lines: each line indented as the first (the
// webhook's --idle-timeout and --shutdown-delay have such texts).
TEST(FlagSet, HelpOfSeveralLinesIsIndentedThroughout) {
  FlagSet fs("prog", "test");
  std::string v = "x";
  fs.String("long", &v, "first line\nsecond line");
  EXPECT_NE(fs.Usage().find("      --long value\n            first line\n            second line (default \"x\")\n"),
            std::string::npos)
      << fs.Usage();
}

TEST(CommonFlags, DefinedOnceWithTheirDefaultsChecksAndMeaning) {
  CommonFlags f;
  FlagSet fs("prog", "test");
  DefineCommonFlags(fs, f);
  EXPECT_EQ(f.MetricsAddress().port, 8080);
  EXPECT_EQ(f.ProbeAddress().port, 8081);
  const std::string u = fs.Usage();
  for (const char* flag : {"--metrics-bind-address value", "--health-probe-bind-address value", "--log-format value",
                           "-v, --log-level value"})
    EXPECT_NE(u.find(flag), std::string::npos) << flag << "\n" << u;
  EXPECT_EQ(fs.Parse({"--metrics-bind-address=127.0.0.1:9090", "--health-probe-bind-address", "0", "-v=2"}), "");
  EXPECT_EQ(f.MetricsAddress().host, "127.0.0.1");
  EXPECT_EQ(f.MetricsAddress().port, 9090);
  EXPECT_EQ(f.ProbeAddress().port, -1) << "0 disables";
  EXPECT_EQ(f.MakeLogger("t")->level(), spdlog::level::debug);
  EXPECT_NE(fs.Parse({"--metrics-bind-address="}).find("invalid address \"\" for --metrics-bind-address"),
            std::string::npos);
  EXPECT_NE(fs.Parse({"--health-probe-bind-address=8081"}).find("invalid address"), std::string::npos);
  EXPECT_EQ(fs.Parse({"--log-format=xml"}), "invalid --log-format \"xml\": json or text");
  EXPECT_NE(fs.Parse({"--log-level=loud"}).find("invalid log level \"loud\""), std::string::npos);
}

TEST(FlagSet, ParseCommandLineSaysWhatMainDoes) {
  int n = 1;
  FlagSet fs("prog", "a test program");
  fs.Int("n", &n, "a count");
  std::ostringstream out, err;
  const char* bad[] = {"prog", "--m=1"};
  EXPECT_EQ(fs.ParseCommandLine(2, bad, out, err), 2);
  EXPECT_EQ(err.str(), "Error: unknown flag: --m=1 (see --help)\nRun 'prog --help' for usage.\n");
  EXPECT_EQ(out.str(), "");
  err.str("");
  const char* help[] = {"prog", "--help"};
  EXPECT_EQ(fs.ParseCommandLine(2, help, out, err), 0);
  EXPECT_EQ(out.str(), fs.Usage());
  EXPECT_EQ(err.str(), "");
  FlagSet fs2("prog", "a test program");
  fs2.Int("n", &n, "a count");
  out.str("");
  const char* good[] = {"prog", "--n=5"};
  EXPECT_EQ(fs2.ParseCommandLine(2, good, out, err), std::nullopt);
  EXPECT_EQ(n, 5);
  EXPECT_EQ(out.str() + err.str(), "");
}

}  // namespace ms::flags
