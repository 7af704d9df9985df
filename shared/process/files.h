// Reading small files whole (certificates, keys, tokens, /proc entries).
#pragma once

#include <optional>
#include <string>

namespace ms::process {

// The whole file. Throws std::runtime_error("cannot read <path>: <reason>").
std::string ReadFile(const std::string& path);
// The whole file, or nullopt when it cannot be read (for files that may
// well be absent: a cgroup controller not mounted here).
std::optional<std::string> TryReadFile(const std::string& path);

}  // namespace ms::process
