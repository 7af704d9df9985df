#include "controller/runtime/informer.h"

#include <algorithm>
#include <stop_token>
#include <utility>

#include "base/json_fields.h"
#include "controller/kube/paths.h"
#include "controller/kube/status.h"

namespace ms::runtime {

namespace {

uint64_t SeedOr(uint64_t seed) { return seed != 0 ? seed : std::random_device{}(); }

enum class DeltaType { kAdd, kUpdate, kDelete };
struct Delta {
  DeltaType type;
  std::string key;
  std::string old_obj;  // encoded, for kUpdate and kDelete
  std::string new_obj;  // encoded, for kAdd and kUpdate
};

nlohmann::json Decode(const std::string& encoded) { return nlohmann::json::from_msgpack(encoded); }

}  // namespace

Informer::Informer(kube::Client& client, const Clock& clock, std::shared_ptr<spdlog::logger> logger,
                   std::string collection_path, std::string label_selector, std::string ns, InformerOptions options)
    : client_(client),
      clock_(clock),
      logger_(std::move(logger)),
      path_(kube::NamespacedCollectionPath(collection_path, ns)),
      label_selector_(std::move(label_selector)),
      options_(options),
      backoff_(options.initial_backoff, options.max_backoff, options.backoff_jitter, SeedOr(options.seed)),
      rng_(SeedOr(options.seed) + 1) {}

Informer::~Informer() = default;

void Informer::AddEventHandler(EventHandler handler) { handlers_.push_back(std::move(handler)); }

bool Informer::Stopped() const { return stop_.load(); }

void Informer::Stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> g(wait_mu_);
  wait_cv_.notify_all();
}

bool Informer::HasSynced() const { return synced_.load(); }

