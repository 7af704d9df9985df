#include "controller/kube/paths.h"

#include "shared/text/json_fields.h"

namespace ms::kube {

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

std::string GroupVersionPath(std::string_view group, std::string_view version) {
  std::string out = group.empty() ? "/api/" : "/apis/";
  if (!group.empty()) {
    out += group;
    out += '/';
  }
  out += version;
  return out;
}

std::string GroupVersionOf(std::string_view path) {
  path = path.substr(0, path.find('?'));
  auto segment = [&path]() {
    if (path.empty() || path.front() != '/') return std::string_view{};
    path.remove_prefix(1);
    const auto end = path.find('/');
    std::string_view s = path.substr(0, end);
    path.remove_prefix(end == std::string_view::npos ? path.size() : end);
    return s;
  };
  const std::string_view root = segment();
  if (root == "api") return std::string(segment());
  if (root != "apis") return {};
  const std::string_view group = segment();
  const std::string_view version = segment();
  if (group.empty() || version.empty()) return {};
  return std::string(group) + "/" + std::string(version);
}

std::string CollectionPath(std::string_view group, std::string_view version, std::string_view resource,
                           std::string_view ns) {
  std::string out = GroupVersionPath(group, version);
  if (!ns.empty()) {
    out += "/namespaces/";
    out += UrlEncode(ns);
  }
  out += '/';
  out += resource;
  return out;
}

std::string ObjectPath(std::string_view group, std::string_view version, std::string_view resource, std::string_view ns,
                       std::string_view name) {
  return CollectionPath(group, version, resource, ns) + "/" + UrlEncode(name);
}

std::string StatusPath(std::string_view group, std::string_view version, std::string_view resource, std::string_view ns,
                       std::string_view name) {
  return ObjectPath(group, version, resource, ns, name) + "/status";
}

std::string NamespacedCollectionPath(std::string_view path, std::string_view ns) {
  if (ns.empty()) return std::string(path);
  const auto q = path.find('?');
  std::string_view base = path.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view{} : path.substr(q);
  const auto slash = base.rfind('/');
  if (slash == std::string_view::npos) return std::string(path);
  std::string out(base.substr(0, slash));
  out += "/namespaces/";
  out += UrlEncode(ns);
  out += base.substr(slash);
  out += query;
  return out;
}

std::string WithQuery(std::string_view path, std::string_view key, std::string_view value) {
  std::string out(path);
  out += path.find('?') == std::string_view::npos ? '?' : '&';
  out += key;
  out += '=';
  out += UrlEncode(value);
  return out;
}

std::string ObjectKey(const nlohmann::json& object) {
  std::string name = text::MetadataString(object, "name");
  if (name.empty()) return {};
  std::string ns = text::MetadataString(object, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

std::string ResourceVersionOf(const nlohmann::json& object) { return text::MetadataString(object, "resourceVersion"); }

}  // namespace ms::kube
