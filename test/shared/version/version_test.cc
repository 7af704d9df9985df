// --version and modelservice_build_info.
#include "shared/version/version.h"

#include <gtest/gtest.h>

#include <sstream>

#include "shared/flags/flags.h"
#include "shared/metrics/metrics.h"

namespace ms::version {
namespace {

TEST(Version, TextAndBuildInfo) {
  const Info info{"1.2.3", "0123456789ab", "2025-01-31T12:00:00Z"};
  EXPECT_EQ(VersionText("modelservice-webhook", info),
            "modelservice-webhook version 1.2.3 (revision 0123456789ab, built 2025-01-31T12:00:00Z)\n");
  metrics::Registry registry;
  RegisterBuildInfo(registry, info);
  const std::string text = metrics::Serialize(registry.families());
  EXPECT_NE(text.find("# TYPE modelservice_build_info gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("modelservice_build_info{revision=\"0123456789ab\",version=\"1.2.3\"} 1\n"), std::string::npos)
      << text;
}

TEST(Version, CompiledInValuesAreSet) {
  const Info info = Current();
  EXPECT_FALSE(info.version.empty());
  EXPECT_FALSE(info.revision.empty());
  EXPECT_EQ(info.date.size(), 20u) << info.date;  // 2025-01-31T12:00:00Z
}

TEST(Version, TheVersionFlagPrintsAndEnds) {
  flags::FlagSet fs("prog", "a program");
  fs.Version(VersionText("prog"));
  std::ostringstream out, err;
  const char* argv[] = {"prog", "--version"};
  EXPECT_EQ(fs.ParseCommandLine(2, argv, out, err), 0);
  EXPECT_EQ(out.str(), VersionText("prog"));
  EXPECT_EQ(err.str(), "");
  EXPECT_NE(fs.Usage().find("--version"), std::string::npos);
  // Without Version(), --version is an unknown flag as before.
  flags::FlagSet plain("prog", "a program");
  std::ostringstream out2, err2;
  EXPECT_EQ(plain.ParseCommandLine(2, argv, out2, err2), 2);
}

}  // namespace
}  // namespace ms::version
