#include "controller/modelservice/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "controller/modelservice/resources.h"
#include "controller/modelservice/status.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::string Describe(const kube::Result& r) {
  std::string s = std::to_string(r.code);
  if (r.error) {
    if (!r.error->reason.empty()) s += " " + r.error->reason;
    if (!r.error->message.empty()) s += ": " + r.error->message;
  }
  return s;
}

// A 4xx the API server will give again for the same request.
bool IsPermanent(const kube::Result& r) {
  return r.code >= 400 && r.code < 500 && r.code != 404 && r.code != 409 && r.code != 429 && r.code != 408;
}

const char* Verb(ActionType t) {
  switch (t) {
    case ActionType::kPatchModelService:
      return "patch";
    case ActionType::kCreate:
      return "create";
    case ActionType::kUpdate:
      return "update";
    case ActionType::kDelete:
      return "delete";
  }
  return "write";
}

}  // namespace

void WriteTracker::Wrote(const std::string& path, const std::string& read_rv, const std::string& written_rv) {
  if (written_rv.empty()) return;
  const auto now = clock_.Now();
  std::lock_guard<std::mutex> g(mu_);
  Expectation& e = pending_[path];
  if (now - e.at > ttl_) e = Expectation{};
  auto remember = [&e](const std::string& rv) {
    if (std::find(e.before.begin(), e.before.end(), rv) == e.before.end()) e.before.push_back(rv);
  };
  remember(read_rv);  // "" for a create: absent from the cache is behind it
  if (!e.latest.empty()) remember(e.latest);
  constexpr size_t kMaxBefore = 8;
  if (e.before.size() > kMaxBefore) e.before.erase(e.before.begin());
  e.latest = written_rv;
  e.at = now;
}

void WriteTracker::Seen(const std::string& path, const std::string& rv) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pending_.find(path);
  if (it != pending_.end() && it->second.latest == rv) pending_.erase(it);
}

void WriteTracker::Forget(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  pending_.erase(path);
}

WriteTracker::Cache WriteTracker::Check(const std::string& path, const std::string& cached_rv) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pending_.find(path);
  if (it == pending_.end() || it->second.latest == cached_rv) return Cache::kCurrent;
  if (clock_.Now() - it->second.at > ttl_) return Cache::kUnknown;
  const auto& before = it->second.before;
  return std::find(before.begin(), before.end(), cached_rv) != before.end() ? Cache::kBehind : Cache::kUnknown;
}

size_t WriteTracker::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return pending_.size();
}

Executor::Executor(kube::Client& client, EventRecorder& events, autoscale::Autoscaler* autoscaler, const Clock& clock,
                   Options options, std::shared_ptr<spdlog::logger> logger, CachedReads cache)
    : client_(client),
      events_(events),
      autoscaler_(autoscaler),
      clock_(clock),
      options_(std::move(options)),
      logger_(std::move(logger)),
      cache_(std::move(cache)) {}

kube::Result Executor::Read(const std::function<std::optional<json>(const std::string&)>& cache, bool fresh,
                            const std::string& key, const std::string& path, bool& behind, bool* from_cache) {
  if (!fresh && cache) {
    std::optional<json> obj = cache(key);
    switch (written_.Check(path, obj ? kube::ResourceVersionOf(*obj) : std::string())) {
      case WriteTracker::Cache::kCurrent:
        if (from_cache != nullptr) *from_cache = true;
        if (obj) return {200, std::move(*obj), std::nullopt};
        return {404, json(), kube::Status{404, "NotFound", "not in cache"}};
      case WriteTracker::Cache::kBehind:
        behind = true;
        return {200, json::object(), std::nullopt};
      case WriteTracker::Cache::kUnknown:
        break;
    }
  }
  written_.Forget(path);
  return client_.Get(path);
}

namespace {

// The API path of an object the controller caches, from its kind.
std::string PathOf(const json& obj) {
  const std::string kind = obj.is_object() ? obj.value("kind", "") : "";
  const std::string key = kube::ObjectKey(obj);
  const auto [ns, name] = SplitKey(key);
  if (name.empty()) return "";
  if (kind == api::kKind) return ModelServicePath(ns, name);
  if (kind == "Deployment") return DeploymentPath(ns, name);
  if (kind == "Service") return ServicePath(ns, name);
  if (kind == "HorizontalPodAutoscaler") return HorizontalPodAutoscalerPath(ns, name);
  return "";
}

}  // namespace

