#include "base/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cstdio>

#include "base/utf8.h"

namespace ms::log {

namespace {

// The innermost FieldScope open on this thread (a stack through outer_).
thread_local const FieldScope* current_scope = nullptr;

// %& in the JSON pattern: the fields as `,"key":"value"`.
class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    for (const Field* f : CurrentFields()) {
      const std::string text = ",\"" + JsonEscape(f->key) + "\":\"" + JsonEscape(f->value) + "\"";
      dest.append(text.data(), text.data() + text.size());
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonFieldsFlag>(); }
};

// %& in the text pattern: the fields as ` key=value`, the value quoted (Go's
// %q style, as klog's text format) when it is empty or holds a space, a quote
// or a control character.
class TextFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    for (const Field* f : CurrentFields()) {
      const bool quote = f->value.empty() || f->value.find_first_of(" \"=\\") != std::string::npos ||
                         std::any_of(f->value.begin(), f->value.end(), [](char c) { return c >= 0 && c < 0x20; });
      // Appended piece by piece: no temporary string (and no
      // `"literal" + std::string&&`, which GCC 12 at -O3 warns about falsely:
      // -Wrestrict, GCC bug 105651).
      const auto put = [&dest](std::string_view s) { dest.append(s.data(), s.data() + s.size()); };
      put(" ");
      put(f->key);
      put("=");
      if (quote) {
        put("\"");
        put(JsonEscape(f->value));
        put("\"");
      } else {
        put(f->value);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TextFieldsFlag>(); }
};

// %* in the JSON pattern: the message, JSON-escaped.
class EscapedMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto escaped = JsonEscape(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessageFlag>(); }
};

}  // namespace

std::optional<Format> ParseFormat(const std::string& s) {
  if (s == "json") return Format::kJson;
  if (s == "text") return Format::kText;
  return std::nullopt;
}

std::optional<spdlog::level::level_enum> ParseLevel(const std::string& s) {
  using spdlog::level::level_enum;
  if (s == "trace") return level_enum::trace;
  if (s == "debug") return level_enum::debug;
  if (s == "info") return level_enum::info;
  if (s == "warn" || s == "warning") return level_enum::warn;
  if (s == "error") return level_enum::err;
  if (s == "critical") return level_enum::critical;
  if (s == "off") return level_enum::off;
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 4) {
    int v = std::stoi(s);
    if (v == 0) return level_enum::info;
    if (v <= 3) return level_enum::debug;
    return level_enum::trace;
  }
  return std::nullopt;
}

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, Format format, spdlog::level::level_enum level,
                                           spdlog::sink_ptr sink) {
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, sink);
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == Format::kJson) {
    formatter->add_flag<EscapedMessageFlag>('*').add_flag<JsonFieldsFlag>('&').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","msg":"%*"%&})");
  } else {
    formatter->add_flag<TextFieldsFlag>('&').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %n: %v%&");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
  return logger;
}

FieldScope::FieldScope(std::initializer_list<Field> fields) : fields_(fields), outer_(current_scope) {
  current_scope = this;
}

FieldScope::~FieldScope() { current_scope = outer_; }

std::vector<const Field*> CurrentFields() {
  std::vector<const FieldScope*> scopes;
  for (const FieldScope* s = current_scope; s; s = s->outer_) scopes.push_back(s);
  std::vector<const Field*> out;
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    for (const Field& f : (*it)->fields_) out.push_back(&f);
  return out;
}

std::string JsonEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (size_t pos = 0; pos < s.size();) {
    const auto c = static_cast<unsigned char>(s[pos]);
    if (c >= 0x80) {
      // Valid UTF-8 is copied; a byte of an invalid sequence is written as
      // the text \xNN, so the line stays valid JSON and valid UTF-8.
      const size_t n = Utf8SequenceLength(s, pos);
      if (n == 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
        o += buf;
        ++pos;
      } else {
        o.append(s, pos, n);
        pos += n;
      }
      continue;
    }
    ++pos;
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      case '\b':
        o += "\\b";
        break;
      case '\f':
        o += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

}  // namespace ms::log
