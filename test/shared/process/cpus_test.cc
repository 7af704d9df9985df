// The usable CPUs: the cgroup limits as v2 and v1 state them, and the
// rounding that sizes the webhook's event loops (--threads 0).
#include "shared/process/cpus.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ms::process {
namespace {

TEST(CpuLimit, ReadsCgroupV2CpuMax) {
  EXPECT_EQ(CpuLimitV2("50000 100000\n"), 0.5);
  EXPECT_EQ(CpuLimitV2("150000 100000"), 1.5);
  EXPECT_EQ(CpuLimitV2("200000 100000"), 2.0);
  EXPECT_EQ(CpuLimitV2("max 100000\n"), std::nullopt);
  for (const char* bad : {"", "50000", "x 100000", "50000 0", "-1 100000", "50000 100000 7"})
    EXPECT_EQ(CpuLimitV2(bad), std::nullopt) << bad;
}

TEST(CpuLimit, ReadsCgroupV1Quota) {
  EXPECT_EQ(CpuLimitV1("50000\n", "100000\n"), 0.5);
  EXPECT_EQ(CpuLimitV1("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(CpuLimitV1("", ""), std::nullopt);
}

TEST(CpusFor, TheAffinityCappedByTheLimitRoundedUpAtLeastOne) {
  EXPECT_EQ(CpusFor(64, 0.5), 1);  // the chart's 500m limit on a large node
  EXPECT_EQ(CpusFor(64, 1.5), 2);
  EXPECT_EQ(CpusFor(64, 2.0), 2);
  EXPECT_EQ(CpusFor(2, 8.0), 2);
  EXPECT_EQ(CpusFor(2, std::nullopt), 2);
  EXPECT_EQ(CpusFor(0, std::nullopt), 1);
  EXPECT_EQ(CpusFor(4, 0.001), 1);
}

TEST(UsableCpus, AtLeastOneAndAtMostTheAffinity) {
  const int n = UsableCpus();
  EXPECT_GE(n, 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_LE(n, CPU_COUNT(&set));
}

// A real cgroup (v1, as on the CI machines) with a quota, and a child process
// in it: UsableCpus reads the limit from /proc/self/cgroup's path.
int UsableCpusInCgroup(const std::string& dir, long quota_us) {
  std::ofstream(dir + "/cpu.cfs_period_us") << 100000;
  std::ofstream(dir + "/cpu.cfs_quota_us") << quota_us;
  const pid_t child = fork();
  if (child == 0) {
    std::ofstream(dir + "/cgroup.procs") << getpid();
    _exit(UsableCpus());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(UsableCpus, FollowsTheQuotaOfTheProcesssCgroup) {
  const std::string dir = "/sys/fs/cgroup/cpu/ms-cpus-test-" + std::to_string(getpid());
  std::error_code ec;
  if (!std::filesystem::create_directory(dir, ec))
    GTEST_SKIP() << "cannot create a cgroup v1 cpu group here (" << dir << "): " << ec.message();
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int affinity = CPU_COUNT(&set);
  EXPECT_EQ(UsableCpusInCgroup(dir, 50000), 1);
  EXPECT_EQ(UsableCpusInCgroup(dir, 150000), std::min(2, affinity));
  EXPECT_EQ(UsableCpusInCgroup(dir, -1), affinity);
  std::filesystem::remove(dir, ec);  // empty again: the children have exited
  EXPECT_FALSE(ec) << ec.message();
}

}  // namespace
}  // namespace ms::process