void Executor::Seen(const json& object) {
  if (std::string path = PathOf(object); !path.empty()) written_.Seen(path, kube::ResourceVersionOf(object));
}

void Executor::SeenDeleted(const json& object) {
  if (std::string path = PathOf(object); !path.empty()) written_.Forget(path);
}

std::optional<Executor::World> Executor::ReadWorld(const std::string& key, bool fresh, ReconcileResult& result) {
  World w;
  std::tie(w.ns, w.name) = SplitKey(key);
  const std::string ms_path = ModelServicePath(w.ns, w.name);
  bool behind = false;
  kube::Result ms = Read(cache_.model_service, fresh, key, ms_path, behind);
  // The event of our own write comes next and queues the key again; look
  // again after the expectation's time to live in any case.
  auto wait_for_own_write = [&result] {
    result.outcome = ReconcileOutcome::kRequeueAfter;
    result.requeue_after = kExpectationTtl;
    return std::nullopt;
  };
  if (behind) return wait_for_own_write();
  if (ms.IsNotFound()) {
    if (autoscaler_ != nullptr) autoscaler_->Forget(w.ns, w.name);
    for (const auto& path : {ms_path, DeploymentPath(w.ns, w.name), ServicePath(w.ns, w.name)}) written_.Forget(path);
    result.gone = true;
    return std::nullopt;
  }
  if (!ms.ok()) {
    result.outcome = ReconcileOutcome::kError;
    result.error = "get ModelService " + key + ": " + Describe(ms);
    return std::nullopt;
  }
  w.ms = std::move(ms.body);
  w.deleting = BeingDeleted(w.ms);
  // The cache may miss an object whose labels we do not watch: the finalizer
  // decision and a name conflict are made on what the API says.
  const json* st = w.ms.contains("status") ? &w.ms["status"] : nullptr;
  const json* ready = FindCondition(st, "Ready");
  const bool live = fresh || w.deleting || (ready != nullptr && ready->value("reason", "") == kNameConflict);
  w.live = true;
  for (auto [cache, path, slot] :
       {std::tuple{&cache_.deployment, DeploymentPath(w.ns, w.name), &w.observed.deployment},
        std::tuple{&cache_.service, ServicePath(w.ns, w.name), &w.observed.service},
        std::tuple{&cache_.hpa, HorizontalPodAutoscalerPath(w.ns, w.name), &w.observed.hpa}}) {
    bool from_cache = false;
    kube::Result r = Read(*cache, live, key, path, behind, &from_cache);
    if (behind) return wait_for_own_write();
    if (from_cache) w.live = false;
    if (r.ok()) {
      *slot = std::move(r.body);
    } else if (!r.IsNotFound()) {
      result.outcome = ReconcileOutcome::kError;
      result.error = "get " + path + ": " + Describe(r);
      return std::nullopt;
    }
  }
  if (cache_.pods) w.observed.pods = cache_.pods(key);
  return w;
}

void Executor::Recommend(World& w, ReconcileResult& result) {
  const ModelServiceSpec spec = ParseSpec(w.ms, options_);
  // Mode HPA: the HorizontalPodAutoscaler scales, the controller's autoscaler is not asked.
  result.autoscaled = spec.autoscaling.has_value() && !spec.hpa && !w.deleting;
  if (!result.autoscaled) {
    if (autoscaler_ != nullptr) autoscaler_->Forget(w.ns, w.name);
    return;
  }
  const json* dep =
      w.observed.deployment && IsControlledBy(*w.observed.deployment, spec.uid) ? &*w.observed.deployment : nullptr;
  const int current = CurrentReplicas(spec, dep);
  if (autoscaler_ != nullptr) {
    w.observed.recommendation = autoscaler_->Recommend(w.ns, w.name, *spec.autoscaling, current);
  } else {
    // TODO(controller/autoscale): always wired in main; a null autoscaler
    // only happens in tests or if the module is unavailable.
    w.observed.recommendation =
        autoscale::Recommendation{false, "MetricsUnavailable", "no autoscaler is configured", 0, current};
  }
}

