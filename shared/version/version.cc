#include "shared/version/version.h"

// Defined by this folder's CMakeLists.txt on this file only, so a new revision
// recompiles one file.
#ifndef MS_BUILD_VERSION
#define MS_BUILD_VERSION "unknown"
#endif
#ifndef MS_BUILD_REVISION
#define MS_BUILD_REVISION "unknown"
#endif
#ifndef MS_BUILD_DATE
#define MS_BUILD_DATE "unknown"
#endif

namespace ms::version {

Info Current() { return Info{MS_BUILD_VERSION, MS_BUILD_REVISION, MS_BUILD_DATE}; }

std::string VersionText(std::string_view program, const Info& info) {
  std::string out(program);
  out += " version ";
  out += info.version;
  out += " (revision ";
  out += info.revision;
  out += ", built ";
  out += info.date;
  out += ")\n";
  return out;
}

void RegisterBuildInfo(metrics::Registry& registry, const Info& info) {
  prometheus::BuildGauge()
      .Name("modelservice_build_info")
      .Help("A metric with a constant '1' value labeled by the version and git revision this binary was built from")
      .Register(registry.families())
      .Add({{"version", std::string(info.version)}, {"revision", std::string(info.revision)}})
      .Set(1);
}

}  // namespace ms::version
