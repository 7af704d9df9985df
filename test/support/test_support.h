// Small helpers for tests: temporary directories, running a command.
// (Reading a file: ms::process::ReadFile in shared/process/files.h.)
#pragma once

#include <string>

namespace ms::test {

// A fresh directory under $TMPDIR, removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` with /bin/sh, feeding `input` on stdin (through a file).
CommandResult Run(const std::string& command, const std::string& input = {});

void WriteFile(const std::string& path, const std::string& content);

}  // namespace ms::test