kube::Result Executor::Write(const Action& a) {
  switch (a.type) {
    case ActionType::kPatchModelService:
      return client_.Patch(a.path, kube::PatchType::kMerge, a.body);
    case ActionType::kCreate:
      return client_.Create(a.path, a.body);
    case ActionType::kUpdate:
      return client_.Update(a.path, a.body);
    case ActionType::kDelete:
      return client_.Delete(a.path);
  }
  return {};
}

Executor::Step Executor::ApplyWrites(World& w, const Actions& actions, std::optional<WriteFailure>& failure,
                                     bool& changed, ReconcileResult& result) {
  const std::string key = w.ns + "/" + w.name;
  for (const Action& a : actions.writes) {
    kube::Result r = Write(a);
    result.writes++;
    const std::string what = std::string(Verb(a.type)) + " " + a.kind + " " + key;
    if (r.ok()) {
      if (logger_) logger_->info("{}", what);
      if (a.type != ActionType::kDelete && r.body.is_object()) {
        const bool create = a.type == ActionType::kCreate;
        const std::string read_rv = create                                     ? std::string()
                                    : a.type == ActionType::kPatchModelService ? kube::ResourceVersionOf(w.ms)
                                                                               : kube::ResourceVersionOf(a.body);
        written_.Wrote(create ? a.path + "/" + w.name : a.path.substr(0, a.path.find('?')), read_rv,
                       kube::ResourceVersionOf(r.body));
      }
      if (a.type == ActionType::kPatchModelService && r.body.is_object()) w.ms = std::move(r.body);
      if ((a.type == ActionType::kCreate || a.type == ActionType::kUpdate) && r.body.is_object()) {
        (a.kind == "Deployment" ? w.observed.deployment
         : a.kind == "Service"  ? w.observed.service
                                : w.observed.hpa) = std::move(r.body);
        changed = true;
      }
      continue;
    }
    if (a.type == ActionType::kDelete && r.IsNotFound()) continue;
    if (a.type == ActionType::kPatchModelService && r.IsNotFound()) {
      result.gone = true;
      return Step::kStop;
    }
    // The world is not what we read (a newer object, one the cache did not
    // show, or one deleted meanwhile): read it through the API and reconcile again.
    if (r.IsConflict() || r.IsAlreadyExists() || (a.type == ActionType::kUpdate && r.IsNotFound())) {
      if (logger_) logger_->debug("{}: {}; re-reading", what, Describe(r));
      return Step::kRetry;
    }
    if (a.type == ActionType::kCreate && IsPermanent(r) && !failure) {
      failure = WriteFailure{"CreateFailed", what + ": " + Describe(r)};
      if (logger_) logger_->error("{}", failure->message);
      return Step::kRetry;
    }
    events_.Record(w.ms, Event{"Warning", a.kind + "WriteFailed", "Reconcile", what + ": " + Describe(r)});
    result.outcome = ReconcileOutcome::kError;
    result.error = what + ": " + Describe(r);
    return Step::kStop;
  }
  return Step::kNext;
}

Executor::Step Executor::WriteStatus(World& w, const json& status, ReconcileResult& result) {
  // The /status subresource takes only the status from the body (and the
  // resourceVersion as a precondition): no need to send the rest.
  const json& meta = w.ms["metadata"];
  json body = {
      {"apiVersion", w.ms.value("apiVersion", api::kApiVersion)},
      {"kind", w.ms.value("kind", api::kKind)},
      {"metadata", {{"name", w.name}, {"namespace", w.ns}, {"resourceVersion", meta.value("resourceVersion", "")}}},
      {"status", status}};
  const std::string path = ModelServicePath(w.ns, w.name);
  kube::Result r = client_.Update(ModelServiceStatusPath(w.ns, w.name), body);
  result.writes++;
  if (r.IsConflict()) {
    if (logger_) logger_->debug("update status of {}/{}: conflict; re-reading", w.ns, w.name);
    return Step::kRetry;
  }
  if (r.IsNotFound()) {
    result.gone = true;
    return Step::kStop;
  }
  if (!r.ok()) {
    result.outcome = ReconcileOutcome::kError;
    result.error = "update status of " + w.ns + "/" + w.name + ": " + Describe(r);
    return Step::kStop;
  }
  if (r.body.is_object()) written_.Wrote(path, kube::ResourceVersionOf(w.ms), kube::ResourceVersionOf(r.body));
  return Step::kNext;
}