std::optional<nlohmann::json> Informer::Get(const std::string& key) const {
  std::string encoded;
  {
    std::shared_lock<std::shared_mutex> g(cache_mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return std::nullopt;
    encoded = it->second;
  }
  return Decode(encoded);
}

nlohmann::json Informer::Transformed(const nlohmann::json& object) const {
  return options_.transform ? options_.transform(object) : object;
}

std::string Informer::Pack(const nlohmann::json& transformed) {
  std::string out;
  nlohmann::json::to_msgpack(transformed, out);
  out.shrink_to_fit();
  return out;
}

void Informer::Notify(const char* what, const std::string& key, const std::function<void()>& call) const {
  try {
    call();
  } catch (const std::exception& e) {
    if (logger_)
      logger_->error("informer {}: {} handler for {} failed (event skipped): {}", path_, what, key, e.what());
  }
}

std::string Informer::LastResourceVersion() const {
  std::shared_lock<std::shared_mutex> g(cache_mu_);
  return resource_version_;
}

void Informer::SetResourceVersion(const std::string& rv) {
  std::unique_lock<std::shared_mutex> g(cache_mu_);
  resource_version_ = rv;
}

std::string Informer::Query(std::string path) const {
  if (!label_selector_.empty()) path = kube::WithQuery(path, "labelSelector", label_selector_);
  return path;
}

void Informer::SleepFor(Clock::Duration d) {
  const auto deadline = clock_.Now() + d;
  std::unique_lock<std::mutex> lock(wait_mu_);
  while (!Stopped() && clock_.Now() < deadline) clock_.WaitUntil(wait_cv_, lock, deadline);
}

void Informer::Run(std::stop_token stop) {
  // A stop request runs Stop() on the requesting thread (or here at once if
  // one was already made): no thread polls for it.
  std::stop_callback on_stop(stop, [this] { Stop(); });

  bool need_list = true;
  while (!Stopped()) {
    if (need_list) {
      if (!ListAll()) {
        SleepFor(backoff_.Next());
        continue;
      }
      need_list = false;
    }
    switch (WatchOnce()) {
      case WatchOutcome::kStopped:
        break;
      case WatchOutcome::kGone:
        need_list = true;
        // A relist that at once meets 410 again would spin: back off then.
        if (++gone_streak_ > 1) SleepFor(backoff_.Next());
        break;
      case WatchOutcome::kEnded:
        break;
      case WatchOutcome::kFailed:
        SleepFor(backoff_.Next());
        break;
    }
  }
  if (logger_) logger_->debug("informer {}: stopped", path_);
}

bool Informer::ListAll() {
  std::map<std::string, std::string> items;
  std::string cont;
  std::string rv;
  do {
    std::string path = kube::WithQuery(path_, "limit", std::to_string(options_.page_size));
    if (!cont.empty()) path = kube::WithQuery(path, "continue", cont);
    kube::Result r = client_.List(Query(path));
    if (Stopped()) return false;
    if (!r.ok()) {
      if (logger_)
        logger_->warn("informer {}: list failed: {} {} {}", path_, r.code, r.error->reason, r.error->message);
      return false;
    }
    if (!r.body.is_object()) {
      if (logger_) logger_->warn("informer {}: list answer is not an object", path_);
      return false;
    }
    std::string kind = r.body.value("kind", "");
    if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
    const std::string api_version = r.body.value("apiVersion", "");
    if (auto it = r.body.find("items"); it != r.body.end() && it->is_array()) {  // NOLINT
      for (auto& item : *it) {
        std::string key = kube::ObjectKey(item);
        if (key.empty() || !item.is_object()) continue;
        // Items of a typed list carry no kind/apiVersion; watch events do.
        if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
        if (!item.contains("apiVersion") && !api_version.empty()) item["apiVersion"] = api_version;
        try {
          items[key] = Pack(Transformed(item));
        } catch (const std::exception& e) {
          if (logger_) logger_->error("informer {}: listed object {} skipped: {}", path_, key, e.what());
        }
      }
    }
    rv = MetadataString(r.body, "resourceVersion");
    cont = MetadataString(r.body, "continue");
  } while (!cont.empty());
  if (logger_) logger_->debug("informer {}: listed {} objects at resourceVersion {}", path_, items.size(), rv);
  Replace(std::move(items), rv);
  return true;
}

void Informer::Replace(std::map<std::string, std::string> items, const std::string& rv) {
  std::vector<Delta> deltas;
  {
    std::unique_lock<std::shared_mutex> g(cache_mu_);
    for (const auto& [key, old_obj] : cache_) {
      if (items.find(key) == items.end()) deltas.push_back({DeltaType::kDelete, key, old_obj, {}});
    }
    for (const auto& [key, obj] : items) {
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        deltas.push_back({DeltaType::kAdd, key, {}, obj});
      } else if (it->second != obj) {
        deltas.push_back({DeltaType::kUpdate, key, it->second, obj});
      }
    }
    cache_ = std::move(items);
    resource_version_ = rv;
  }
  for (const auto& d : deltas) {
    for (const auto& h : handlers_) {
      switch (d.type) {
        case DeltaType::kAdd:
          if (h.on_add) Notify("add", d.key, [&] { h.on_add(Decode(d.new_obj)); });
          break;
        case DeltaType::kUpdate:
          if (h.on_update) Notify("update", d.key, [&] { h.on_update(Decode(d.old_obj), Decode(d.new_obj)); });
          break;
        case DeltaType::kDelete:
          if (h.on_delete) Notify("delete", d.key, [&] { h.on_delete(Decode(d.old_obj)); });
          break;
      }
    }
  }
  synced_.store(true);
}

bool Informer::HandleEvent(const kube::WatchEvent& event, bool& gone, bool& failed) {
  if (event.type == "ERROR") {
    const kube::Status s = kube::StatusFromJson(event.object, 0);
    if (kube::IsGone(s)) {
      gone = true;
      if (logger_) logger_->info("informer {}: watch expired ({}): relisting", path_, s.message);
    } else {
      failed = true;
      if (logger_) logger_->warn("informer {}: watch error {} {}: {}", path_, s.code, s.reason, s.message);
    }
    return false;
  }
  const std::string rv = kube::ResourceVersionOf(event.object);
  if (event.type == "BOOKMARK") {
    if (!rv.empty()) SetResourceVersion(rv);
    return true;
  }
  const std::string key = kube::ObjectKey(event.object);
  if (key.empty()) {
    if (logger_) logger_->warn("informer {}: {} event without metadata.name ignored", path_, event.type);
    return true;
  }
  if (event.type != "ADDED" && event.type != "MODIFIED" && event.type != "DELETED") {
    if (logger_) logger_->warn("informer {}: unknown watch event type {} ignored", path_, event.type);
    return true;
  }
  try {
    ApplyEvent(event, key, rv);
  } catch (const std::exception& e) {
    // A malformed object: skip it (its resourceVersion is still passed, so
    // a re-watch does not deliver it again).
    if (!rv.empty()) SetResourceVersion(rv);
    if (logger_) logger_->error("informer {}: {} event for {} skipped: {}", path_, event.type, key, e.what());
  }
  return true;
}

