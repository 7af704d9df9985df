// A shared informer for one resource collection, after client-go's reflector:
// LIST (paged) then WATCH from the list's resourceVersion with bookmarks;
// re-watch from the last resourceVersion when a stream ends; RELIST on 410
// Gone (an HTTP answer or an ERROR event), delivering deletes for objects
// that vanished; reconnect with jittered exponential backoff when the API
// server is unreachable. Keeps a thread-safe cache keyed "ns/name".
//
// What is cached is small: each object first goes through the informer's
// transform (as controller-runtime's cache transform: keep only the fields
// the controller reads, managedFields never), then is stored as one
// MessagePack string, decoded again by Get(). Handlers see the transformed
// object. An object or a handler that throws (malformed data, e.g.
// `controller: "yes"` in an ownerReference) is logged and skipped; the
// informer carries on with the next event.
//
//   Informer inf(client, clock, logger, "/apis/modelops.dev/v1/modelservices");
//   inf.AddEventHandler({.on_add = ..., .on_update = ..., .on_delete = ...});
//   std::jthread t([&](std::stop_token stop) { inf.Run(stop); });
//   ... inf.HasSynced() ... inf.Get("ns/name") ...
#pragma once

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/clock.h"
#include "controller/kube/backoff.h"
#include "controller/kube/client.h"

namespace ms::runtime {

// Handlers run on the informer's Run() thread, one event at a time, outside
// the cache lock (they may call Get/List). Any may be empty.
struct EventHandler {
  std::function<void(const nlohmann::json& obj)> on_add;
  std::function<void(const nlohmann::json& old_obj, const nlohmann::json& new_obj)> on_update;
  std::function<void(const nlohmann::json& obj)> on_delete;
};

// What delivers an object kind's watch events to handlers: an Informer, or
// a fake in tests (builder.h wires sources to a work queue).
class EventSource {
 public:
  virtual ~EventSource() = default;
  // Add handlers before events flow.
  virtual void AddEventHandler(EventHandler handler) = 0;
};

// Builds what is cached (and handed to handlers) from an object as the API
// server sends it. May throw: the object is then skipped.
using Transform = std::function<nlohmann::json(const nlohmann::json& object)>;

struct InformerOptions {
  int page_size = 500;
  Transform transform;  // empty: cache whole objects
  // The server-side watch timeout is drawn from [min_watch_timeout, 2 * min_watch_timeout).
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{30'000};
  double backoff_jitter = 0.2;
  uint64_t seed = 0;  // 0: random
};

class Informer final : public EventSource {
 public:
  // `collection_path` is the all-namespaces collection, e.g.
  // "/apis/apps/v1/deployments"; `ns` narrows it to one namespace;
  // `label_selector` is a selector string such as "a=b,c=d".
  Informer(kube::Client& client, const Clock& clock, std::shared_ptr<spdlog::logger> logger,
           std::string collection_path, std::string label_selector = "", std::string ns = "",
           InformerOptions options = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Add handlers before Run().
  void AddEventHandler(EventHandler handler) override;

  // Lists and watches until a stop is requested on `stop` or Stop() is
  // called (either wakes a backoff wait and ends a watch at once). Blocks.
  // Call once per Informer.
  void Run(std::stop_token stop);
  void Stop();

  // True once the first list has been applied (and its adds delivered).
  bool HasSynced() const;

  // The cached (transformed) object, or nullopt when not in the cache.
  std::optional<nlohmann::json> Get(const std::string& key) const;
  // The last resourceVersion seen (list, event or bookmark).
  std::string LastResourceVersion() const;
  // The path the informer lists (namespace applied, no query).
  const std::string& path() const { return path_; }

 private:
  enum class WatchOutcome { kEnded, kGone, kFailed, kStopped };

  bool Stopped() const;
  bool ListAll();  // false on failure (already logged)
  WatchOutcome WatchOnce();
  // Applies one event; false ends the stream (ERROR: `gone` set for 410, else `failed`).
  bool HandleEvent(const kube::WatchEvent& event, bool& gone, bool& failed);
  // An ADDED/MODIFIED/DELETED event: cache, then handlers.
  void ApplyEvent(const kube::WatchEvent& event, const std::string& key, const std::string& rv);
  void Replace(std::map<std::string, std::string> items, const std::string& rv);
  nlohmann::json Transformed(const nlohmann::json& object) const;
  // The compact form kept in the cache (MessagePack).
  static std::string Pack(const nlohmann::json& transformed);
  // Calls one handler behind a barrier: what it throws is logged.
  void Notify(const char* what, const std::string& key, const std::function<void()>& call) const;
  void SleepFor(Clock::Duration d);
  std::string Query(std::string path) const;
  void SetResourceVersion(const std::string& rv);

  kube::Client& client_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  const std::string path_;
  const std::string label_selector_;
  const InformerOptions options_;
  kube::Backoff backoff_;
  std::mt19937_64 rng_;  // watch timeout jitter
  int gone_streak_ = 0;  // 410s in a row without a healthy stream (Run thread only)

  std::vector<EventHandler> handlers_;  // set before Run

  mutable std::shared_mutex cache_mu_;
  std::map<std::string, std::string> cache_;  // key -> MessagePack of the transformed object
  std::string resource_version_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  mutable std::mutex wait_mu_;
  mutable std::condition_variable wait_cv_;
};

}  // namespace ms::runtime