ReconcileResult Executor::Reconcile(const std::string& key) {
  ReconcileResult result;
  std::optional<WriteFailure> failure;
  bool fresh = false;
  for (int attempt = 0; attempt < max_attempts; ++attempt, fresh = true) {
    std::optional<World> w = ReadWorld(key, fresh, result);
    if (!w) return result;
    Recommend(*w, result);
    w->observed.failure = failure;
    const auto now = clock_.WallNow();
    Actions actions = modelservice::Reconcile(w->ms, w->observed, options_, now);
    result.desired_replicas = w->deleting ? std::nullopt : std::optional<int>(actions.desired_replicas);
    result.ready_replicas = w->deleting ? std::nullopt : std::optional<int>(actions.ready_replicas);
    // An update is computed on the object read through the API: the caches
    // hold only what the reconciler compares.
    const bool updates = std::any_of(actions.writes.begin(), actions.writes.end(),
                                     [](const Action& a) { return a.type == ActionType::kUpdate; });
    if (updates && !w->live) continue;

    bool changed = false;
    const Step step = ApplyWrites(*w, actions, failure, changed, result);
    if (step == Step::kStop) return result;
    if (step == Step::kRetry) continue;
    if (changed) {
      // The status of the world after the writes (a new Deployment makes it
      // Progressing at once, not Pending until the next event).
      Actions after = modelservice::Reconcile(w->ms, w->observed, options_, now);
      actions.status = std::move(after.status);
      actions.ready_replicas = after.ready_replicas;
    }
    if (actions.status) {
      const Step s = WriteStatus(*w, *actions.status, result);
      if (s == Step::kStop) return result;
      if (s == Step::kRetry) continue;
    }
    for (const Event& e : actions.events) events_.Record(w->ms, e);

    if (failure) {
      result.outcome = ReconcileOutcome::kError;
      result.error = failure->message;
      return result;
    }
    if (actions.look_again) continue;
    if (actions.name_conflict || actions.requeue) {
      result.outcome = ReconcileOutcome::kRequeueAfter;
      result.requeue_after = actions.name_conflict ? name_conflict_recheck : std::chrono::seconds(1);
    }
    return result;
  }
  result.outcome = ReconcileOutcome::kRequeue;
  result.error = "gave up after " + std::to_string(max_attempts) + " attempts (conflicts)";
  return result;
}

Clock::Duration ResyncDelay(const std::string& key, Clock::Duration interval, Clock::TimePoint now) {
  if (interval <= Clock::Duration::zero()) return Clock::Duration::zero();
  const auto n = interval.count();
  const auto slot = static_cast<Clock::Duration::rep>(std::hash<std::string>{}(key) % static_cast<std::size_t>(n));
  const auto phase = ((now.time_since_epoch().count() % n) + n) % n;
  auto delay = ((slot - phase) % n + n) % n;
  if (delay < n / 2) delay += n;
  return Clock::Duration(delay);
}

Controller::Controller(Executor& executor, runtime::WorkQueue& queue, const Clock& clock, ControllerConfig config,
                       runtime::ReconcileMetrics& reconcile_metrics, ModelServiceMetrics& metrics,
                       std::shared_ptr<spdlog::logger> logger)
    : executor_(executor),
      queue_(queue),
      clock_(clock),
      config_(std::move(config)),
      logger_(std::move(logger)),
      reconcile_metrics_(reconcile_metrics),
      errors_total_(reconcile_metrics.errors.Add({{"controller", config_.name}})),
      reconcile_time_(reconcile_metrics.time.Add({{"controller", config_.name}}, runtime::ReconcileMetrics::Buckets())),
      replicas_(metrics.replicas) {
  for (const char* r : runtime::ReconcileMetrics::kResults)
    reconcile_metrics_.total.Add({{"controller", config_.name}, {"result", r}});
}

