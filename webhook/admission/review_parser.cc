#include "webhook/admission/review_parser.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "shared/text/json_reader.h"
#include "shared/text/json_ref.h"

namespace ms::admission {

namespace {

// Where a container of a request's object sits, as far as keeping its
// members needs to know.
enum class Node { kObject, kOldObject, kMetadata, kOther };

bool OneOf(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (key == n) return true;
  return false;
}

// Whether the member `key` of a container at `node` is read by anyone (the
// list in review_parser.h).
bool Kept(Node node, std::string_view key) {
  switch (node) {
    case Node::kObject:
      return OneOf(key, {"apiVersion", "kind", "metadata", "spec"});
    case Node::kOldObject:
      return OneOf(key, {"apiVersion", "kind", "spec"});  // what ratcheting compares
    case Node::kMetadata:
      return key == "name" || key == "generateName";
    case Node::kOther:
      return true;
  }
  return true;
}

// Reads the review: its members and the request's typed into `out`, the
// request's object and oldObject built into `doc` (through its SAX
// interface) as members of one object; skips the rest with
// JsonReader::Skip, which checks it without decoding it.
class ReviewReader {
 public:
  ReviewReader(text::JsonReader& in, rapidjson::Document& doc, ParsedReview& out) : in_(in), doc_(doc), out_(out) {}

  // The whole text: one value and nothing after it.
  bool Parse() {
    doc_.StartObject();
    if (!Review() || !in_.AtEnd()) return false;
    doc_.EndObject(trees_);
    return true;
  }

  // After Parse: the request's object and oldObject (its last ones) from the tree.
  void Resolve() {
    if (!out_.request) return;
    for (rapidjson::SizeType i = request_trees_; i < trees_; ++i) {
      const auto& m = doc_.MemberBegin()[i];
      (m.name.GetStringLength() == 6 ? out_.request->object : out_.request->old_object) = text::JsonRef(m.value);
    }
  }

 private:
  using Kind = text::JsonReader::Kind;

  bool Review() {
    if (in_.Peek() != Kind::kObject) return in_.Skip();
    out_.is_object = true;
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextKey(key)) {
      bool read = false;
      if (key == "apiVersion")
        read = OptionalText(out_.api_version);
      else if (key == "kind")
        read = OptionalText(out_.kind);
      else if (key == "request")
        read = Request();
      else
        read = in_.Skip();
      if (!read) return false;
    }
    return in_.ok();
  }

  // A string member's text, or nothing when it is not a string.
  bool OptionalText(std::optional<std::string_view>& out) {
    out.reset();
    if (in_.Peek() != Kind::kString) return in_.Skip();
    return in_.String(out.emplace());
  }
  // A string member's text, or "" when it is not a string.
  bool Text(std::string_view& out) {
    out = {};
    if (in_.Peek() != Kind::kString) return in_.Skip();
    return in_.String(out);
  }

  bool Request() {
    out_.request.reset();
    request_trees_ = trees_;
    if (in_.Peek() != Kind::kObject) return in_.Skip();
    AdmissionRequest& r = out_.request.emplace();
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextKey(key)) {
      bool read = false;
      switch (key.size()) {  // the length tells most of the names apart
        case 3:
          read = key == "uid" ? Text(r.uid) : in_.Skip();
          break;
        case 4:
          read = key == "kind" ? GroupKind(r.kind) : key == "name" ? Text(r.name) : in_.Skip();
          break;
        case 6:
          read = key == "object" ? Tree(key, Node::kObject) : in_.Skip();
          break;
        case 8:
          read = key == "resource" ? GroupResource(r.resource) : in_.Skip();
          break;
        case 9:
          read = key == "namespace"   ? Text(r.namespace_)
                 : key == "operation" ? Text(r.operation)
                 : key == "oldObject" ? Tree(key, Node::kOldObject)
                                      : in_.Skip();
          break;
        case 11:
          read = key == "subResource" ? Text(r.sub_resource) : in_.Skip();
          break;
        default:
          read = in_.Skip();
          break;
      }
      if (!read) return false;
    }
    return in_.ok();
  }

