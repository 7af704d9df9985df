#include "shared/flags/flags.h"

#include <charconv>
#include <sstream>

#include "shared/log/logging.h"

namespace ms::flags {

FlagSet::FlagSet(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void FlagSet::Add(const std::string& name, const std::string& help, std::string default_value, bool is_bool,
                  std::function<std::string(const std::string&)> set) {
  flags_[name] = Flag{help, std::move(default_value), is_bool, std::move(set), nullptr, false};
}

void FlagSet::String(const std::string& name, std::string* target, const std::string& help) {
  Add(name, help, *target, false, [target](const std::string& v) {
    *target = v;
    return std::string();
  });
}

void FlagSet::Int(const std::string& name, int* target, const std::string& help) {
  Add(name, help, std::to_string(*target), false, [target, name](const std::string& v) {
    int n = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size())
      return "invalid value \"" + v + "\" for --" + name + ": not an integer";
    *target = n;
    return std::string();
  });
}

void FlagSet::Double(const std::string& name, double* target, const std::string& help) {
  std::ostringstream def;
  def << *target;
  Add(name, help, def.str(), false, [target, name](const std::string& v) {
    try {
      size_t pos = 0;
      double d = std::stod(v, &pos);
      if (pos != v.size()) throw std::invalid_argument(v);
      *target = d;
      return std::string();
    } catch (const std::exception&) {
      return "invalid value \"" + v + "\" for --" + name + ": not a number";
    }
  });
}

void FlagSet::Bool(const std::string& name, bool* target, const std::string& help) {
  Add(name, help, *target ? "true" : "false", true, [target, name](const std::string& v) {
    if (v == "true" || v == "1" || v.empty()) {
      *target = true;
    } else if (v == "false" || v == "0") {
      *target = false;
    } else {
      return "invalid value \"" + v + "\" for --" + name + ": not a boolean";
    }
    return std::string();
  });
}

void FlagSet::Duration(const std::string& name, std::chrono::milliseconds* target, const std::string& help) {
  Add(name, help, FormatDuration(*target), false, [target, name](const std::string& v) {
    if (!ParseDuration(v, target))
      return "invalid value \"" + v + "\" for --" + name + ": not a duration (e.g. 300ms, 15s, 5m)";
    return std::string();
  });
}

void FlagSet::Repeated(const std::string& name, std::vector<std::string>* target, const std::string& help) {
  Add(name, help, "", false, [target](const std::string& v) {
    target->push_back(v);
    return std::string();
  });
  flags_.at(name).repeated = true;
}

void FlagSet::Alias(const std::string& shorthand, const std::string& name) { aliases_[shorthand] = name; }

void FlagSet::ValidateAll(std::function<std::string()> check) { combination_checks_.push_back(std::move(check)); }

void FlagSet::Version(std::string text) { version_text_ = std::move(text); }

void FlagSet::Validate(const std::string& name, std::function<std::string()> check) {
  flags_.at(name).check = std::move(check);
}

std::string FlagSet::Parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv{program_.c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  return Parse(static_cast<int>(argv.size()), argv.data());
}

std::string FlagSet::Parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      return {};
    }
    if (arg == "--version" && !version_text_.empty()) {
      version_requested_ = true;
      return {};
    }
    if (arg.size() < 2 || arg[0] != '-') return "unexpected argument \"" + arg + "\"";
    bool double_dash = arg.rfind("--", 0) == 0;
    std::string body = arg.substr(double_dash ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (auto a = aliases_.find(name); a != aliases_.end()) name = a->second;
    auto it = flags_.find(name);
    if (it == flags_.end()) return "unknown flag: " + arg + " (see --help)";
    if (!has_value && !it->second.is_bool) {
      if (i + 1 >= argc) return "flag needs an argument: --" + name;
      value = argv[++i];
    }
    if (auto err = it->second.set(value); !err.empty()) return err;
    if (it->second.check)
      if (auto err = it->second.check(); !err.empty()) return err;
  }
  for (const auto& check : combination_checks_)
    if (auto err = check(); !err.empty()) return err;
  return {};
}

std::string FlagSet::Usage() const {
  std::ostringstream os;
  os << description_ << "\n\nUsage:\n  " << program_ << " [flags]\n\nFlags:\n";
  for (const auto& [name, f] : flags_) {
    std::string shorthand;
    for (const auto& [s, n] : aliases_)
      if (n == name) shorthand = "-" + s + ", ";
    os << "      " << shorthand << "--" << name;
    if (!f.is_bool) os << " value";
    // Continuation lines of a help text indented like its first line.
    os << "\n            ";
    for (char c : f.help) {
      if (c == '\n')
        os << "\n            ";
      else
        os << c;
    }
    if (!f.default_value.empty() && f.default_value != "false") os << " (default \"" << f.default_value << "\")";
    if (f.repeated) os << " (repeatable)";
    os << "\n";
  }
  os << "  -h, --help\n            help for " << program_ << "\n";
  if (!version_text_.empty())
    os << "      --version\n            print the version, git revision and build date, and exit\n";
  return os.str();
}

