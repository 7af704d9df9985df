#include "webhook/validate/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include "base/utf8.h"
#include "webhook/admission/review_parser.h"

namespace ms::validate {

using nlohmann::json;

namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// A value from a YAML source that JSON cannot hold, or a budget exceeded:
// reported like a syntax error, with the position.
YAML::ParserException Fail(const YAML::Mark& mark, const std::string& what) { return {mark, what}; }

// Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64): optional sign
// (signed only), then 0x/0o/0b prefixes or a leading 0 for octal, else
// decimal; the whole string must be consumed, no overflow.
std::optional<uint64_t> ParseGoMagnitude(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16, s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8, s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2, s.remove_prefix(2);
    } else {
      base = 8, s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseGoInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) negative = s[0] == '-', s.remove_prefix(1);
  auto m = ParseGoMagnitude(s);
  if (!m) return std::nullopt;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (*m > kMax + 1) return std::nullopt;
    return *m == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(*m);
  }
  if (*m > kMax) return std::nullopt;
  return static_cast<int64_t>(*m);
}

// go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  } else {
    if (!digits()) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// strconv.ParseFloat for the decimal forms that reach it: the whole string,
// finite (an overflow is an error in Go, and the scalar stays a string).
std::optional<double> ParseFloat(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isinf(d) || std::isnan(d)) return std::nullopt;
  return d;
}

// A float as the API server receives it after kubectl's round trip through
// Go's encoding/json: integral values below 1e21 are written without a
// fraction and decoded as int64 when they fit.
json FloatValue(double d, const YAML::Mark& mark, const std::string& text) {
  if (std::isnan(d) || std::isinf(d)) throw Fail(mark, "unsupported value " + text + ": JSON has no NaN or infinity");
  if (std::trunc(d) == d && std::fabs(d) < 9.2233720368547758e18) return static_cast<int64_t>(d);
  return d;
}

json UnsignedValue(uint64_t u) {
  if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(u);
  return static_cast<double>(u);  // the API server decodes numbers beyond int64 as floats
}

enum class Kind { kString, kBool, kInt, kFloat, kNull, kMerge };

struct Resolved {
  Kind kind = Kind::kString;
  json value;
};

