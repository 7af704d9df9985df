#include "shared/api/schema_check.h"

#include <valijson/utils/utf8_utils.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <utility>

namespace ms::api {

using nlohmann::json;

namespace {

enum TypeBit : unsigned {
  kString = 1,
  kInteger = 2,
  kNumber = 4,
  kObject = 8,
  kArray = 16,
  kBoolean = 32,
  kNull = 64,
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// ^[^\s\x00-\x1F\x7F]+$ (std::regex's "C" locale: \s is space and \t..\r;
// bytes of 0x80 and above are negative chars, in no class and no range).
bool NoSpaceOrControl(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) return false;
  }
  return true;
}

// ^(100|[1-9]?[0-9])%$
bool Percent(std::string_view s) {
  if (s.size() < 2 || s.back() != '%') return false;
  const std::string_view n = s.substr(0, s.size() - 1);
  if (n == "100") return true;
  if (n.size() == 1) return IsDigit(n[0]);
  return n.size() == 2 && n[0] >= '1' && n[0] <= '9' && IsDigit(n[1]);
}

// (([0-9]+(\.[0-9]*)?)|(\.[0-9]+)) from s[i]: true and i past it, or false.
bool Decimal(std::string_view s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  const bool whole = i > start;
  if (i < s.size() && s[i] == '.') {
    const size_t dot = ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    return whole || i > dot;
  }
  return whole;
}

// The quantity pattern, ^(\+|-)?DECIMAL(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?DECIMAL))?$
// (a decimal is never followed by a digit or '.', so reading it greedily
// decides the match).
bool Quantity(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (!Decimal(s, i)) return false;
  if (i == s.size()) return true;
  const std::string_view rest = s.substr(i);
  constexpr std::string_view kBinary = "KMGTPE", kDecimal = "numkMGTPE";
  if (rest.size() == 2 && rest[1] == 'i' && kBinary.find(rest[0]) != std::string_view::npos) return true;
  if (rest.size() == 1 && kDecimal.find(rest[0]) != std::string_view::npos) return true;
  if (rest[0] != 'e' && rest[0] != 'E') return false;
  size_t j = 1;
  if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) ++j;
  return Decimal(rest, j) && j == rest.size();
}

}  // namespace

PatternMatcher NativePattern(std::string_view pattern) {
  if (pattern == R"(^[^\s\x00-\x1F\x7F]+$)") return &NoSpaceOrControl;
  if (pattern == R"(^(100|[1-9]?[0-9])%$)") return &Percent;
  if (pattern ==
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)")
    return &Quantity;
  return nullptr;
}

struct CompiledSchema::Node {
  enum class Additional { kAny, kNone, kSchema };
  unsigned types = 0;  // TypeBits; 0 when any type goes
  std::optional<std::vector<std::string>> enum_values;
  std::optional<double> minimum, maximum;
  std::optional<uint64_t> min_length, max_length;
  std::optional<size_t> max_items, max_properties;
  PatternMatcher native = nullptr;
  std::shared_ptr<const std::regex> regex;  // a pattern NativePattern does not know
  std::vector<std::string> required;
  bool has_properties = false;                             // a properties or additionalProperties keyword
  std::vector<std::pair<std::string, size_t>> properties;  // sorted by name
  Additional additional = Additional::kAny;
  size_t additional_node = 0, items = 0;
  bool has_items = false;
  std::vector<size_t> any_of;
};

namespace {

using Node = CompiledSchema::Node;

[[noreturn]] void Unsupported(const std::string& what) { throw std::invalid_argument(what); }

unsigned TypeBitOf(const json& name) {
  static const std::pair<const char*, unsigned> kNames[] = {
      {"string", kString}, {"integer", kInteger}, {"number", kNumber}, {"object", kObject},
      {"array", kArray},   {"boolean", kBoolean}, {"null", kNull}};
  if (name.is_string())
    for (const auto& [n, bit] : kNames)
      if (name == n) return bit;
  Unsupported("type " + name.dump());
}

void CompilePattern(const std::string& pattern, Node& node) {
  node.native = NativePattern(pattern);
  if (!node.native) node.regex = std::make_shared<const std::regex>(pattern);
}

class Compiler {
 public:
  explicit Compiler(std::vector<Node>& nodes) : nodes_(nodes) {}

