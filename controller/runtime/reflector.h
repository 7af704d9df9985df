// The list-then-watch loop of one collection, after client-go's reflector:
// LIST (paged) then WATCH from the list's resourceVersion with bookmarks;
// re-watch from the last resourceVersion when a stream ends; RELIST on 410
// Gone (an HTTP answer or an ERROR event), which replaces the store and so
// yields deletes for objects that vanished; reconnect with jittered
// exponential backoff when the API server is unreachable. Each object goes
// through the transform (as controller-runtime's cache transform: keep only
// the fields the controller reads; the annotations it does not read are
// already left out while the answer is parsed) into the Store; LIST pages
// hold as many items as fit a budget of bytes (list_pages.h: a few large
// pages of small objects, small pages of large ones) and are halved when one
// is larger than the client takes, so memory follows what is kept, not what
// tenants store; what changed goes to the
// sink. An object that cannot be transformed is logged and skipped (its
// resourceVersion is still passed). Runs on the thread of Run(): the watch's
// (libcurl's) callbacks only update the store and hand deltas on.
#pragma once

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <vector>

#include "controller/kube/backoff.h"
#include "controller/kube/client.h"
#include "controller/runtime/list_pages.h"
#include "controller/runtime/store.h"
#include "shared/clock/clock.h"

namespace ms::runtime {

// Builds what is cached (and handed to handlers) from an object as the API
// server sends it. May throw: the object is then skipped.
using Transform = std::function<nlohmann::json(const nlohmann::json& object)>;

// An informer's options, which its reflector applies.
struct InformerOptions {
  // Items per LIST page: the first page's, then as many as fit the budget's
  // bytes (list_pages.h); a page larger than the client takes
  // (kube::kReasonTooLarge) is asked for again with half as many, down to 1.
  PageBudget pages;
  Transform transform;  // empty: cache whole objects
  // What the LIST and WATCH answers keep of each object's annotations, left
  // out while parsing (kube/api_json.h); nullopt: all. The annotations the
  // transform reads, no more.
  std::optional<kube::KeptAnnotations> annotations;
  // The server-side watch timeout is drawn from [min_watch_timeout, 2 * min_watch_timeout).
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{30'000};
  double backoff_jitter = 0.2;
  uint64_t seed = 0;  // 0: random
};

class Reflector {
 public:
  // Takes the deltas of one change (`listed`: of a whole list, which
  // replaced the store).
  using Sink = std::function<void(std::vector<Delta> deltas, bool listed)>;

  // `path` is the collection (namespace applied, no query).
  Reflector(kube::Client& client, const clock::Clock& clock, std::shared_ptr<spdlog::logger> logger, std::string path,
            std::string label_selector, const InformerOptions& options, Store& store, Sink sink);

  // Lists and watches until a stop is requested on `stop` or Stop() is
  // called (either wakes a backoff wait and ends a watch at once). Blocks.
  void Run(std::stop_token stop);
  void Stop();

 private:
  enum class WatchOutcome { kEnded, kGone, kFailed, kStopped };

  bool Stopped() const { return stop_.stop_requested(); }
  bool ListAll();  // false on failure (already logged)
  // One page at `limit` items or fewer: halved while the answer is too large.
  kube::Result ListPage(const std::string& cont, int& limit);
  const kube::KeptAnnotations* Kept() const { return options_.annotations ? &*options_.annotations : nullptr; }
  // One page's items into `items` (transformed, packed; each freed from the
  // answer once packed); false on failure. `count`: the page's items.
  bool ReadPage(kube::Result& r, std::map<std::string, std::string>& items, std::size_t& count);
  WatchOutcome WatchOnce();
  std::string WatchPath(const std::string& rv);
  // Applies one event; false ends the stream (ERROR: `gone` set for 410, else `failed`).
  bool HandleEvent(const kube::WatchEvent& event, bool& gone, bool& failed);
  nlohmann::json Transformed(const nlohmann::json& object) const;
  void SleepFor(clock::Clock::Duration d);
  std::string Query(std::string path) const;

  kube::Client& client_;
  const clock::Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  const std::string path_;
  const std::string label_selector_;
  const InformerOptions options_;
  Store& store_;
  const Sink sink_;
  kube::Backoff backoff_;
  std::mt19937_64 rng_;  // watch timeout jitter
  int gone_streak_ = 0;  // 410s in a row without a healthy stream (Run thread only)
  int page_limit_;       // the next LIST page's items, learned from the last (Run thread only)

  std::stop_source stop_;  // ends the watch at once
  mutable std::mutex wait_mu_;
  mutable std::condition_variable wait_cv_;
};

}  // namespace ms::runtime
