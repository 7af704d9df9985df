#include "controller/runtime/reflector.h"

#include <algorithm>
#include <utility>

#include "controller/kube/paths.h"
#include "controller/kube/status.h"
#include "shared/text/json_fields.h"

namespace ms::runtime {

using nlohmann::json;

namespace {

uint64_t SeedOr(uint64_t seed) { return seed != 0 ? seed : std::random_device{}(); }

}  // namespace

Reflector::Reflector(kube::Client& client, const clock::Clock& clock, std::shared_ptr<spdlog::logger> logger,
                     std::string path, std::string label_selector, const InformerOptions& options, Store& store,
                     Sink sink)
    : client_(client),
      clock_(clock),
      logger_(std::move(logger)),
      path_(std::move(path)),
      label_selector_(std::move(label_selector)),
      options_(options),
      store_(store),
      sink_(std::move(sink)),
      backoff_(options.initial_backoff, options.max_backoff, options.backoff_jitter, SeedOr(options.seed)),
      rng_(SeedOr(options.seed) + 1),
      page_limit_(std::max(1, options.pages.first)) {}

void Reflector::Stop() {
  stop_.request_stop();
  std::lock_guard<std::mutex> g(wait_mu_);
  wait_cv_.notify_all();
}

json Reflector::Transformed(const json& object) const {
  return options_.transform ? options_.transform(object) : object;
}

std::string Reflector::Query(std::string path) const {
  if (!label_selector_.empty()) path = kube::WithQuery(path, "labelSelector", label_selector_);
  return path;
}

void Reflector::SleepFor(clock::Clock::Duration d) {
  const auto deadline = clock_.Now() + d;
  std::unique_lock<std::mutex> lock(wait_mu_);
  while (!Stopped() && clock_.Now() < deadline) clock_.WaitUntil(wait_cv_, lock, deadline);
}

void Reflector::Run(std::stop_token stop) {
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
      case WatchOutcome::kEnded:
        break;
      case WatchOutcome::kGone:
        need_list = true;
        // A relist that at once meets 410 again would spin: back off then.
        if (++gone_streak_ > 1) SleepFor(backoff_.Next());
        break;
      case WatchOutcome::kFailed:
        SleepFor(backoff_.Next());
        break;
    }
  }
  if (logger_) logger_->debug("informer {}: stopped", path_);
}

bool Reflector::ReadPage(kube::Result& r, std::map<std::string, std::string>& items, std::size_t& count) {
  if (!r.ok()) {
    if (logger_) logger_->warn("informer {}: list failed: {} {} {}", path_, r.code, r.error->reason, r.error->message);
    return false;
  }
  if (!r.body.is_object()) {
    if (logger_) logger_->warn("informer {}: list answer is not an object", path_);
    return false;
  }
  std::string kind = r.body.value("kind", "");
  if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
  const std::string api_version = r.body.value("apiVersion", "");
  auto it = r.body.find("items");
  count = 0;
  if (it == r.body.end() || !it->is_array()) return true;
  count = it->size();
  for (json& listed : *it) {
    json item = std::move(listed);  // freed once packed: the page's tree shrinks as the cache grows
    std::string key = kube::ObjectKey(item);
    if (key.empty() || !item.is_object()) continue;
    // Items of a typed list carry no kind/apiVersion; watch events do.
    if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
    if (!item.contains("apiVersion") && !api_version.empty()) item["apiVersion"] = api_version;
    try {
      items[key] = Store::Pack(Transformed(item));
    } catch (const std::exception& e) {
      if (logger_) logger_->error("informer {}: listed object {} skipped: {}", path_, key, e.what());
    }
  }
  return true;
}

kube::Result Reflector::ListPage(const std::string& cont, int& limit) {
  for (;;) {
    std::string path = kube::WithQuery(path_, "limit", std::to_string(limit));
    if (!cont.empty()) path = kube::WithQuery(path, "continue", cont);
    const std::string query = Query(path);
    kube::Result r = client_.Do({kube::Call::Verb::kList, query, nullptr, {}, Kept()});
    if (r.ok() || !r.error || r.error->reason != kube::kReasonTooLarge || limit <= 1 || Stopped()) return r;
    limit = std::max(1, limit / 2);
    if (logger_)
      logger_->warn("informer {}: list page too large ({}): asking for {} items", path_, r.error->message, limit);
  }
}

bool Reflector::ListAll() {
  std::map<std::string, std::string> items;
  std::string cont;
  std::string rv;
  int pages = 0;
  do {
    kube::Result r = ListPage(cont, page_limit_);
    std::size_t count = 0;
    if (Stopped() || !ReadPage(r, items, count)) return false;
    ++pages;
    page_limit_ = NextPageLimit(options_.pages, page_limit_, r.body_bytes, count);
    rv = text::MetadataString(r.body, "resourceVersion");
    cont = text::MetadataString(r.body, "continue");
  } while (!cont.empty());
  if (logger_)
    logger_->debug("informer {}: listed {} objects in {} pages at resourceVersion {}", path_, items.size(), pages, rv);
  sink_(store_.Replace(std::move(items), rv), true);
  return true;
}

bool Reflector::HandleEvent(const kube::WatchEvent& event, bool& gone, bool& failed) {
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
    if (!rv.empty()) store_.SetResourceVersion(rv);
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
    json object = Transformed(event.object);
    sink_({event.type == "DELETED" ? store_.Remove(key, std::move(object), rv)
                                   : store_.Upsert(key, std::move(object), rv)},
          false);
  } catch (const std::exception& e) {
    // A malformed object: skip it (its resourceVersion is still passed, so
    // a re-watch does not deliver it again).
    if (!rv.empty()) store_.SetResourceVersion(rv);
    if (logger_) logger_->error("informer {}: {} event for {} skipped: {}", path_, event.type, key, e.what());
  }
  return true;
}

std::string Reflector::WatchPath(const std::string& rv) {
  const auto min_s = std::max<int64_t>(1, options_.min_watch_timeout.count());
  std::uniform_int_distribution<int64_t> pick(min_s, 2 * min_s - 1);
  std::string path = kube::WithQuery(path_, "watch", "true");
  path = kube::WithQuery(path, "allowWatchBookmarks", "true");
  if (!rv.empty()) path = kube::WithQuery(path, "resourceVersion", rv);
  path = kube::WithQuery(path, "timeoutSeconds", std::to_string(pick(rng_)));
  return Query(path);
}

Reflector::WatchOutcome Reflector::WatchOnce() {
  const std::string rv = store_.ResourceVersion();
  const auto start = clock_.Now();
  size_t events = 0;
  bool gone = false;
  bool failed = false;
  const kube::Result r = client_.WatchKeeping(
      WatchPath(rv), Kept(),
      [&](const kube::WatchEvent& e) {
        ++events;
        return HandleEvent(e, gone, failed) && !Stopped();
      },
      stop_.get_token());
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
