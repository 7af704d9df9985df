#include "webhook/validate/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "shared/text/utf8.h"
#include "webhook/validate/yaml_scalar.h"

namespace ms::validate {

using nlohmann::json;

namespace {

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
    // yaml-cpp writes a \x80..\xFF escape of a double-quoted scalar as that
    // one byte, not as the code point's UTF-8: refused rather than read wrong.
    if (!text::IsValidUtf8(value)) throw Fail(mark, "a scalar that is not valid UTF-8");
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
  if (!text::IsValidUtf8(text)) return "the text is not valid UTF-8";
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

}  // namespace ms::validate
