// The Kubernetes API client interface. Implementations: the libcurl client
// (controller/kube/http_client.h) and fakes in tests, which implement Do()
// and Watch(). Paths are API paths with an optional query, e.g.
//   /apis/apps/v1/namespaces/ns/deployments/name
//   /apis/modelops.dev/v1/modelservices?limit=500&continue=...
// Every request may carry a deadline (on the client's Clock), as client-go's
// take a context: not sent when it cannot be met, abandoned when it comes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "controller/kube/api_json.h"
#include "shared/clock/clock.h"

namespace ms::kube {

// A metav1.Status, or a transport failure (code 0, reason "Transport").
// The reason (code 0) of an answer larger than the client takes
// (TransportOptions::max_response_bytes): a LIST may ask for smaller pages.
inline constexpr const char* kReasonTooLarge = "ResponseTooLarge";

struct Status {
  int code = 0;         // HTTP status code; 0 when no HTTP answer was had
  std::string reason;   // NotFound, Conflict, AlreadyExists, Gone, Invalid, Forbidden, ...
  std::string message;  // human-readable
};

struct Result {
  int code = 0;                 // HTTP status code, 0 on transport failure
  nlohmann::json body;          // the decoded body on success (an object)
  std::optional<Status> error;  // set iff the request did not succeed (non-2xx or transport)
  std::size_t body_bytes = 0;   // the answer's body as received (0: not known)

  bool ok() const { return !error.has_value(); }
  bool IsNotFound() const { return code == 404; }
  bool IsConflict() const { return code == 409 && (!error || error->reason != "AlreadyExists"); }
  bool IsAlreadyExists() const { return code == 409 && error && error->reason == "AlreadyExists"; }
  bool IsGone() const { return code == 410; }
  // "409 Conflict: the object has been modified": the code, then the
  // Status' reason and message when there are (for messages and log lines).
  std::string Text() const {
    std::string s = std::to_string(code);
    if (error && !error->reason.empty()) s += " " + error->reason;
    if (error && !error->message.empty()) s += ": " + error->message;
    return s;
  }
};

// The controller writes merge patches only (RFC 7386).
enum class PatchType { kMerge };

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  nlohmann::json object;
};
// Called for each event as it arrives; false ends the watch.
using WatchHandler = std::function<bool(const WatchEvent&)>;

// When a request must be over, on the client's clock; none: the client's
// own request timeout.
using Deadline = std::optional<clock::Clock::TimePoint>;

// One request. `body` is the object (POST, PUT), the patch (PATCH) or the
// DeleteOptions (DELETE).
struct Call {
  enum class Verb { kGet, kList, kCreate, kUpdate, kPatch, kDelete };
  Verb verb;
  const std::string& path;
  const nlohmann::json* body = nullptr;
  Deadline deadline;
  // What the answer keeps of each object's annotations (api_json.h; null:
  // all): an informer's LIST asks for those its cache keeps.
  const KeptAnnotations* annotations = nullptr;

  // GET, POST, PUT, PATCH, DELETE.
  const char* Method() const;
  bool IsWrite() const { return verb != Verb::kGet && verb != Verb::kList; }
};

class Client {
 public:
  virtual ~Client() = default;

  Result Get(const std::string& path, Deadline deadline = {}) {
    return Do({Call::Verb::kGet, path, nullptr, deadline});
  }
  // One page; the caller pages with limit/continue in the query.
  Result List(const std::string& path, Deadline deadline = {}) {
    return Do({Call::Verb::kList, path, nullptr, deadline});
  }
  Result Create(const std::string& path, const nlohmann::json& body, Deadline deadline = {}) {
    return Do({Call::Verb::kCreate, path, &body, deadline});
  }
  Result Update(const std::string& path, const nlohmann::json& body, Deadline deadline = {}) {
    return Do({Call::Verb::kUpdate, path, &body, deadline});
  }
  Result Patch(const std::string& path, PatchType, const nlohmann::json& patch, Deadline deadline = {}) {
    return Do({Call::Verb::kPatch, path, &patch, deadline});
  }
  Result Delete(const std::string& path, Deadline deadline = {}) {
    return Do({Call::Verb::kDelete, path, nullptr, deadline});
  }
  // With a body: a DeleteOptions (propagationPolicy, preconditions).
  Result Delete(const std::string& path, const nlohmann::json& options, Deadline deadline = {}) {
    return Do({Call::Verb::kDelete, path, &options, deadline});
  }

  // Sends one request and waits for its answer.
  virtual Result Do(const Call& call) = 0;
  // Streams a watch (`path` carries watch=true, resourceVersion, ...):
  // calls `on_event` for each event as it arrives; returns when the server
  // ends the stream, on error, at once when `stop` is requested, or when
  // on_event returns false. The Result carries the HTTP code (200 for a
  // stream that ended normally) or the error; a stopped watch is no error.
  virtual Result Watch(const std::string& path, const WatchHandler& on_event, std::stop_token stop) = 0;
  // The same, keeping of each object's annotations only those listed
  // (api_json.h; null: all). A client that cannot leave them out keeps all.
  virtual Result WatchKeeping(const std::string& path, const KeptAnnotations* annotations, const WatchHandler& on_event,
                              std::stop_token stop) {
    (void)annotations;
    return Watch(path, on_event, stop);
  }
};

}  // namespace ms::kube