// go-yaml v2's resolve() of a plain scalar.
Resolved ResolvePlain(const std::string& in, const YAML::Mark& mark) {
  static const std::map<std::string_view, Resolved> kMap = [] {
    std::map<std::string_view, Resolved> m;
    for (const char* s : {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
      m[s] = {Kind::kBool, true};
    for (const char* s : {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
      m[s] = {Kind::kBool, false};
    for (const char* s : {"", "~", "null", "Null", "NULL"}) m[s] = {Kind::kNull, nullptr};
    for (const char* s :
         {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"})
      m[s] = {Kind::kFloat, json()};  // NaN and infinities: no JSON form
    m["<<"] = {Kind::kMerge, "<<"};
    return m;
  }();
  if (auto it = kMap.find(in); it != kMap.end()) {
    if (it->second.kind == Kind::kFloat) throw Fail(mark, "unsupported value " + in + ": JSON has no NaN or infinity");
    return it->second;
  }
  const char c = in[0];
  if (c == '.') {
    if (auto d = ParseFloat(in)) return {Kind::kFloat, FloatValue(*d, mark, in)};
  } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
    std::string plain;
    plain.reserve(in.size());
    for (char ch : in)
      if (ch != '_') plain += ch;
    if (auto i = ParseGoInt(plain)) return {Kind::kInt, *i};
    if (plain[0] != '+' && plain[0] != '-')
      if (auto u = ParseGoMagnitude(plain)) return {Kind::kInt, UnsignedValue(*u)};
    if (IsYamlStyleFloat(plain))
      if (auto d = ParseFloat(plain)) return {Kind::kFloat, FloatValue(*d, mark, in)};
  }
  return {Kind::kString, in};
}

// A scalar with its tag: "?" plain, "!" quoted or block, else an explicit tag.
Resolved ResolveScalar(const std::string& tag, const std::string& value, const YAML::Mark& mark) {
  if (tag == "?") return ResolvePlain(value, mark);
  if (tag.rfind(kTagPrefix, 0) != 0) return {Kind::kString, value};  // "!" or a tag JSON cannot express
  const std::string_view want = std::string_view(tag).substr(kTagPrefix.size());
  if (want == "str" || want == "binary" || want == "timestamp") return {Kind::kString, value};
  Kind kind;
  if (want == "bool")
    kind = Kind::kBool;
  else if (want == "int")
    kind = Kind::kInt;
  else if (want == "float")
    kind = Kind::kFloat;
  else if (want == "null")
    kind = Kind::kNull;
  else
    return {Kind::kString, value};
  Resolved r = ResolvePlain(value, mark);
  if (r.kind == kind) return r;
  if (kind == Kind::kFloat && r.kind == Kind::kInt) return r;  // an int is a valid !!float (and integral anyway)
  throw Fail(mark, "cannot decode `" + value + "` as !!" + std::string(want));
}

// A map key as sigs.k8s.io/yaml turns it into a JSON object key.
std::string KeyString(const json& key, const YAML::Mark& mark) {
  switch (key.type()) {
    case json::value_t::string:
      return key.get<std::string>();
    case json::value_t::boolean:
      return key.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return key.dump();
    case json::value_t::number_float: {
      std::array<char, 64> buf{};
      auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<float>(key.get<double>()),
                                     std::chars_format::general);
      return ec == std::errc() ? std::string(buf.data(), end) : key.dump();
    }
    case json::value_t::null:
      throw Fail(mark, "unsupported map key: null");
    default:
      throw Fail(mark, "invalid map key: a map key must be a scalar");
  }
}

// Builds one JSON value per document from yaml-cpp's events.
class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(const YamlLimits& limits) : limits_(limits) {}

  // The finished document; resets for the next.
  YamlDocument Take() {
    YamlDocument doc{std::move(root_), first_line_};
    root_ = nullptr;
    first_line_ = 0;
    anchors_.clear();
    return doc;
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 can report empty documents forever at the same place on
    // some malformed text (e.g. "a :&] #\n,"): a document must move on.
    if (documents_ > 0 && mark.pos <= last_start_) throw Fail(mark, "malformed YAML: the parser makes no progress");
    last_start_ = mark.pos;
    ++documents_;
    first_line_ = mark.line + 1;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Put(nullptr, false, anchor, 1, mark); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Resolved r = ResolveScalar(tag, value, mark);
    Put(std::move(r.value), r.kind == Kind::kMerge, anchor, 1, mark);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw Fail(mark, "unknown anchor");
    CountAliasCopy(it->second.second, mark);
    Put(it->second.first, false, 0, it->second.second, mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(json::array(), anchor, mark);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(json::object(), anchor, mark);
  }
  void OnMapEnd() override {
    if (stack_.back().key) throw Fail(stack_.back().mark, "a map key without a value");
    Close();
  }

 private:
  struct Frame {
    json value;  // array or object
    YAML::anchor_t anchor = 0;
    YAML::Mark mark;
    size_t nodes = 1;
    std::optional<std::string> key;  // a map's key waiting for its value
    bool merge = false;              // ... which is `<<`
  };

  // Values copied by aliases (the others are bounded by the text's size).
  void CountAliasCopy(size_t nodes, const YAML::Mark& mark) {
    copied_ += nodes;
    if (copied_ > limits_.max_alias_nodes)
      throw Fail(mark, "aliases expand to more than " + std::to_string(limits_.max_alias_nodes) + " values");
  }

  // The document's line is that of its first value (not of `---`).
  void FirstValueAt(const YAML::Mark& mark) {
    if (stack_.empty()) first_line_ = mark.line + 1;
  }

  void Open(json value, YAML::anchor_t anchor, const YAML::Mark& mark) {
    FirstValueAt(mark);
    if (!stack_.empty() && stack_.back().value.is_object() && !stack_.back().key)
      throw Fail(mark, "invalid map key: a map key must be a scalar");
    stack_.push_back({std::move(value), anchor, mark, 1, std::nullopt, false});
  }

  void Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Deliver(std::move(f.value), f.anchor, f.nodes, f.mark);
  }

  // A scalar or an alias's value: a map's key, or a value.
  void Put(json value, bool merge_key, YAML::anchor_t anchor, size_t nodes, const YAML::Mark& mark) {
    FirstValueAt(mark);
    if (!stack_.empty() && stack_.back().value.is_object() && !stack_.back().key) {
      Frame& map = stack_.back();
      map.merge = merge_key;
      map.key = merge_key ? "<<" : KeyString(value, mark);
      if (anchor) anchors_[anchor] = {std::move(value), 1};
      return;
    }
    Deliver(std::move(value), anchor, nodes, mark);
  }

  // A finished value to its parent (or as the document).
  void Deliver(json value, YAML::anchor_t anchor, size_t nodes, const YAML::Mark& mark) {
    if (anchor) anchors_[anchor] = {value, nodes};
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& parent = stack_.back();
    parent.nodes += nodes;
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
      return;
    }
    if (parent.merge) {  // `<<: map` or `<<: [map, ...]` (earlier maps take precedence)
      parent.merge = false;
      parent.key.reset();
      if (value.is_object()) {
        for (auto& [k, v] : value.items()) parent.value[k] = v;
      } else if (value.is_array() &&
                 std::all_of(value.begin(), value.end(), [](const json& m) { return m.is_object(); })) {
        for (auto m = value.rbegin(); m != value.rend(); ++m)
          for (auto& [k, v] : m->items()) parent.value[k] = v;
      } else {
        throw Fail(mark, "map merge requires map or sequence of maps as the value");
      }
      return;
    }
    parent.value[*parent.key] = std::move(value);  // the last of duplicate keys wins
    parent.key.reset();
  }

  const YamlLimits& limits_;
  std::vector<Frame> stack_;
  json root_;
  int first_line_ = 0;
  size_t copied_ = 0;
  size_t documents_ = 0;
  int last_start_ = -1;
  std::map<YAML::anchor_t, std::pair<json, size_t>> anchors_;
};

// Printable UTF-8 (YAML's c-printable: no C0 controls but tab, LF and CR, no
// DEL, no C1 controls but NEL), as go-yaml requires.
std::optional<std::string> CheckText(std::string_view text) {
  if (!IsValidUtf8(text)) return "the text is not valid UTF-8";
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F && static_cast<unsigned char>(text[i + 1]) != 0x85;
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F || c1)
      return "line " + std::to_string(line) + ": control characters are not allowed";
    if (c == '\n') ++line;
  }
  return std::nullopt;
}

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
      out += pad + Scalar(it.key()) + ":";
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

YamlReadResult ReadYaml(std::string_view text, const YamlLimits& limits) {
  YamlReadResult result;
  if (auto bad = CheckText(text)) {
    result.error = *bad;
    return result;
  }
  std::istringstream in{std::string(text)};
  Builder builder(limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) result.documents.push_back(builder.Take());
  } catch (const YAML::Exception& e) {
    result.error = e.mark.is_null() ? e.msg
                                    : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                          std::to_string(e.mark.column + 1) + ": " + e.msg;
  } catch (const std::exception& e) {  // e.g. bad_alloc from a huge scalar
    result.error = std::string("cannot read: ") + e.what();
  }
  return result;
}

std::string ToYaml(const json& value) {
  if (!value.is_structured() || value.empty())
    return (value.is_structured() ? std::string(value.is_object() ? "{}" : "[]") : Scalar(value)) + "\n";
  std::string out;
  Emit(value, 0, out);
  return out;
}

}  // namespace ms::validate