void Informer::ApplyEvent(const kube::WatchEvent& event, const std::string& key, const std::string& rv) {
  if (event.type == "DELETED") {
    {
      std::unique_lock<std::shared_mutex> g(cache_mu_);
      cache_.erase(key);
      if (!rv.empty()) resource_version_ = rv;
    }
    const nlohmann::json obj = Transformed(event.object);
    for (const auto& h : handlers_) {
      if (h.on_delete) Notify("delete", key, [&] { h.on_delete(obj); });
    }
    return;
  }
  const nlohmann::json obj = Transformed(event.object);
  std::string encoded = Pack(obj);
  std::optional<std::string> old_obj;
  {
    std::unique_lock<std::shared_mutex> g(cache_mu_);
    auto [it, inserted] = cache_.try_emplace(key);
    if (!inserted) old_obj = std::move(it->second);
    it->second = std::move(encoded);
    if (!rv.empty()) resource_version_ = rv;
  }
  const nlohmann::json old = old_obj ? Decode(*old_obj) : nlohmann::json();
  for (const auto& h : handlers_) {
    if (old_obj) {
      if (h.on_update) Notify("update", key, [&] { h.on_update(old, obj); });
    } else if (h.on_add) {
      Notify("add", key, [&] { h.on_add(obj); });
    }
  }
}

Informer::WatchOutcome Informer::WatchOnce() {
  const auto min_s = std::max<int64_t>(1, options_.min_watch_timeout.count());
  std::uniform_int_distribution<int64_t> pick(min_s, 2 * min_s - 1);
  const int64_t timeout_s = pick(rng_);
  const std::string rv = LastResourceVersion();
  std::string path = kube::WithQuery(path_, "watch", "true");
  path = kube::WithQuery(path, "allowWatchBookmarks", "true");
  if (!rv.empty()) path = kube::WithQuery(path, "resourceVersion", rv);
  path = kube::WithQuery(path, "timeoutSeconds", std::to_string(timeout_s));
  path = Query(path);

  const auto start = clock_.Now();
  size_t events = 0;
  bool gone = false;
  bool failed = false;
  const kube::Result r = client_.Watch(
      path,
      [&](const kube::WatchEvent& e) {
        ++events;
        return HandleEvent(e, gone, failed) && !Stopped();
      },
      stop_);
  if (Stopped()) return WatchOutcome::kStopped;
  // A stream that delivered events or stayed up a while was healthy: the
  // next failure starts the backoff from the beginning. One that ends at once
  // with nothing in it counts as a failure, so a misbehaving server does not
  // make us spin.
  const bool healthy = events > 0 || clock_.Now() - start >= std::chrono::seconds(1);
  if (healthy) {
    backoff_.Reset();
    gone_streak_ = 0;
  }
  if (gone || r.IsGone()) {
    if (r.IsGone() && logger_) logger_->info("informer {}: resourceVersion {} is gone: relisting", path_, rv);
    return WatchOutcome::kGone;
  }
  if (failed) return WatchOutcome::kFailed;
  if (!r.ok()) {
    if (logger_) logger_->warn("informer {}: watch failed: {} {} {}", path_, r.code, r.error->reason, r.error->message);
    return WatchOutcome::kFailed;
  }
  return healthy ? WatchOutcome::kEnded : WatchOutcome::kFailed;
}

}  // namespace ms::runtime
