// Logging through spdlog: `--log-format json` writes one JSON object a line
// ({"ts","level","logger","msg"} with the message JSON-escaped), `text` a
// human-readable line. Loggers are created here and passed to the code that
// logs; nothing relies on spdlog's global default logger.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>

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

}  // namespace ms::log
