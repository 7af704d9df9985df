// The list-then-watch loop of one collection, after client-go's reflector:
// LIST (paged) then WATCH from the list's resourceVersion with bookmarks;
// re-watch from the last resourceVersion when a stream ends; RELIST on 410
// Gone (an HTTP answer or an ERROR event), which replaces the store and so
// yields deletes for objects that vanished; reconnect with jittered
// exponential backoff when the API server is unreachable. Each object goes
// through the transform (as controller-runtime's cache transform: keep only
// the fields the controller reads) into the Store; what changed goes to the
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
#include <random>
#include <stop_token>
#include <string>
#include <vector>

#include "base/clock.h"
#include "controller/kube/backoff.h"
#include "controller/kube/client.h"
#include "controller/runtime/store.h"

namespace ms::runtime {

// Builds what is cached (and handed to handlers) from an object as the API
// server sends it. May throw: the object is then skipped.
using Transform = std::function<nlohmann::json(const nlohmann::json& object)>;

// An informer's options, which its reflector applies.
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

class Reflector {
 public:
  // Takes the deltas of one change (`listed`: of a whole list, which
  // replaced the store).
  using Sink = std::function<void(std::vector<Delta> deltas, bool listed)>;

  // `path` is the collection (namespace applied, no query).
  Reflector(kube::Client& client, const Clock& clock, std::shared_ptr<spdlog::logger> logger, std::string path,
            std::string label_selector, const InformerOptions& options, Store& store, Sink sink);

  // Lists and watches until a stop is requested on `stop` or Stop() is
  // called (either wakes a backoff wait and ends a watch at once). Blocks.
  void Run(std::stop_token stop);
  void Stop();

 private:
  enum class WatchOutcome { kEnded, kGone, kFailed, kStopped };

  bool Stopped() const { return stop_.stop_requested(); }
  bool ListAll();  // false on failure (already logged)
  // One page's items into `items` (transformed, packed); false on failure.
  bool ReadPage(const kube::Result& r, std::map<std::string, std::string>& items);
  WatchOutcome WatchOnce();
  std::string WatchPath(const std::string& rv);
  // Applies one event; false ends the stream (ERROR: `gone` set for 410, else `failed`).
  bool HandleEvent(const kube::WatchEvent& event, bool& gone, bool& failed);
  nlohmann::json Transformed(const nlohmann::json& object) const;
  void SleepFor(Clock::Duration d);
  std::string Query(std::string path) const;

  kube::Client& client_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  const std::string path_;
  const std::string label_selector_;
  const InformerOptions options_;
  Store& store_;
  const Sink sink_;
  kube::Backoff backoff_;
  std::mt19937_64 rng_;  // watch timeout jitter
  int gone_streak_ = 0;  // 410s in a row without a healthy stream (Run thread only)

  std::stop_source stop_;  // ends the watch at once
  mutable std::mutex wait_mu_;
  mutable std::condition_variable wait_cv_;
};

}  // namespace ms::runtime
