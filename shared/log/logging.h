// Logging through spdlog: `--log-format json` writes one JSON object a line
// ({"ts","level","logger","msg"} with the message JSON-escaped, then the
// line's fields as keys of their own), `text` a human-readable line (the
// fields as key=value after the message). Loggers are created here and passed
// to the code that logs; nothing relies on spdlog's global default logger.
//
// Every line is one line and bounded, whatever a client put in it, at every
// level and in both formats: the message and each field value are escaped
// (JSON's escapes; in text, the message's backslashes and control characters
// as \\, \n, \u001b... and a field value with a space, quote, '=', backslash,
// control character or invalid UTF-8 quoted, as klog's text format quotes
// it), and cut at kMaxMessageBytes and kMaxFieldBytes of escaped text with a
// marker saying how many bytes of the original were left out
// ("...[cut 31457012 bytes]"). So a line is at most about 4 KiB plus 1 KiB a
// field, and a review's uid holding a newline cannot forge a line.
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

// The most bytes of a line's message, and of each field's value, as written
// (escaped), before the cut marker.
inline constexpr size_t kMaxMessageBytes = 4096;
inline constexpr size_t kMaxFieldBytes = 1024;

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

// How a piece of a line is escaped: kJson as JsonEscape; kText as a text
// message is (backslashes and control characters escaped as in JSON, quotes
// kept, invalid UTF-8 as \xNN).
enum class Escape { kJson, kText };
// `s` escaped, at most `limit` bytes of it, then "...[cut N bytes]" when the
// rest (N bytes of `s`) did not fit, appended to `out`.
void AppendEscaped(std::string& out, std::string_view s, Escape mode, size_t limit);

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
