// RapidJSON's SSE2 scanning of whitespace and strings (every x86-64 has
// SSE2). It loads aligned 16-byte blocks, so it may read up to 15 bytes past
// the text's terminating NUL: the text is parsed from a copy with that much
// padding (ParseReviewFast). Defined before any header includes RapidJSON;
// this is the one file that parses a rapidjson::StringStream (the SSE2
// functions are specializations for that stream and InsituStringStream).
#if defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif
#include "webhook/admission/review_parser.h"

#include <rapidjson/reader.h>

#include "base/json_number.h"
#include "base/json_ref.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace ms::webhook {

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
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  auto control = [](unsigned char c) { return c < 0x20 && c != '\t' && c != '\n' && c != '\r'; };
  size_t i = 0;
  // Eight bytes at a time: a word with no byte below 0x20 (SWAR: a byte
  // below 0x20 borrows into its top bit; bytes from 0x80 up are masked
  // out by ~w) needs no closer look.
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (((w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL) == 0) continue;
    for (size_t j = i; j < i + 8; ++j)
      if (control(p[j])) return true;
  }
  for (; i < n; ++i)
    if (control(p[i])) return true;
  return false;
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

// Forwards the kept parts of the review to a rapidjson::Document (a SAX
// handler itself), counting what it forwards for EndObject and EndArray.
class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  TreeBuilder(rapidjson::Document& doc, int max_depth) : doc_(doc), max_depth_(max_depth) {}
  bool too_deep() const { return too_deep_; }

  bool Null() {
    if (skipping()) return Skip();
    Count();
    return doc_.Null();
  }
  bool Bool(bool b) {
    if (skipping()) return Skip();
    Count();
    return doc_.Bool(b);
  }
  // Typed by nlohmann's rules (json_number.h): a number RapidJSON would
  // take but nlohmann would not (beyond a double) stops the parse.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (skipping()) return Skip();
    auto v = JsonNumber(std::string_view(s, n));
    if (!v) return false;
    Count();
    if (v->is_number_unsigned()) return doc_.Uint64(v->get<uint64_t>());
    if (v->is_number_integer()) return doc_.Int64(v->get<int64_t>());
    return doc_.Double(v->get<double>());
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (skipping()) return Skip();
    Count();
    return doc_.String(s, n, false);  // in place, in the text FastParse keeps
  }
  bool StartObject() { return Start(/*object=*/true); }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool StartArray() { return Start(/*object=*/false); }
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
    if (skip_next_) return true;
    ++top.count;  // repeated keys are all kept: JsonRef reads the last
    return doc_.Key(s, n, false);
  }

 private:
  struct Frame {
    Node node;
    bool object;
    rapidjson::SizeType count;  // members (keys) or elements forwarded
  };

  bool skipping() const { return skip_depth_ > 0 || skip_next_; }
  // A scalar inside (or as) a skipped value.
  bool Skip() {
    skip_next_ = false;
    return true;
  }
  // A value forwarded into an array counts as an element.
  void Count() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().count;
  }

  bool Start(bool object) {
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
    const bool in_array = !stack_.empty() && !stack_.back().object;
    const Node node = stack_.empty() ? Node::kRoot : (in_array ? Node::kOther : next_node_);
    Count();
    stack_.push_back({node, object, 0});
    return object ? doc_.StartObject() : doc_.StartArray();
  }

  bool End() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    const Frame top = stack_.back();
    stack_.pop_back();
    return top.object ? doc_.EndObject(top.count) : doc_.EndArray(top.count);
  }

  rapidjson::Document& doc_;
  const int max_depth_;
  bool too_deep_ = false;
  std::vector<Frame> stack_;
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
  rapidjson::Document& doc = result.tree->doc;
  TreeBuilder builder(doc, max_depth);
  // NUL-terminated, and padded for the SIMD loads; a NUL byte inside the
  // body ends RapidJSON's text there, so such a body falls back (below).
  // Parsed in place: the tree's strings point into this copy, which the
  // FastParse keeps with the tree.
  FastParse::Pool& pool = *result.tree;
  char* text = pool.small;
  if (body.size() + FastParse::Pool::kPadding > FastParse::Pool::kSmall) {
    pool.large.resize(body.size() + FastParse::Pool::kPadding);
    text = pool.large.data();
  }
  std::memcpy(text, body.data(), body.size());
  std::memset(text + body.size(), 0, FastParse::Pool::kPadding);
  rapidjson::InsituStringStream stream(text);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseInsituFlag;
  bool parsed = false;
  auto generate = [&](rapidjson::Document&) { return parsed = !reader.Parse<kFlags>(stream, builder).IsError(); };
  doc.Populate(generate);
  if (builder.too_deep()) {
    result.status = FastParse::kTooDeep;
  } else if (parsed && stream.Tell() == body.size()) {
    // (A NUL byte ends RapidJSON's text before the body's end: such a body
    // falls back, and ServeReview refuses it.)
    result.status = FastParse::kOk;
    // Members in key order, repeated keys resolved, once: the readers then
    // take it as JsonRef::KeyOrdered (depth bounded by max_depth above).
    SortMembers(doc);
  }
  if (result.status != FastParse::kOk) doc.SetNull();
  return result;
}

nlohmann::json FastParse::Tree() const { return JsonRef(tree->doc).ToJson(); }

}  // namespace ms::webhook
