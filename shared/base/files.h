// Reading small files whole (certificates, keys, tokens, /proc entries).
#pragma once

#include <string>

namespace ms {

// The whole file. Throws std::runtime_error("cannot read <path>: <reason>").
std::string ReadFile(const std::string& path);

}  // namespace ms