  size_t Compile(const json& schema) {
    if (!schema.is_object()) Unsupported("a schema that is not an object");
    const size_t index = nodes_.size();
    nodes_.emplace_back();
    Node node;
    for (const auto& [key, value] : schema.items()) Keyword(key, value, node);
    nodes_[index] = std::move(node);
    return index;
  }

 private:
  void Keyword(const std::string& key, const json& value, Node& node) {
    if (key == "description" || key == "title" || key.rfind("x-", 0) == 0) return;
    if (key == "type") {
      if (value.is_array())
        for (const auto& t : value) node.types |= TypeBitOf(t);
      else
        node.types = TypeBitOf(value);
    } else if (key == "enum") {
      if (!value.is_array()) Unsupported("enum");
      node.enum_values.emplace();
      for (const auto& v : value) {
        if (!v.is_string()) Unsupported("an enum value that is not a string");
        node.enum_values->push_back(v.get<std::string>());
      }
    } else if (key == "minimum" || key == "maximum") {
      (key == "minimum" ? node.minimum : node.maximum) = value.get<double>();
    } else if (key == "minLength" || key == "maxLength") {
      (key == "minLength" ? node.min_length : node.max_length) = value.get<uint64_t>();
    } else if (key == "maxItems" || key == "maxProperties") {
      (key == "maxItems" ? node.max_items : node.max_properties) = value.get<size_t>();
    } else if (key == "pattern") {
      CompilePattern(value.get<std::string>(), node);
    } else if (key == "required") {
      node.required = value.get<std::vector<std::string>>();
    } else {
      Structure(key, value, node);
    }
  }

  // The keywords holding subschemas.
  void Structure(const std::string& key, const json& value, Node& node) {
    if (key == "properties") {
      node.has_properties = true;
      for (const auto& [name, sub] : value.items()) node.properties.emplace_back(name, Compile(sub));
      std::sort(node.properties.begin(), node.properties.end());
    } else if (key == "additionalProperties") {
      node.has_properties = true;
      if (value.is_boolean()) {
        node.additional = value.get<bool>() ? Node::Additional::kAny : Node::Additional::kNone;
      } else {
        node.additional = Node::Additional::kSchema;
        node.additional_node = Compile(value);
      }
    } else if (key == "items") {
      node.has_items = true;
      node.items = Compile(value);
    } else if (key == "anyOf") {
      for (const auto& sub : value) node.any_of.push_back(Compile(sub));
    } else {
      Unsupported("keyword " + key);
    }
  }

  std::vector<Node>& nodes_;
};

}  // namespace

CompiledSchema::CompiledSchema(std::string_view schema_json) {
  try {
    Compiler(nodes_).Compile(json::parse(schema_json));
  } catch (const std::exception&) {
    nodes_.clear();  // valijson decides, every time
  }
}

CompiledSchema::~CompiledSchema() = default;

// One walk over a document: the path of the value being checked, and the
// paths of the violations found.
class CompiledSchema::Walk {
 public:
  Walk(const std::vector<Node>& nodes, std::vector<std::string>& out, std::string_view skipped)
      : nodes_(nodes), out_(out), skipped_(skipped) {}

  bool Check(size_t index, JsonRef value) {
    const Node& node = nodes_[index];
    bool ok = Scalar(node, value);
    if (value.is_object()) ok = Object(node, value) && ok;
    if (value.is_array() && node.max_items && value.size() > *node.max_items) ok = Fail();
    if (value.is_array() && node.has_items) {
      for (size_t i = 0, n = value.size(); i < n; ++i) {
        segments_.push_back({{}, i, true});
        ok = Check(node.items, value.at(i)) && ok;
        segments_.pop_back();
      }
    }
    if (!node.any_of.empty()) ok = AnyOf(node, value) && ok;
    return ok;
  }

 private:
  struct Segment {
    std::string_view key;
    size_t index;
    bool is_index;
  };

  // valijson's context as SchemaError::path (schema.cc): indices and
  // all-digit keys in brackets, other keys after a dot.
  bool Fail() {
    std::string path;
    for (const Segment& s : segments_) {
      if (s.is_index) {
        path += "[" + std::to_string(s.index) + "]";
      } else if (!s.key.empty() && std::all_of(s.key.begin(), s.key.end(), IsDigit)) {
        path += "[" + std::string(s.key) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += s.key;
      }
    }
    out_.push_back(std::move(path));
    return false;
  }