Controller::~Controller() { Stop(); }

runtime::EventHandler Controller::ModelServiceHandler() {
  auto enqueue = [this](const json& obj) {
    executor_.Seen(obj);
    const std::string key = kube::ObjectKey(obj);
    if (!key.empty()) queue_.Add(key);
  };
  return {enqueue, [enqueue](const json&, const json& obj) { enqueue(obj); },
          [this](const json& obj) {
            executor_.SeenDeleted(obj);
            const std::string key = kube::ObjectKey(obj);
            if (!key.empty()) queue_.Add(key);
          }};
}

runtime::EventHandler Controller::OwnedObjectHandler() {
  auto enqueue = [this](const json& obj) {
    std::string key = OwnerKey(obj);
    if (key.empty()) key = kube::ObjectKey(obj);
    if (!key.empty()) queue_.Add(key);
  };
  return {[this, enqueue](const json& obj) {
            executor_.Seen(obj);
            enqueue(obj);
          },
          [this, enqueue](const json& old_obj, const json& obj) {
            executor_.Seen(obj);
            enqueue(obj);
            if (OwnerKey(old_obj) != OwnerKey(obj)) enqueue(old_obj);
          },
          [this, enqueue](const json& obj) {
            executor_.SeenDeleted(obj);
            enqueue(obj);
          }};
}

void Controller::Start() {
  for (int i = 0; i < std::max(1, config_.concurrency); ++i) {
    workers_.emplace_back([this] {
      while (ProcessNextItem()) {
      }
    });
  }
}

void Controller::Stop() {
  if (stopped_.exchange(true)) return;
  queue_.ShutDownWithDrain();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

bool Controller::ProcessNextItem() {
  auto key = queue_.Get();
  if (!key) return false;
  const auto start = clock_.Now();
  ReconcileResult r;
  try {
    r = executor_.Reconcile(*key);
  } catch (const std::exception& e) {
    r.outcome = ReconcileOutcome::kError;
    r.error = std::string("exception: ") + e.what();
  }
  Handle(*key, r, std::chrono::duration<double>(clock_.Now() - start).count());
  queue_.Done(*key);
  return true;
}

void Controller::Handle(const std::string& key, const ReconcileResult& r, double seconds) {
  reconcile_time_.Observe(seconds);
  const char* result = "success";
  switch (r.outcome) {
    case ReconcileOutcome::kSuccess:
      queue_.Forget(key);
      if (r.autoscaled) queue_.AddAfter(key, ResyncDelay(key, config_.autoscale_interval, clock_.Now()));
      break;
    case ReconcileOutcome::kError:
      result = "error";
      errors_total_.Increment();
      if (logger_) logger_->error("reconcile {}: {}", key, r.error);
      queue_.AddRateLimited(key);
      break;
    case ReconcileOutcome::kRequeue:
      result = "requeue";
      queue_.AddRateLimited(key);
      break;
    case ReconcileOutcome::kRequeueAfter:
      result = "requeue_after";
      queue_.Forget(key);
      queue_.AddAfter(key, r.requeue_after);
      break;
  }
  reconcile_metrics_.total.Add({{"controller", config_.name}, {"result", result}}).Increment();

  const auto [ns, name] = SplitKey(key);
  const prometheus::Labels desired{{"namespace", ns}, {"name", name}, {"kind", "desired"}};
  const prometheus::Labels ready{{"namespace", ns}, {"name", name}, {"kind", "ready"}};
  if (r.gone) {
    metrics::RemoveSeries(replicas_, desired);
    metrics::RemoveSeries(replicas_, ready);
  } else {
    if (r.desired_replicas) replicas_.Add(desired).Set(*r.desired_replicas);
    if (r.ready_replicas) replicas_.Add(ready).Set(*r.ready_replicas);
  }
}

}  // namespace ms::modelservice
