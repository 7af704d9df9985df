#include "controller/kube/api_json.h"

#include "shared/text/json_number.h"

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <utility>

namespace ms::kube {

using nlohmann::json;

namespace {

// Where a container is, as far as leaving things out needs to know: an API
// object (the answer itself, the object of a watch event, an item of a
// list), the items of a list, an object's metadata, its annotations.
enum class Node { kObject, kItems, kMetadata, kAnnotations, kOther };

// RapidJSON's SAX events into nlohmann's tree; a value to leave out is read
// and dropped without being built.
class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  TreeBuilder(json& root, const KeptAnnotations* annotations) : root_(root), annotations_(annotations) {}

  bool Null() { return Scalar(json(nullptr)); }
  bool Bool(bool b) { return Scalar(json(b)); }
  // Numbers come as their text (kParseNumbersAsStringsFlag) and are typed as
  // nlohmann's parser types them (shared/text/json_number.h says why).
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (skipping()) return Skipped();
    auto v = text::JsonNumber(std::string_view(s, n));
    return v && Scalar(std::move(*v));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return skipping() ? Skipped() : Scalar(json(std::string(s, n)));
  }
  bool StartObject() { return Start(json::object()); }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool StartArray() { return Start(json::array()); }
  bool EndArray(rapidjson::SizeType) { return End(); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_depth_ > 0) return true;
    const std::string_view key(s, n);
    const Frame& top = stack_.back();
    next_ = Node::kOther;
    switch (top.node) {
      case Node::kObject:
        if (key == "metadata") next_ = Node::kMetadata;
        // The answer itself may be a list or a watch event.
        if (stack_.size() == 1 && key == "items") next_ = Node::kItems;
        if (stack_.size() == 1 && key == "object") next_ = Node::kObject;
        break;
      case Node::kMetadata:
        skip_next_ = key == "managedFields";
        if (key == "annotations" && annotations_ != nullptr) next_ = Node::kAnnotations;
        break;
      case Node::kAnnotations:
        skip_next_ = std::find(annotations_->begin(), annotations_->end(), key) == annotations_->end();
        break;
      case Node::kItems:
      case Node::kOther:
        break;
    }
    // Duplicate keys: the last one wins, as in nlohmann's parser.
    if (!skip_next_) slot_ = &(*top.value)[std::string(key)];
    return true;
  }

 private:
  struct Frame {
    json* value;
    Node node;
  };

  bool skipping() const { return skip_depth_ > 0 || skip_next_; }
  bool Skipped() {
    if (skip_depth_ == 0) skip_next_ = false;
    return true;
  }

  // Puts `v` where it goes: the slot of the last key, the end of an array,
  // or the root.
  json* Place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *stack_.back().value;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  bool Scalar(json&& v) {
    if (skipping()) return Skipped();
    Place(std::move(v));
    return true;
  }

  bool Start(json&& container) {
    if (skip_depth_ > 0 || skip_next_) {
      skip_next_ = false;
      ++skip_depth_;
      return true;
    }
    Node node = next_;
    if (stack_.empty()) {
      node = Node::kObject;
    } else if (stack_.back().value->is_array()) {
      node = stack_.back().node == Node::kItems ? Node::kObject : Node::kOther;
    }
    stack_.push_back({Place(std::move(container)), node});
    next_ = Node::kOther;
    return true;
  }

  bool End() {
    if (skip_depth_ > 0) {
      --skip_depth_;
    } else {
      stack_.pop_back();
    }
    return true;
  }

  json& root_;
  const KeptAnnotations* const annotations_;
  std::vector<Frame> stack_;
  json* slot_ = nullptr;
  Node next_ = Node::kOther;
  bool skip_next_ = false;
  int skip_depth_ = 0;
};

// A \u escape of a UTF-16 surrogate: RapidJSON 1.1 takes a lone low one
// where nlohmann refuses it; such texts (Go's encoder writes UTF-8, not
// escapes) are left to nlohmann.
bool HasSurrogateEscape(std::string_view text) {
  for (size_t i = text.find("\\u"); i != std::string_view::npos; i = text.find("\\u", i + 1)) {
    if (i + 3 < text.size() && (text[i + 2] == 'd' || text[i + 2] == 'D')) {
      const char c = text[i + 3];
      if ((c >= '8' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) return true;
    }
  }
  return false;
}

// nlohmann's parser, leaving out managedFields only.
json ParseWithNlohmann(std::string_view text) {
  static const json::parser_callback_t kDropManagedFields = [](int, json::parse_event_t event, json& parsed) {
    return !(event == json::parse_event_t::key && parsed.is_string() &&
             parsed.get_ref<const std::string&>() == "managedFields");
  };
  return json::parse(text, kDropManagedFields, /*allow_exceptions=*/false);
}

}  // namespace

json ParseApiJson(std::string_view text, const KeptAnnotations* annotations) {
  if (!HasSurrogateEscape(text)) {
    json out;
    TreeBuilder builder(out, annotations);
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::Reader reader;
    constexpr unsigned kFlags =
        rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseValidateEncodingFlag;
    if (!reader.Parse<kFlags>(stream, builder).IsError()) return out;
  }
  return ParseWithNlohmann(text);
}

}  // namespace ms::kube