  // Whether `key`, a member of the object being checked, is the root's
  // member the caller skips.
  bool Skipped(std::string_view key) const {
    return !skipped_.empty() && segments_.empty() && NameEqual(key, skipped_);
  }

  // valijson's asDouble: a float as it is, any integer through int64_t.
  static double AsDouble(JsonRef v) { return v.is_number_float() ? v.number() : static_cast<double>(v.int64()); }

  static bool TypeOk(unsigned types, JsonRef v) {
    if (v.is_string()) return types & kString;
    if (v.is_number_float()) return types & kNumber;
    if (v.is_number()) return types & (kInteger | kNumber);
    if (v.is_object()) return types & kObject;
    if (v.is_array()) return types & kArray;
    if (v.is_boolean()) return types & kBoolean;
    return types & kNull;
  }

  bool Scalar(const Node& node, JsonRef v) {
    bool ok = true;
    if (node.types && !TypeOk(node.types, v)) ok = Fail();
    if (node.enum_values) {
      const auto& values = *node.enum_values;
      if (!v.is_string() || std::find(values.begin(), values.end(), v.str()) == values.end()) ok = Fail();
    }
    if (v.is_number()) {
      const double d = AsDouble(v);
      if (node.minimum && d < *node.minimum) ok = Fail();
      if (node.maximum && d > *node.maximum) ok = Fail();
    }
    if (v.is_string()) {
      const std::string_view s = v.str();
      if (node.min_length || node.max_length) {
        const uint64_t n = valijson::utils::u8_strlen(v.c_str());
        if (node.min_length && n < *node.min_length) ok = Fail();
        if (node.max_length && n > *node.max_length) ok = Fail();
      }
      if (node.native && !node.native(s)) ok = Fail();
      if (node.regex && !std::regex_search(s.begin(), s.end(), *node.regex)) ok = Fail();
    }
    return ok;
  }

  bool Object(const Node& node, JsonRef v) {
    bool ok = true;
    if (node.max_properties && v.size() > *node.max_properties) ok = Fail();
    for (const std::string& name : node.required)
      if (!Skipped(name) && !v.find(name)) ok = Fail();
    if (!node.has_properties) return ok;
    bool unmatched = false;
    // Members come in key order, as the properties are sorted: one merge of
    // the two (a search again only should a member come out of order).
    const auto end = node.properties.end();
    auto p = node.properties.begin();
    std::string_view last;
    v.for_each_member([&](std::string_view key, JsonRef value) {
      if (Skipped(key)) return;
      if (NameLess(key, last))
        p = std::lower_bound(node.properties.begin(), end, key,
                             [](const auto& prop, std::string_view k) { return NameLess(prop.first, k); });
      last = key;
      while (p != end && NameLess(p->first, key)) ++p;
      segments_.push_back({key, 0, false});
      if (p != end && NameEqual(p->first, key)) {
        ok = Check(p->second, value) && ok;
      } else if (node.additional == Node::Additional::kSchema) {
        if (!Check(node.additional_node, value)) {
          segments_.pop_back();
          ok = Fail();  // "Failed to validate against additional properties schema", at the object
          return;
        }
      } else if (node.additional == Node::Additional::kNone) {
        unmatched = true;
      }
      segments_.pop_back();
    });
    if (unmatched) ok = Fail();
    return ok;
  }

  // Passes when one subschema does; the paths of the failed ones are kept
  // only when none does (as valijson reports them), with the value's own.
  bool AnyOf(const Node& node, JsonRef v) {
    const size_t mark = out_.size();
    for (size_t sub : node.any_of) {
      if (Check(sub, v)) {
        out_.resize(mark);
        return true;
      }
    }
    return Fail();
  }

  const std::vector<Node>& nodes_;
  std::vector<std::string>& out_;
  const std::string_view skipped_;
  std::vector<Segment> segments_;
};

std::vector<std::string> CompiledSchema::ViolationPaths(JsonRef document, std::string_view skipped) const {
  std::vector<std::string> out;
  Walk(nodes_, out, skipped).Check(0, document);
  return out;
}

}  // namespace ms::api
