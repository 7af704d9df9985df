#include "controller/modelservice/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "controller/modelservice/resources.h"

namespace ms::controller {

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
                            const std::string& key, const std::string& path) {
  if (!fresh && cache) {
    if (auto obj = cache(key)) return {200, std::move(*obj), std::nullopt};
    return {404, json(), kube::Status{404, "NotFound", "not in cache"}};
  }
  return client_.Get(path);
}

ReconcileResult Executor::Reconcile(const std::string& key) {
  const auto [ns, name] = SplitKey(key);
  ReconcileResult result;
  std::optional<WriteFailure> failure;
  bool fresh = false;

  for (int attempt = 0; attempt < max_attempts; ++attempt, fresh = true) {
    kube::Result ms_r = Read(cache_.model_service, fresh, key, ModelServicePath(ns, name));
    if (ms_r.IsNotFound()) {
      if (autoscaler_ != nullptr) autoscaler_->Forget(ns, name);
      result.gone = true;
      return result;
    }
    if (!ms_r.ok()) {
      result.outcome = ReconcileOutcome::kError;
      result.error = "get ModelService " + key + ": " + Describe(ms_r);
      return result;
    }
    json ms = std::move(ms_r.body);

    Observed observed;
    for (auto [cache, path, slot] : {std::tuple{&cache_.deployment, DeploymentPath(ns, name), &observed.deployment},
                                     std::tuple{&cache_.service, ServicePath(ns, name), &observed.service}}) {
      kube::Result r = Read(*cache, fresh, key, path);
      if (r.ok()) {
        *slot = std::move(r.body);
      } else if (!r.IsNotFound()) {
        result.outcome = ReconcileOutcome::kError;
        result.error = "get " + path + ": " + Describe(r);
        return result;
      }
    }

    const ModelServiceSpec spec = ParseSpec(ms, options_);
    const bool deleting = ms.contains("metadata") && ms["metadata"].contains("deletionTimestamp");
    result.autoscaled = spec.autoscaling.has_value() && !deleting;
    if (spec.autoscaling && !deleting) {
      const int current = observed.deployment ? DeploymentReplicas(*observed.deployment)
                                              : std::clamp(spec.replicas, spec.autoscaling->min_replicas,
                                                           spec.autoscaling->max_replicas);
      if (autoscaler_ != nullptr) {
        observed.recommendation = autoscaler_->Recommend(ns, name, *spec.autoscaling, current);
      } else {
        // TODO(controller/autoscale): always wired in main; a null autoscaler
        // only happens in tests or if the module is unavailable.
        observed.recommendation =
            autoscale::Recommendation{false, "MetricsUnavailable", "no autoscaler is configured", 0, current};
      }
    } else if (autoscaler_ != nullptr) {
      autoscaler_->Forget(ns, name);
    }
    observed.failure = failure;

    const Actions actions = controller::Reconcile(ms, observed, options_, clock_.WallNow());
    result.desired_replicas = deleting ? std::nullopt : std::optional<int>(actions.desired_replicas);
    result.ready_replicas = deleting ? std::nullopt : std::optional<int>(actions.ready_replicas);

    bool retry = false;  // re-read and reconcile again
    for (const Action& a : actions.writes) {
      kube::Result r;
      switch (a.type) {
        case ActionType::kPatchModelService:
          r = client_.Patch(a.path, kube::PatchType::kMerge, a.body);
          break;
        case ActionType::kCreate:
          r = client_.Create(a.path, a.body);
          break;
        case ActionType::kUpdate:
          r = client_.Update(a.path, a.body);
          break;
        case ActionType::kDelete:
          r = client_.Delete(a.path);
          break;
      }
      result.writes++;
      const std::string what = std::string(Verb(a.type)) + " " + a.kind + " " + key;
      if (r.ok()) {
        if (logger_) logger_->info("{}", what);
        if (a.type == ActionType::kPatchModelService && r.body.is_object()) ms = r.body;
        continue;
      }
      if (a.type == ActionType::kDelete && r.IsNotFound()) continue;
      if (a.type == ActionType::kPatchModelService && r.IsNotFound()) {
        result.gone = true;
        return result;
      }
      if (r.IsAlreadyExists() || (a.type == ActionType::kUpdate && r.IsNotFound())) {
        if (logger_) logger_->info("{}: {}; requeue", what, Describe(r));
        result.outcome = ReconcileOutcome::kRequeue;
        return result;
      }
      if (r.IsConflict()) {
        if (logger_) logger_->debug("{}: conflict; re-reading", what);
        retry = true;
        break;
      }
      if (a.type == ActionType::kCreate && IsPermanent(r) && !failure) {
        failure = WriteFailure{"CreateFailed", what + ": " + Describe(r)};
        if (logger_) logger_->error("{}", failure->message);
        retry = true;
        break;
      }
      events_.Record(ms, Event{"Warning", std::string(a.kind) + "WriteFailed", "Reconcile", what + ": " + Describe(r)});
      result.outcome = ReconcileOutcome::kError;
      result.error = what + ": " + Describe(r);
      return result;
    }
    if (retry) continue;

    if (actions.status) {
      json body = ms;
      body["status"] = *actions.status;
      kube::Result r = client_.Update(ModelServiceStatusPath(ns, name), body);
      result.writes++;
      if (r.IsConflict()) {
        if (logger_) logger_->debug("update status of {}: conflict; re-reading", key);
        continue;
      }
      if (r.IsNotFound()) {
        result.gone = true;
        return result;
      }
      if (!r.ok()) {
        result.outcome = ReconcileOutcome::kError;
        result.error = "update status of " + key + ": " + Describe(r);
        return result;
      }
    }
    for (const Event& e : actions.events) events_.Record(ms, e);

    if (failure) {
      result.outcome = ReconcileOutcome::kError;
      result.error = failure->message;
      return result;
    }
    // Deletion goes in steps: after deleting the owned objects, look again
    // (they are usually gone at once) and remove the finalizer.
    if (deleting && !actions.writes.empty() && actions.writes.back().type == ActionType::kDelete) continue;
    if (actions.requeue) {
      result.outcome = ReconcileOutcome::kRequeueAfter;
      result.requeue_after = std::chrono::seconds(1);
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

std::string OwnerKey(const json& object) {
  if (!object.is_object() || !object.contains("metadata")) return "";
  const json& meta = object["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return "";
  for (const auto& ref : meta["ownerReferences"]) {
    if (!ref.is_object() || !ref.value("controller", false)) continue;
    if (ref.value("kind", "") != api::kKind ||
        ref.value("apiVersion", "").rfind(std::string(api::kGroup) + "/", 0) != 0) {
      return "";
    }
    return meta.value("namespace", "") + "/" + ref.value("name", "");
  }
  return "";
}

Controller::Controller(Executor& executor, WorkQueue& queue, const Clock& clock, ControllerConfig config,
                       prometheus::Registry* registry, std::shared_ptr<spdlog::logger> logger)
    : executor_(executor), queue_(queue), clock_(clock), config_(std::move(config)), logger_(std::move(logger)) {
  if (registry != nullptr) {
    reconcile_total_ = &prometheus::BuildCounter()
                            .Name("controller_runtime_reconcile_total")
                            .Help("Total number of reconciliations per controller")
                            .Register(*registry);
    for (const char* r : {"success", "error", "requeue", "requeue_after"}) {
      reconcile_total_->Add({{"controller", config_.name}, {"result", r}});
    }
    errors_total_ = &prometheus::BuildCounter()
                         .Name("controller_runtime_reconcile_errors_total")
                         .Help("Total number of reconciliation errors per controller")
                         .Register(*registry)
                         .Add({{"controller", config_.name}});
    reconcile_time_ = &prometheus::BuildHistogram()
                           .Name("controller_runtime_reconcile_time_seconds")
                           .Help("Length of time per reconciliation per controller")
                           .Register(*registry)
                           .Add({{"controller", config_.name}},
                                prometheus::Histogram::BucketBoundaries{
                                    0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
                                    0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
                                    6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60});
    replicas_ = &prometheus::BuildGauge()
                     .Name("modelservice_replicas")
                     .Help("Replicas of a ModelService: desired (what the controller asks for) and ready")
                     .Register(*registry);
  }
}

Controller::~Controller() { Stop(); }

kube::EventHandler Controller::ModelServiceHandler() {
  auto enqueue = [this](const json& obj) {
    const std::string key = kube::ObjectKey(obj);
    if (!key.empty()) queue_.Add(key);
  };
  return {enqueue, [enqueue](const json&, const json& obj) { enqueue(obj); }, enqueue};
}

kube::EventHandler Controller::OwnedObjectHandler() {
  auto enqueue = [this](const json& obj) {
    const std::string key = OwnerKey(obj);
    if (!key.empty()) queue_.Add(key);
  };
  return {enqueue,
          [enqueue](const json& old_obj, const json& obj) {
            enqueue(obj);
            if (OwnerKey(old_obj) != OwnerKey(obj)) enqueue(old_obj);
          },
          enqueue};
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
  if (reconcile_time_ != nullptr) reconcile_time_->Observe(seconds);
  const char* result = "success";
  switch (r.outcome) {
    case ReconcileOutcome::kSuccess:
      queue_.Forget(key);
      if (r.autoscaled) queue_.AddAfter(key, ResyncDelay(key, config_.autoscale_interval, clock_.Now()));
      break;
    case ReconcileOutcome::kError:
      result = "error";
      if (errors_total_ != nullptr) errors_total_->Increment();
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
  if (reconcile_total_ != nullptr)
    reconcile_total_->Add({{"controller", config_.name}, {"result", result}}).Increment();

  if (replicas_ != nullptr) {
    const auto [ns, name] = SplitKey(key);
    const prometheus::Labels desired{{"namespace", ns}, {"name", name}, {"kind", "desired"}};
    const prometheus::Labels ready{{"namespace", ns}, {"name", name}, {"kind", "ready"}};
    if (r.gone) {
      metrics::RemoveSeries(*replicas_, desired);
      metrics::RemoveSeries(*replicas_, ready);
    } else {
      if (r.desired_replicas) replicas_->Add(desired).Set(*r.desired_replicas);
      if (r.ready_replicas) replicas_->Add(ready).Set(*r.ready_replicas);
    }
  }
}

}  // namespace ms::controller
