// How many CPUs the process can keep busy, for sizing event loops as Go
// sizes GOMAXPROCS since Go 1.25: the CPUs it may run on (its affinity
// mask), capped by its cgroup's CPU limit rounded up. A container limited to
// 500m on a 64-core node gets 1, not 64 loops taking turns at the quota.
#pragma once

#include <optional>
#include <string_view>

namespace ms::process {

// The limit in CPUs that a cgroup v2 `cpu.max` file states ("50000 100000":
// 0.5), or nullopt for "max ..." or text that is not a limit.
std::optional<double> CpuLimitV2(std::string_view cpu_max);
// The same from cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us ("-1":
// no limit).
std::optional<double> CpuLimitV1(std::string_view quota_us, std::string_view period_us);

// max(1, min(affinity_cpus, the limit rounded up)).
int CpusFor(int affinity_cpus, std::optional<double> limit);

// CpusFor(this process's affinity mask, the lowest limit of its cgroup and
// its ancestors, v2 or v1, as /proc/self/cgroup and /sys/fs/cgroup show them).
int UsableCpus();

}  // namespace ms::process
