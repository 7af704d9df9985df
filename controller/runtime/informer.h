// A shared informer for one resource collection, as client-go's: a Reflector
// (list-then-watch into the Store, reflector.h), the Store (the cache of
// transformed objects, store.h) and a Dispatcher (the handlers, called on
// the watch's thread: they must not block, dispatcher.h). Handlers see the
// transformed objects.
//
//   Informer inf(client, clock, logger, "/apis/modelops.dev/v1/modelservices");
//   inf.AddEventHandler({.on_add = ..., .on_update = ..., .on_delete = ...});
//   std::jthread t([&](std::stop_token stop) { inf.Run(stop); });
//   ... inf.HasSynced() ... inf.Get("ns/name") ...
#pragma once

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "controller/kube/client.h"
#include "controller/runtime/dispatcher.h"
#include "controller/runtime/reflector.h"
#include "controller/runtime/store.h"
#include "shared/clock/clock.h"

namespace ms::runtime {

// What delivers an object kind's watch events to handlers: an Informer, or
// a fake in tests (builder.h wires sources to a work queue).
class EventSource {
 public:
  virtual ~EventSource() = default;
  // Add handlers before events flow.
  virtual void AddEventHandler(EventHandler handler) = 0;
};

class Informer final : public EventSource {
 public:
  // `collection_path` is the all-namespaces collection, e.g.
  // "/apis/apps/v1/deployments"; `ns` narrows it to one namespace;
  // `label_selector` is a selector string such as "a=b,c=d".
  Informer(kube::Client& client, const clock::Clock& clock, std::shared_ptr<spdlog::logger> logger,
           std::string collection_path, std::string label_selector = "", std::string ns = "",
           InformerOptions options = {});
  ~Informer() override;
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Add handlers before Run().
  void AddEventHandler(EventHandler handler) override;
  // Called once, when HasSynced() becomes true (on Run()'s thread). Set
  // before Run().
  void OnSynced(std::function<void()> synced);

  // Lists and watches until a stop is requested on `stop` or Stop() is
  // called; the handlers are called on this thread. Blocks. Call once.
  void Run(std::stop_token stop);
  void Stop();

  // True once the first list is in the cache and every handler has handled
  // its adds.
  bool HasSynced() const;

  // The cached (transformed) object, or nullopt when not in the cache.
  std::optional<nlohmann::json> Get(const std::string& key) const { return store_.Get(key); }
  // The last resourceVersion seen (list, event or bookmark).
  std::string LastResourceVersion() const { return store_.ResourceVersion(); }
  // The path the informer lists (namespace applied, no query).
  const std::string& path() const { return path_; }

 private:
  // The reflector's sink (one thread): deltas to the handlers; after the
  // first list's, the cache is synced.
  void Changed(std::vector<Delta> deltas, bool listed);
  void Synced();

  const std::string path_;
  Store store_;
  Dispatcher dispatcher_;
  Reflector reflector_;
  std::function<void()> on_synced_;
  std::atomic<bool> synced_{false};
};

}  // namespace ms::runtime