  bool GroupKind(std::optional<AdmissionRequest::GroupKind>& out) {
    out.reset();
    if (in_.Peek() != Kind::kObject) return in_.Skip();
    auto& gk = out.emplace();
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextKey(key)) {
      if (!(key == "group" ? Text(gk.group) : key == "kind" ? Text(gk.kind) : in_.Skip())) return false;
    }
    return in_.ok();
  }

  bool GroupResource(std::optional<AdmissionRequest::GroupResource>& out) {
    out.reset();
    if (in_.Peek() != Kind::kObject) return in_.Skip();
    auto& gr = out.emplace();
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextKey(key)) {
      if (!(key == "group" ? Text(gr.group) : key == "resource" ? Text(gr.resource) : in_.Skip())) return false;
    }
    return in_.ok();
  }

  // request.object or request.oldObject, into the tree.
  bool Tree(std::string_view key, Node node) {
    ++trees_;
    return doc_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), false) && Value(node);
  }

  // A value at `node` (an object's place in the request's object).
  bool Value(Node node) {
    switch (in_.Peek()) {
      case Kind::kObject:
        return Object(node);
      case Kind::kArray:
        return Array();
      case Kind::kString: {
        std::string_view s;
        return in_.String(s) && doc_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), false);
      }
      case Kind::kBool: {
        bool b = false;
        return in_.Bool(b) && doc_.Bool(b);
      }
      case Kind::kNull:
        return in_.Null() && doc_.Null();
      case Kind::kNumber:
        return Number();
      case Kind::kNone:
        break;
    }
    return false;
  }

  // Typed by nlohmann's rules (json_number.h).
  bool Number() {
    text::TypedNumber v;
    if (!in_.Number(v)) return false;
    switch (v.type) {
      case text::TypedNumber::Type::kUnsigned:
        return doc_.Uint64(v.u);
      case text::TypedNumber::Type::kInteger:
        return doc_.Int64(v.i);
      case text::TypedNumber::Type::kFloat:
        break;
    }
    return doc_.Double(v.d);
  }

  bool Object(Node node) {
    if (!in_.BeginObject()) return false;
    doc_.StartObject();
    rapidjson::SizeType kept = 0;  // repeated keys are all kept: JsonRef reads the last
    std::string_view key;
    while (in_.NextKey(key)) {
      if (!Kept(node, key)) {
        if (!in_.Skip()) return false;
        continue;
      }
      ++kept;
      if (!doc_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), false) || !Value(Child(node, key)))
        return false;
    }
    return in_.ok() && doc_.EndObject(kept);
  }

  bool Array() {
    if (!in_.BeginArray()) return false;
    doc_.StartArray();
    rapidjson::SizeType count = 0;
    while (in_.NextItem()) {
      ++count;
      if (!Value(Node::kOther)) return false;
    }
    return in_.ok() && doc_.EndArray(count);
  }

  // Where the member `key` of an object at `node` sits.
  static Node Child(Node node, std::string_view key) {
    return node == Node::kObject && key == "metadata" ? Node::kMetadata : Node::kOther;
  }

  text::JsonReader& in_;
  rapidjson::Document& doc_;
  ParsedReview& out_;
  rapidjson::SizeType trees_ = 0;          // objects and oldObjects in the tree
  rapidjson::SizeType request_trees_ = 0;  // ... before the last request began
};

}  // namespace

static_assert(ParsedReview::Pool::kPadding >= text::JsonReader::kPadding);

ParsedReview ParseReview(std::string_view body, int max_depth) {
  ParsedReview result;
  // A UTF-8 byte order mark before the text is skipped, as nlohmann's parser does.
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  // A padded copy, read in place: the strings point into it, and the
  // ParsedReview keeps it with the tree. A NUL byte inside the body ends
  // the reader's text there, so such a body is invalid (ServeReview
  // refuses it).
  ParsedReview::Pool& pool = *result.pool;
  char* text = pool.small;
  if (body.size() + ParsedReview::Pool::kPadding > ParsedReview::Pool::kSmall) {
    pool.large.resize(body.size() + ParsedReview::Pool::kPadding);
    text = pool.large.data();
  }
  std::memcpy(text, body.data(), body.size());
  std::memset(text + body.size(), 0, ParsedReview::Pool::kPadding);
  text::JsonReader reader(text, body.size(), max_depth);
  rapidjson::Document& doc = pool.doc;
  ReviewReader review(reader, doc, result);
  bool parsed = false;
  auto generate = [&](rapidjson::Document&) { return parsed = review.Parse(); };
  doc.Populate(generate);
  if (reader.too_deep()) {
    result.status = ParsedReview::kTooDeep;
  } else if (parsed) {
    result.status = ParsedReview::kOk;
    review.Resolve();
  }
  if (result.status != ParsedReview::kOk) {
    doc.SetNull();
    result.is_object = false;
    result.api_version.reset();
    result.kind.reset();
    result.request.reset();
  }
  return result;
}

nlohmann::json ParsedReview::View() const {
  using nlohmann::json;
  if (!is_object) return nullptr;
  json out = json::object();
  if (api_version) out["apiVersion"] = *api_version;
  if (kind) out["kind"] = *kind;
  if (const auto& r = request) {
    json& j = out["request"] = {{"uid", r->uid},
                                {"subResource", r->sub_resource},
                                {"name", r->name},
                                {"namespace", r->namespace_},
                                {"operation", r->operation}};
    if (r->kind) j["kind"] = {{"group", r->kind->group}, {"kind", r->kind->kind}};
    if (r->resource) j["resource"] = {{"group", r->resource->group}, {"resource", r->resource->resource}};
    if (r->object) j["object"] = r->object->ToJson();
    if (r->old_object) j["oldObject"] = r->old_object->ToJson();
  }
  return out;
}

}  // namespace ms::admission
