// Logging through spdlog: `--log-format json` writes one JSON object a line
// ({"ts","level","logger","msg"} with the message JSON-escaped, then the
// line's fields as keys of their own), `text` a human-readable line (the
// fields as key=value after the message). Loggers are created here and passed
// to the code that logs; nothing relies on spdlog's global default logger.
//
// Fields: a FieldScope gives every line logged on its thread while it lives
// its fields (the object being reconciled, an admission request's uid...):
//
//   log::FieldScope scope({{"controller", "modelservice"}, {"namespace", ns}, {"name", name}});
//   logger->error("Reconciler error");  // {"msg":"Reconciler error","controller":...,"namespace":...}
//
// Scopes nest (inner fields follow outer ones). spdlog 1.10 (Debian's) has
// no mapped diagnostic context (1.13's spdlog::mdc is the same idea): the
// scope is a thread-local stack, read by the formatter, which runs on the
// logging thread (the loggers made here are synchronous).
#pragma once

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ms::log {

enum class Format { kJson, kText };

std::optional<Format> ParseFormat(const std::string& s);
// Accepts trace|debug|info|warn|warning|error|critical|off, or a klog-style
// verbosity number for -v (0 = info, 1..3 = debug, >=4 = trace).
std::optional<spdlog::level::level_enum> ParseLevel(const std::string& s);

// A logger writing to stderr (or to `sink` when given, for tests).
std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, Format format, spdlog::level::level_enum level,
                                           spdlog::sink_ptr sink = nullptr);

// JSON string escaping (RFC 8259), shared with the formatter and tests. The
// result is valid UTF-8: a byte of an invalid sequence becomes the text \xNN.
std::string JsonEscape(std::string_view s);

struct Field {
  std::string key;  // a JSON key of the line: not ts, level, logger or msg
  std::string value;
};

// The fields of the scopes open on this thread, outermost first.
std::vector<const Field*> CurrentFields();

class FieldScope {
 public:
  explicit FieldScope(std::initializer_list<Field> fields);
  ~FieldScope();
  FieldScope(const FieldScope&) = delete;
  FieldScope& operator=(const FieldScope&) = delete;

 private:
  friend std::vector<const Field*> CurrentFields();
  std::vector<Field> fields_;
  const FieldScope* outer_;
};

}  // namespace ms::log
