#include "webhook/admission/review_parser.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "shared/text/json_reader.h"

namespace ms::admission {

namespace {

// Reads the review: its members and the request's typed into `out`, the
// request's object and oldObject as their text (and the members of them
// admission reads first, as theirs); skips the rest with JsonReader::Skip,
// which checks it without decoding it.
class ReviewReader {
 public:
  ReviewReader(text::JsonReader& in, const char* end, ParsedReview& out) : in_(in), end_(end), out_(out) {}

  // The whole text: one value and nothing after it.
  bool Parse() { return Review() && in_.AtEnd(); }

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
  // A member's JSON text, not decoded.
  bool Raw(std::optional<std::string_view>& out) { return in_.Capture(out.emplace()); }

  bool Request() {
    out_.request.reset();  // a repeated request: the last one's members only
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
          read = key == "object" ? ModelService(r) : in_.Skip();
          break;
        case 8:
          read = key == "resource" ? GroupResource(r.resource) : in_.Skip();
          break;
        case 9:
          read = key == "namespace"   ? Text(r.namespace_)
                 : key == "operation" ? Text(r.operation)
                 : key == "oldObject" ? Object(r.old_object)
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

  // request.object or request.oldObject: its text, and when it is an
  // object the members admission reads first (raw: its text stays as the
  // body has it, for the handler's read).
  bool Object(std::optional<RequestObject>& out) {
    RequestObject& o = out.emplace();
    if (in_.Peek() != Kind::kObject) return in_.Capture(o.json);
    const char* start = in_.Position();
    o.is_object = true;
    if (!in_.BeginObject()) return false;
    // Keys read raw: the object's text stays as the body has it.
    std::string_view key;
    while (in_.NextRawKey(key)) {
      bool read = false;
      if (text::RawKeyEquals(key, "apiVersion"))
        read = Raw(o.api_version);
      else if (text::RawKeyEquals(key, "kind"))
        read = Raw(o.kind);
      else if (text::RawKeyEquals(key, "spec"))
        read = Raw(o.spec);
      else if (text::RawKeyEquals(key, "metadata"))
        read = Metadata(o);
      else
        read = in_.Skip();
      if (!read) return false;
    }
    if (!in_.ok()) return false;
    o.json = std::string_view(start, static_cast<size_t>(in_.Position() - start));
    return true;
  }

  // request.object, read as a ModelService in this pass; its text from a
  // copy taken first.
  bool ModelService(AdmissionRequest& r) {
    in_.Peek();
    const char* start = in_.Position();
    const size_t rest = static_cast<size_t>(end_ - start);
    ParsedReview::Pool& pool = *out_.pool;
    char* copy = pool.object_small;
    if (rest + ParsedReview::Pool::kPadding > ParsedReview::Pool::kSmall) {
      pool.object_large.resize(rest + ParsedReview::Pool::kPadding);
      copy = pool.object_large.data();
    }
    std::memcpy(copy, start, rest);
    const api::ParsedModelService& parsed = r.model_service.emplace(api::ReadModelService(in_));
    if (!in_.ok()) return false;
    RequestObject& o = r.object.emplace();
    o.json = std::string_view(copy, static_cast<size_t>(in_.Position() - start));
    o.is_object = parsed.object;
    o.api_version = parsed.api_version;
    o.kind = parsed.kind;
    o.name = parsed.name;
    o.generate_name = parsed.generate_name;
    if (parsed.spec_form != api::ParsedModelService::Spec::kAbsent)
      o.spec = o.json.substr(parsed.spec_begin, parsed.spec_end - parsed.spec_begin);
    return true;
  }

  bool Metadata(RequestObject& o) {
    o.name.reset();
    o.generate_name.reset();
    if (in_.Peek() != Kind::kObject) return in_.Skip();
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextRawKey(key)) {
      if (!(text::RawKeyEquals(key, "name")           ? Raw(o.name)
            : text::RawKeyEquals(key, "generateName") ? Raw(o.generate_name)
                                                      : in_.Skip()))
        return false;
    }
    return in_.ok();
  }

  text::JsonReader& in_;
  const char* end_;  // of the text
  ParsedReview& out_;
};

}  // namespace

static_assert(ParsedReview::Pool::kPadding >= text::JsonReader::kPadding);

ParsedReview ParseReview(std::string_view body, int max_depth) {
  ParsedReview result;
  // A UTF-8 byte order mark before the text is skipped, as nlohmann's parser does.
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  // A padded copy, read in place: the strings point into it, and the
  // ParsedReview keeps it. A NUL byte inside the body ends
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
  ReviewReader review(reader, text + body.size(), result);
  const bool parsed = review.Parse();
  if (reader.too_deep()) {
    result.status = ParsedReview::kTooDeep;
  } else if (parsed) {
    result.status = ParsedReview::kOk;
  }
  if (result.status != ParsedReview::kOk) {
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
    for (const auto& [name, o] : {std::pair{"object", &r->object}, std::pair{"oldObject", &r->old_object}}) {
      if (!*o) continue;
      json& v = j[name] = {{"json", json::parse((*o)->json)}, {"isObject", (*o)->is_object}};
      const std::pair<const char*, const std::optional<std::string_view>*> members[] = {
          {"apiVersion", &(*o)->api_version},
          {"kind", &(*o)->kind},
          {"spec", &(*o)->spec},
          {"name", &(*o)->name},
          {"generateName", &(*o)->generate_name}};
      for (const auto& [m, raw] : members)
        if (*raw) v[m] = json::parse(**raw);
    }
  }
  return out;
}

}  // namespace ms::admission
