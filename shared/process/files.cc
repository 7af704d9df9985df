#include "shared/process/files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ms::process {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path + ": read error");
  return std::move(ss).str();
}

std::optional<std::string> TryReadFile(const std::string& path) {
  try {
    return ReadFile(path);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

}  // namespace ms::process
