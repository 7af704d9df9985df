// What this binary is: its version, the git revision it was built from and
// when it was built (CMake passes them in at configure time: from git, or
// from -DMS_VERSION / -DMS_GIT_REVISION / -DMS_BUILD_DATE, e.g. the image
// build, which has no .git). Printed by --version (FlagSet) and exported as
// modelservice_build_info{version,revision} 1.
#pragma once

#include <string>
#include <string_view>

#include "shared/metrics/metrics.h"

namespace ms::version {

struct Info {
  std::string_view version;   // e.g. "0.1.0"
  std::string_view revision;  // e.g. "7609a52c1e2f" ("-dirty" when built from a modified tree), or "unknown"
  std::string_view date;      // RFC 3339 UTC, e.g. "2025-01-31T12:00:00Z", or "unknown"
};

// The values compiled into this binary.
Info Current();

// "PROGRAM version V (revision R, built D)" plus a newline.
std::string VersionText(std::string_view program, const Info& info = Current());

// Registers modelservice_build_info{version,revision} = 1 on `registry`.
void RegisterBuildInfo(metrics::Registry& registry, const Info& info = Current());

}  // namespace ms::version
