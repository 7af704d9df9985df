// Kubernetes-style command-line flags: --name=value or --name value,
// booleans as --name / --name=false, -v as a shorthand, --help.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ms::flags {

class FlagSet {
 public:
  FlagSet(std::string program, std::string description);

  void String(const std::string& name, std::string* target, const std::string& help);
  void Int(const std::string& name, int* target, const std::string& help);
  void Double(const std::string& name, double* target, const std::string& help);
  void Bool(const std::string& name, bool* target, const std::string& help);
  // Go-style durations: 300ms, 15s, 5m, 1h, 1m30s.
  void Duration(const std::string& name, std::chrono::milliseconds* target, const std::string& help);
  // A repeatable flag: each occurrence appends its value to `target`.
  void Repeated(const std::string& name, std::vector<std::string>* target, const std::string& help);
  // A single-dash alias for a flag, e.g. Alias("v", "log-level").
  void Alias(const std::string& shorthand, const std::string& name);
  // A check run each time the flag is set, after its value was parsed into
  // its target: returns "" or the error to report (e.g. "--concurrency must
  // be at least 1").
  void Validate(const std::string& name, std::function<std::string()> check);
  // A check of a combination of flags, run once every argument is parsed
  // (not after --help or --version): returns "" or the error to report.
  void ValidateAll(std::function<std::string()> check);
  // Adds --version, which prints `text` (e.g. version::VersionText()) to `out`
  // in ParseCommandLine and ends the program with 0, like --help.
  void Version(std::string text);

  // Returns "" on success, else the error. `help_requested()` after --help/-h.
  std::string Parse(int argc, const char* const* argv);
  // The same, for arguments without the program name.
  std::string Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_; }
  bool version_requested() const { return version_requested_; }
  std::string Usage() const;
  // What main() does with its command line: parses argv; on an error prints
  // "Error: ..." with a usage hint to `err` and returns 2; after --help prints
  // the usage to `out` and returns 0; else returns nothing (go on).
  std::optional<int> ParseCommandLine(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

 private:
  struct Flag {
    std::string help;
    std::string default_value;
    bool is_bool = false;
    std::function<std::string(const std::string&)> set;  // returns error or ""
    std::function<std::string()> check;                  // optional
    bool repeated = false;
  };
  void Add(const std::string& name, const std::string& help, std::string default_value, bool is_bool,
           std::function<std::string(const std::string&)> set);
  std::string program_, description_;
  std::map<std::string, Flag> flags_;
  std::map<std::string, std::string> aliases_;
  std::vector<std::function<std::string()>> combination_checks_;
  bool help_ = false;
  std::string version_text_;  // empty: no --version
  bool version_requested_ = false;
};

// Parses a Go-style duration; false on error.
bool ParseDuration(const std::string& s, std::chrono::milliseconds* out);
std::string FormatDuration(std::chrono::milliseconds d);

// ":8080" -> {"0.0.0.0", 8080}; "127.0.0.1:9090"; "0" or "" disables (port -1).
struct HostPort {
  std::string host;
  int port = -1;
};
bool ParseBindAddress(const std::string& s, HostPort* out);

// The flags both programs have (design.md §4): where /metrics and the probes
// listen, and how the process logs. A program's flag struct derives from it.
struct CommonFlags {
  std::string metrics_bind_address = ":8080";
  std::string health_probe_bind_address = ":8081";
  std::string log_format = "json";
  std::string log_level = "info";

  // Their meaning, once parsed by a FlagSet with DefineCommonFlags (which
  // rejects values these could not apply).
  HostPort MetricsAddress() const;
  HostPort ProbeAddress() const;
  std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name) const;
};

// Defines --metrics-bind-address, --health-probe-bind-address, --log-format
// and -v/--log-level over `f`, with their help and checks.
void DefineCommonFlags(FlagSet& fs, CommonFlags& f);

}  // namespace ms::flags
