#include "shared/log/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cstdio>

#include "shared/text/utf8.h"

namespace ms::log {

namespace {

// The innermost FieldScope open on this thread (a stack through outer_).
thread_local const FieldScope* current_scope = nullptr;

// The bytes of a piece of a line, as spdlog's buffer takes them.
void Put(spdlog::memory_buf_t& dest, std::string_view s) { dest.append(s.data(), s.data() + s.size()); }

// A field value of the text format is quoted (Go's %q style, as klog's text
// format) when it is empty or holds a space, a quote, '=', a backslash, a
// control character or invalid UTF-8.
bool NeedsQuotes(std::string_view v) {
  return v.empty() || v.find_first_of(" \"=\\") != std::string_view::npos ||
         std::any_of(v.begin(), v.end(), [](unsigned char c) { return c < 0x20 || c == 0x7F; }) ||
         !text::IsValidUtf8(v);
}

// %& in the JSON pattern: the fields as `,"key":"value"`.
class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    for (const Field* f : CurrentFields()) {
      std::string text = ",\"";
      AppendEscaped(text, f->key, Escape::kJson, kMaxFieldBytes);
      text += "\":\"";
      AppendEscaped(text, f->value, Escape::kJson, kMaxFieldBytes);
      text += '"';
      Put(dest, text);
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonFieldsFlag>(); }
};

// %& in the text pattern: the fields as ` key=value`, the value quoted and
// escaped when NeedsQuotes says so.
class TextFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    for (const Field* f : CurrentFields()) {
      std::string text = " ";
      AppendEscaped(text, f->key, Escape::kText, kMaxFieldBytes);
      text += '=';
      if (NeedsQuotes(f->value)) {
        text += '"';
        AppendEscaped(text, f->value, Escape::kJson, kMaxFieldBytes);
        text += '"';
      } else {
        AppendEscaped(text, f->value, Escape::kText, kMaxFieldBytes);
      }
      Put(dest, text);
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TextFieldsFlag>(); }
};

// %* in both patterns: the message, escaped for the format and cut at
// kMaxMessageBytes.
class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit MessageFlag(Escape mode) : mode_(mode) {}
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string text;
    AppendEscaped(text, std::string_view(msg.payload.data(), msg.payload.size()), mode_, kMaxMessageBytes);
    Put(dest, text);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<MessageFlag>(mode_); }

 private:
  Escape mode_;
};

// One character of `s` at `pos` (a byte, or a UTF-8 sequence) as `mode`
// writes it, into `piece`; returns how many bytes of `s` it took.
size_t EscapeOne(std::string_view s, size_t pos, Escape mode, std::string& piece) {
  piece.clear();
  const auto c = static_cast<unsigned char>(s[pos]);
  char buf[8];
  if (c >= 0x80) {
    // Valid UTF-8 is copied; a byte of an invalid sequence is written as
    // the text \xNN (in JSON, its backslash escaped), so the line stays
    // valid JSON and valid UTF-8.
    const size_t n = text::Utf8SequenceLength(s, pos);
    if (n > 0) {
      piece.append(s, pos, n);
      return n;
    }
    std::snprintf(buf, sizeof buf, mode == Escape::kJson ? "\\\\x%02x" : "\\x%02x", c);
    piece = buf;
    return 1;
  }
  switch (c) {
    case '"':
      piece = mode == Escape::kJson ? "\\\"" : "\"";
      break;
    case '\\':
      piece = "\\\\";
      break;
    case '\n':
      piece = "\\n";
      break;
    case '\r':
      piece = "\\r";
      break;
    case '\t':
      piece = "\\t";
      break;
    case '\b':
      piece = "\\b";
      break;
    case '\f':
      piece = "\\f";
      break;
    default:
      if (c < 0x20 || (c == 0x7F && mode == Escape::kText)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        piece = buf;
      } else {
        piece = static_cast<char>(c);
      }
  }
  return 1;
}

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
    formatter->add_flag<MessageFlag>('*', Escape::kJson)
        .add_flag<JsonFieldsFlag>('&')
        .set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","msg":"%*"%&})");
  } else {
    formatter->add_flag<MessageFlag>('*', Escape::kText)
        .add_flag<TextFieldsFlag>('&')
        .set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %n: %*%&");
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
  AppendEscaped(o, s, Escape::kJson, std::string::npos);
  return o;
}

void AppendEscaped(std::string& out, std::string_view s, Escape mode, size_t limit) {
  const size_t start = out.size();
  out.reserve(start + std::min(s.size(), limit) + 8);
  std::string piece;
  for (size_t pos = 0; pos < s.size();) {
    const size_t took = EscapeOne(s, pos, mode, piece);
    if (out.size() - start + piece.size() > limit) {
      out += "...[cut " + std::to_string(s.size() - pos) + " bytes]";
      return;
    }
    out += piece;
    pos += took;
  }
}

}  // namespace ms::log
