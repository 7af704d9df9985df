// Building Kubernetes API paths and query strings.
//
//   CollectionPath("apps", "v1", "deployments", "ns")  -> /apis/apps/v1/namespaces/ns/deployments
//   CollectionPath("", "v1", "services")                -> /api/v1/services
//   ObjectPath("modelops.dev", "v1", "modelservices", "ns", "a") + "/status" == StatusPath(...)
//   WithQuery("/api/v1/pods", "labelSelector", "app=x") -> /api/v1/pods?labelSelector=app%3Dx
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace ms::kube {

// Percent-encodes everything except RFC 3986 unreserved characters
// (A-Z a-z 0-9 - . _ ~), so the result is safe as a query value or a path segment.
std::string UrlEncode(std::string_view s);

// "/api/<version>" for the core group (group ""), else "/apis/<group>/<version>".
std::string GroupVersionPath(std::string_view group, std::string_view version);

// The API group-version a request path addresses, as client-go names its
// clients: "/api/v1/namespaces/a/services" -> "v1", "/apis/apps/v1/deployments"
// -> "apps/v1"; "" for anything else (e.g. "/version").
std::string GroupVersionOf(std::string_view path);

// The collection of `resource`, in namespace `ns` or across all namespaces when `ns` is empty.
std::string CollectionPath(std::string_view group, std::string_view version, std::string_view resource,
                           std::string_view ns = {});

// One object; `ns` empty for cluster-scoped resources.
std::string ObjectPath(std::string_view group, std::string_view version, std::string_view resource, std::string_view ns,
                       std::string_view name);

// The status subresource of one object.
std::string StatusPath(std::string_view group, std::string_view version, std::string_view resource, std::string_view ns,
                       std::string_view name);

// Narrows an all-namespaces collection path ("/apis/apps/v1/deployments") to
// one namespace ("/apis/apps/v1/namespaces/ns/deployments"). Returns the path
// unchanged when `ns` is empty. Any query on `path` is kept.
std::string NamespacedCollectionPath(std::string_view path, std::string_view ns);

// Appends `key=value` (value URL-encoded) with '?' or '&' as needed.
std::string WithQuery(std::string_view path, std::string_view key, std::string_view value);

// The cache key of an object: "ns/name", or "name" when it has no namespace.
// Returns "" when metadata.name is missing.
std::string ObjectKey(const nlohmann::json& object);

// metadata.resourceVersion, or "" when absent.
std::string ResourceVersionOf(const nlohmann::json& object);

}  // namespace ms::kube
