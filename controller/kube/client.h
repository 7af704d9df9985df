// The Kubernetes API client interface. Implementations: the libcurl client
// (controller/kube/http_client.h) and fakes in tests. Paths are API paths
// with an optional query, e.g.
//   /apis/apps/v1/namespaces/ns/deployments/name
//   /apis/modelops.dev/v1/modelservices?limit=500&continue=...
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace ms::kube {

// A metav1.Status, or a transport failure (code 0, reason "Transport").
struct Status {
  int code = 0;         // HTTP status code; 0 when no HTTP answer was had
  std::string reason;   // NotFound, Conflict, AlreadyExists, Gone, Invalid, Forbidden, ...
  std::string message;  // human-readable
};

struct Result {
  int code = 0;                 // HTTP status code, 0 on transport failure
  nlohmann::json body;          // the decoded body on success (an object)
  std::optional<Status> error;  // set iff the request did not succeed (non-2xx or transport)

  bool ok() const { return !error.has_value(); }
  bool IsNotFound() const { return code == 404; }
  bool IsConflict() const { return code == 409 && (!error || error->reason != "AlreadyExists"); }
  bool IsAlreadyExists() const { return code == 409 && error && error->reason == "AlreadyExists"; }
  bool IsGone() const { return code == 410; }
};

// The controller writes merge patches only (RFC 7386).
enum class PatchType { kMerge };

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  nlohmann::json object;
};

class Client {
 public:
  virtual ~Client() = default;
  virtual Result Get(const std::string& path) = 0;
  // One page; the caller pages with limit/continue in the query.
  virtual Result List(const std::string& path) = 0;
  virtual Result Create(const std::string& path, const nlohmann::json& body) = 0;
  virtual Result Update(const std::string& path, const nlohmann::json& body) = 0;
  virtual Result Patch(const std::string& path, PatchType type, const nlohmann::json& patch) = 0;
  virtual Result Delete(const std::string& path) = 0;
  // Streams a watch (`path` carries watch=true, resourceVersion, ...).
  // Calls `on_event` for each event as it arrives; returns when the server
  // ends the stream, on error, or soon after `stop` becomes true (or
  // on_event returns false). The Result carries the HTTP code (200 for a
  // stream that ended normally) or the error.
  virtual Result Watch(const std::string& path, const std::function<bool(const WatchEvent&)>& on_event,
                       const std::atomic<bool>& stop) = 0;
};

}  // namespace ms::kube
