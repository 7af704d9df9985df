#include "webhook/admission/review_parser.h"

#include "base/json_number.h"

// RapidJSON's SSE2 scanning of whitespace and strings (every x86-64 has
// SSE2). It loads aligned 16-byte blocks, so it may read up to 15 bytes past
// the text's terminating NUL: the text is parsed from a copy with that much
// padding (ParseReviewFast). Only this file includes RapidJSON.
#if defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif
#include <rapidjson/reader.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace ms::webhook {

using nlohmann::json;

namespace {

// True when the text has a \\u escape of a UTF-16 surrogate (\\uD800 to
// \\uDFFF). RapidJSON 1.1 encodes a lone low surrogate where nlohmann
// reports an error, so such bodies (rare: Go's encoder writes UTF-8, not
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

// True when the text has a byte below 0x20 other than tab, LF and CR: never
// valid JSON, but RapidJSON 1.1's SSE2 string scan lets 0x1A..0x1F through
// inside strings (it compares with 0x19), so such bodies are left to
// nlohmann, which refuses them (the review fuzz targets found it).
bool HasControlByte(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
}

// Where a container sits in the review, as far as skipping needs to know.
enum class Node { kRoot, kRequest, kObject, kOldObject, kMetadata, kOther };

bool OneOf(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (key == n) return true;
  return false;
}

// Whether the member `key` of a container at `node` is read by anyone (the
// list in review_parser.h).
bool Kept(Node node, std::string_view key) {
  switch (node) {
    case Node::kRoot:
      return OneOf(key, {"apiVersion", "kind", "request"});
    case Node::kRequest:
      return OneOf(key,
                   {"uid", "kind", "resource", "subResource", "name", "namespace", "operation", "object", "oldObject"});
    case Node::kObject:
      return OneOf(key, {"apiVersion", "kind", "metadata", "spec", "status"});
    case Node::kOldObject:
      return key == "spec";  // ratcheting compares the specs only
    case Node::kMetadata:
      return key == "name" || key == "generateName";
    case Node::kOther:
      return true;
  }
  return true;
}

class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  TreeBuilder(json& root, int max_depth) : root_(root), max_depth_(max_depth) {}
  bool too_deep() const { return too_deep_; }

  bool Null() { return Scalar(nullptr); }
  bool Bool(bool b) { return Scalar(b); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (skipping()) return Skip();
    auto v = JsonNumber(std::string_view(s, n));
    if (!v) return false;
    return Scalar(std::move(*v));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (skipping()) return Skip();
    return Scalar(std::string(s, n));
  }
  bool StartObject() { return Start(json::object()); }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool StartArray() { return Start(json::array()); }
  bool EndArray(rapidjson::SizeType) { return End(); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view key(s, n);
    if (skip_depth_ > 0) return true;
    Frame& top = stack_.back();
    next_node_ = Node::kOther;
    if (top.node == Node::kRoot && key == "request") next_node_ = Node::kRequest;
    if (top.node == Node::kRequest && key == "object") next_node_ = Node::kObject;
    if (top.node == Node::kRequest && key == "oldObject") next_node_ = Node::kOldObject;
    if (top.node == Node::kObject && key == "metadata") next_node_ = Node::kMetadata;
    skip_next_ = !Kept(top.node, key);
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
  // A scalar inside (or as) a skipped value.
  bool Skip() {
    skip_next_ = false;
    return true;
  }

  // Where the next value goes: the slot made by Key, the next array element,
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

  template <typename T>
  bool Scalar(T&& v) {
    if (skipping()) return Skip();
    Place(json(std::forward<T>(v)));
    return true;
  }

  bool Start(json&& container) {
    if (static_cast<int>(stack_.size()) + skip_depth_ >= max_depth_) {
      too_deep_ = true;  // stops RapidJSON's recursion here
      return false;
    }
    if (skip_depth_ > 0) {
      ++skip_depth_;
      return true;
    }
    if (skip_next_) {
      skip_next_ = false;
      skip_depth_ = 1;
      return true;
    }
    const bool in_array = !stack_.empty() && stack_.back().value->is_array();
    const Node node = stack_.empty() ? Node::kRoot : (in_array ? Node::kOther : next_node_);
    stack_.push_back({Place(std::move(container)), node});
    return true;
  }

  bool End() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  json& root_;
  const int max_depth_;
  bool too_deep_ = false;
  std::vector<Frame> stack_;
  json* slot_ = nullptr;
  Node next_node_ = Node::kOther;
  bool skip_next_ = false;
  int skip_depth_ = 0;
};

}  // namespace

FastParse ParseReviewFast(std::string_view body, int max_depth) {
  FastParse result;
  // Checking the encoding of the whole body once is much faster than
  // RapidJSON's per-character check in strings (outside strings, JSON allows
  // ASCII only, which RapidJSON's grammar enforces).
  if (!IsValidUtf8(body) || HasSurrogateEscape(body) || HasControlByte(body)) return result;
  TreeBuilder builder(result.value, max_depth);
  // NUL-terminated, and padded for the SIMD loads; a NUL byte inside the
  // body ends RapidJSON's text there, so such a body falls back (below). A
  // usual review (a few kB) is copied to the stack, a larger one to the heap.
  constexpr size_t kPadding = 16, kOnStack = 8192;
  std::array<char, kOnStack> small;
  std::vector<char> large;
  char* text = small.data();
  if (body.size() + kPadding > kOnStack) {
    large.resize(body.size() + kPadding);
    text = large.data();
  }
  std::memcpy(text, body.data(), body.size());
  std::memset(text + body.size(), 0, kPadding);
  rapidjson::StringStream stream(text);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag;
  const bool parsed = !reader.Parse<kFlags>(stream, builder).IsError();
  if (builder.too_deep()) {
    result.status = FastParse::kTooDeep;
  } else if (parsed && stream.Tell() == body.size()) {
    // (A NUL byte ends RapidJSON's text before the body's end: such a body
    // falls back, and ServeReview refuses it.)
    result.status = FastParse::kOk;
  }
  if (result.status != FastParse::kOk) result.value = nullptr;
  return result;
}

}  // namespace ms::webhook
