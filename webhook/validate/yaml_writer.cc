#include "webhook/validate/yaml_writer.h"

#include <cctype>
#include <cstdio>
#include <string_view>

#include "webhook/validate/yaml_scalar.h"

namespace ms::validate {

using nlohmann::json;

namespace {

constexpr size_t kMaxImplicitKey = 1000;

// Plain (unquoted) output is safe for strings of these characters that do
// not start with an indicator and that ReadYaml reads back as a string.
bool PlainSafe(const std::string& s) {
  if (s.empty() || s.size() > 256) return false;
  const auto c0 = static_cast<unsigned char>(s[0]);
  if (!std::isalnum(c0) && s[0] != '.' && s[0] != '/' && s[0] != '_') return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && std::string_view("._/-%@+:=").find(ch) == std::string_view::npos) return false;
  }
  if (s.back() == ':') return false;
  // "..." at the start of a line ends a YAML document (fuzz finding).
  if (s.starts_with("...")) return false;
  try {
    return ResolvePlain(s, YAML::Mark()).kind == Kind::kString;
  } catch (const YAML::Exception&) {
    return false;
  }
}

// A YAML double-quoted scalar: escapes for the quote, the backslash and every
// character the reader refuses raw or would read as a line break (C0, DEL,
// C1, U+2028, U+2029); other UTF-8 as it is.
std::string DoubleQuoted(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[++i]));  // U+0080..U+009F
      out += buf;
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Scalar(const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return PlainSafe(s) ? s : DoubleQuoted(s);
  }
  return v.dump();
}

void Emit(const json& v, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string key = Scalar(it.key());
      // YAML limits an implicit key ("key: value") to 1024 characters, and
      // yaml-cpp counts the quotes and the colon: a longer key is written as
      // an explicit one ("? key", then ": value" on the next line).
      if (key.size() < kMaxImplicitKey) {
        out += pad + key + ":";
      } else {
        out += pad + "? " + key + "\n" + pad + ":";
      }
      const json& e = *it;
      if (e.is_structured() && !e.empty()) {
        out += "\n";
        Emit(e, indent + 2, out);
      } else {
        out += " " + (e.is_structured() ? std::string(e.is_object() ? "{}" : "[]") : Scalar(e)) + "\n";
      }
    }
  } else if (v.is_array()) {
    for (const json& e : v) {
      if (e.is_structured() && !e.empty()) {
        // "- " then the first line of the nested block on the same line.
        std::string nested;
        Emit(e, indent + 2, nested);
        out += pad + "- " + nested.substr(static_cast<size_t>(indent) + 2);
      } else {
        out += pad + "- " + (e.is_structured() ? std::string(e.is_object() ? "{}" : "[]") : Scalar(e)) + "\n";
      }
    }
  }
}

}  // namespace

std::string ToYaml(const json& value) {
  if (!value.is_structured() || value.empty())
    return (value.is_structured() ? std::string(value.is_object() ? "{}" : "[]") : Scalar(value)) + "\n";
  std::string out;
  Emit(value, 0, out);
  return out;
}

}  // namespace ms::validate