bool ParseDuration(const std::string& s, std::chrono::milliseconds* out) {
  if (s.empty()) return false;
  if (s == "0") {
    *out = std::chrono::milliseconds(0);
    return true;
  }
  double total_ms = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (start == i) return false;
    double n = 0;
    try {
      n = std::stod(s.substr(start, i - start));
    } catch (const std::exception&) {
      return false;
    }
    size_t ustart = i;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.') ++i;
    std::string unit = s.substr(ustart, i - ustart);
    if (unit == "ns")
      total_ms += n / 1e6;
    else if (unit == "us" || unit == "\u00b5s")
      total_ms += n / 1e3;
    else if (unit == "ms")
      total_ms += n;
    else if (unit == "s")
      total_ms += n * 1000;
    else if (unit == "m")
      total_ms += n * 60000;
    else if (unit == "h")
      total_ms += n * 3600000;
    else
      return false;
  }
  *out = std::chrono::milliseconds(static_cast<int64_t>(total_ms));
  return true;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  auto s = ms / 1000;
  if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

bool ParseBindAddress(const std::string& s, HostPort* out) {
  if (s.empty() || s == "0") {
    *out = {"", -1};
    return true;
  }
  auto colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  std::string port = s.substr(colon + 1);
  int p = 0;
  auto r = std::from_chars(port.data(), port.data() + port.size(), p);
  if (r.ec != std::errc() || r.ptr != port.data() + port.size() || p < 0 || p > 65535) return false;
  *out = {host, p};
  return true;
}

std::optional<int> FlagSet::ParseCommandLine(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  if (std::string error = Parse(argc, argv); !error.empty()) {
    err << "Error: " << error << "\nRun '" << program_ << " --help' for usage.\n";
    return 2;
  }
  if (help_requested()) {
    out << Usage();
    return 0;
  }
  if (version_requested()) {
    out << version_text_;
    return 0;
  }
  return std::nullopt;
}

HostPort CommonFlags::MetricsAddress() const {
  HostPort hp;
  ParseBindAddress(metrics_bind_address, &hp);
  return hp;
}

HostPort CommonFlags::ProbeAddress() const {
  HostPort hp;
  ParseBindAddress(health_probe_bind_address, &hp);
  return hp;
}

std::shared_ptr<spdlog::logger> CommonFlags::MakeLogger(const std::string& name) const {
  return log::MakeLogger(name, log::ParseFormat(log_format).value_or(log::Format::kJson),
                         log::ParseLevel(log_level).value_or(spdlog::level::info));
}

void DefineCommonFlags(FlagSet& fs, CommonFlags& f) {
  auto address = [](const char* name, const std::string& v) {
    return [name, &v] {
      HostPort hp;
      return ParseBindAddress(v, &hp) && !v.empty()
                 ? std::string()
                 : "invalid address \"" + v + "\" for --" + name + " (e.g. :8080, 127.0.0.1:8080, or 0 to disable)";
    };
  };
  fs.String("metrics-bind-address", &f.metrics_bind_address, "address of /metrics; \"0\" disables it");
  fs.Validate("metrics-bind-address", address("metrics-bind-address", f.metrics_bind_address));
  fs.String("health-probe-bind-address", &f.health_probe_bind_address,
            "address of /healthz and /readyz; \"0\" disables it");
  fs.Validate("health-probe-bind-address", address("health-probe-bind-address", f.health_probe_bind_address));
  fs.String("log-format", &f.log_format, "json or text");
  fs.Validate("log-format", [&f] {
    return log::ParseFormat(f.log_format) ? std::string()
                                          : "invalid --log-format \"" + f.log_format + "\": json or text";
  });
  fs.String("log-level", &f.log_level,
            "trace|debug|info|warn|error|critical|off, or a klog verbosity number (0 = info, 1-3 = debug, 4+ = trace)");
  fs.Alias("v", "log-level");
  // The same parser MakeLogger applies the level with.
  fs.Validate("log-level", [&f] {
    return log::ParseLevel(f.log_level)
               ? std::string()
               : "invalid log level \"" + f.log_level + "\" (a number for -v, or trace|debug|info|warn|error)";
  });
}

}  // namespace ms::flags
