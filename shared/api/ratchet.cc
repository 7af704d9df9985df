#include "shared/api/ratchet.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ms::api {

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The values of both objects that an error's path names, correlated by
// member name and map key, each looked up once (a hostile object may have
// hundreds of thousands of members, and many errors may name its fields).
class Correlator {
 public:
  Correlator(const nlohmann::json& now, const nlohmann::json& before) : root_{&now, &before} {}

  // Whether the value `path` is about changed; with `parent`, the object
  // holding the value at `path` (a Required error's).
  bool Changed(std::string_view path, bool parent) {
    if (path.empty() || path == "<root>") return true;
    std::string_view subject;
    if (!Subject(path, parent, subject)) return true;  // a path that names no value: report
    if (auto it = changed_.find(subject); it != changed_.end()) return it->second;
    const Pair& p = subject.empty() ? root_ : nodes_.at(std::string(subject));
    const bool changed = (p.now != nullptr) != (p.before != nullptr) || (p.now && *p.now != *p.before);
    changed_.emplace(std::string(subject), changed);
    return changed;
  }

 private:
  struct Pair {
    const nlohmann::json *now = nullptr, *before = nullptr;
  };

  // The member `key` of `v` when it is an object and has one.
  static const nlohmann::json* Find(const nlohmann::json* v, std::string_view key) {
    if (!v || !v->is_object()) return nullptr;
    auto it = v->find(key);
    return it == v->end() ? nullptr : &*it;
  }

  // The member `key` of `from`'s values, as the node at `prefix`.
  const Pair& Child(const Pair& from, std::string_view prefix, std::string_view key) {
    if (auto it = nodes_.find(prefix); it != nodes_.end()) return it->second;
    Pair p;
    p.now = Find(from.now, key);
    p.before = Find(from.before, key);
    return nodes_.emplace(std::string(prefix), p).first->second;
  }

  // The end of the map key that opens at path[open] ('['): the first ']'
  // after which the path goes on ('.', '[' or its end) and whose key the
  // object has (a key may hold ']' itself); npos when there is none.
  static size_t KeyEnd(std::string_view path, size_t open, const Pair& at) {
    size_t fallback = std::string_view::npos;
    for (size_t close = path.find(']', open + 1); close != std::string_view::npos; close = path.find(']', close + 1)) {
      if (close + 1 < path.size() && path[close + 1] != '.' && path[close + 1] != '[') continue;
      const std::string_view key = path.substr(open + 1, close - open - 1);
      if (Find(at.now, key) || Find(at.before, key)) return close;
      if (fallback == std::string_view::npos) fallback = close;
    }
    return fallback;
  }

  // The prefix of `path` that names the value correlated with oldObject's:
  // the whole path, or up to an atomic list (an index stops it), or its
  // parent object. False when the path cannot be read.
  bool Subject(std::string_view path, bool parent, std::string_view& subject) {
    const Pair* at = &root_;
    size_t end = 0, previous = 0;
    while (end < path.size()) {
      const size_t start = end;
      std::string_view key;
      if (path[end] == '[') {
        const size_t close = KeyEnd(path, end, *at);
        if (close == std::string_view::npos) return false;
        key = path.substr(end + 1, close - end - 1);
        const bool list = at->now ? at->now->is_array() : at->before && at->before->is_array();
        if (list || (!at->now && !at->before && AllDigits(key))) {  // an atomic list's item
          subject = path.substr(0, start);
          return true;
        }
        end = close + 1;
      } else {
        const size_t from = path[end] == '.' ? end + 1 : end;
        end = std::min(path.find_first_of(".[", from), path.size());
        key = path.substr(from, end - from);
      }
      previous = start;
      at = &Child(*at, path.substr(0, end), key);
    }
    subject = path.substr(0, parent ? previous : end);
    return true;
  }

  Pair root_;
  std::map<std::string, Pair, std::less<>> nodes_;    // by the path that names them
  std::map<std::string, bool, std::less<>> changed_;  // by subject
};

}  // namespace

void RatchetErrors(std::vector<FieldError>& errors, const nlohmann::json& object, const nlohmann::json& old_object) {
  Correlator values(object, old_object);
  std::erase_if(errors, [&](const FieldError& e) {
    if (e.entry) return !values.Changed(e.path + "[" + *e.entry + "]", false);
    if (e.reads.empty()) return !values.Changed(e.path, e.type == FieldError::Type::kRequired);
    return std::none_of(e.reads.begin(), e.reads.end(), [&](std::string_view p) { return values.Changed(p, false); });
  });
}

}  // namespace ms::api
