#include "shared/process/cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "shared/process/files.h"
#include "shared/text/strings.h"

namespace ms::process {

namespace {

std::optional<long long> Integer(std::string_view text) {
  text = text::Trim(text);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> Limit(std::optional<long long> quota, std::optional<long long> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

void Lower(std::optional<double>& lowest, std::optional<double> limit) {
  if (limit && (!lowest || *limit < *lowest)) lowest = limit;
}

// `path` and each of its ancestors up to "/", deepest first.
std::vector<std::string> SelfAndAncestors(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path != "/") {
    out.push_back(path);
    path.resize(path.rfind('/'));
  }
  out.push_back("");
  return out;
}

}  // namespace

std::optional<double> CpuLimitV2(std::string_view cpu_max) {
  cpu_max = text::Trim(cpu_max);
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return Limit(Integer(cpu_max.substr(0, space)), Integer(cpu_max.substr(space + 1)));
}

std::optional<double> CpuLimitV1(std::string_view quota_us, std::string_view period_us) {
  return Limit(Integer(quota_us), Integer(period_us));
}

int CpusFor(int affinity_cpus, std::optional<double> limit) {
  int cpus = std::max(affinity_cpus, 1);
  if (limit) cpus = std::min(cpus, static_cast<int>(std::ceil(*limit)));
  return std::max(cpus, 1);
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  // The process's cgroups: "0::/path" (v2) and "N:cpu,cpuacct:/path" (v1).
  // Inside a container's cgroup namespace the path is "/" and the files at
  // the mount's root are the container's own.
  std::optional<double> lowest;
  std::istringstream lines(TryReadFile("/proc/self/cgroup").value_or(""));
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    const bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    const bool v1_cpu = controllers == "cpu" || controllers.starts_with("cpu,") ||
                        controllers.find(",cpu,") != std::string::npos || controllers.ends_with(",cpu");
    if (!v2 && !v1_cpu) continue;
    for (const std::string& dir : SelfAndAncestors(path)) {
      if (v2) {
        Lower(lowest, CpuLimitV2(TryReadFile("/sys/fs/cgroup" + dir + "/cpu.max").value_or("")));
      } else {
        const std::string base = "/sys/fs/cgroup/" + controllers + dir;
        Lower(lowest, CpuLimitV1(TryReadFile(base + "/cpu.cfs_quota_us").value_or(""),
                                 TryReadFile(base + "/cpu.cfs_period_us").value_or("")));
      }
    }
  }
  return CpusFor(affinity, lowest);
}

}  // namespace ms::process
