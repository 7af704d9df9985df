#include "controller/modelservice/executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>

#include "controller/modelservice/ownership.h"
#include "controller/modelservice/status.h"
#include "shared/api/types.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

// What one attempt observed.
struct Executor::World {
  runtime::Request request;
  std::optional<View> ms;  // read and resolved once per attempt
  Observed observed;
  bool deleting = false;
  bool live = false;  // the owned objects were read through the API
};

namespace {

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

bool HasUpdate(const Actions& actions) {
  return std::any_of(actions.writes.begin(), actions.writes.end(),
                     [](const Action& a) { return a.type == ActionType::kUpdate; });
}

}  // namespace

Executor::Executor(kube::Client& client, EventRecorder& events, autoscale::Autoscaler& autoscaler,
                   Expectations& expectations, const clock::Clock& clock, ExecutorOptions options,
                   ModelServiceMetrics& metrics, std::shared_ptr<spdlog::logger> logger, CachedReads cache)
    : client_(client),
      events_(events),
      autoscaler_(autoscaler),
      expectations_(expectations),
      clock_(clock),
      options_(std::move(options)),
      metrics_(metrics),
      logger_(std::move(logger)),
      cache_(std::move(cache)) {}

runtime::Result Executor::Reconcile(const runtime::Request& request) {
  const Report report = Run(request);
  RecordMetrics(request, report);
  if (report.result.outcome == runtime::Result::Outcome::kSuccess && (report.autoscaled || report.polled))
    return runtime::Result::Success(ResyncDelay(request.Key(), options_.autoscale_interval, clock_.Now()));
  return report.result;
}

void Executor::RecordMetrics(const runtime::Request& request, const Report& report) {
  if (!metrics_.per_object) return;  // --per-object-metrics=false
  if (report.gone) {
    metrics_.replicas.Remove(request.ns, request.name);
    metrics_.conditions.Remove(request.ns, request.name);
    metrics_.info.Remove(request.ns, request.name);
    return;
  }
  if (report.desired_replicas)
    metrics_.replicas.Put(request.ns, request.name, {{"desired"}, static_cast<double>(*report.desired_replicas)});
  if (report.ready_replicas)
    metrics_.replicas.Put(request.ns, request.name, {{"ready"}, static_cast<double>(*report.ready_replicas)});
  if (!report.status || !report.status->is_object()) return;
  std::vector<metrics::ObjectGauges::Series> conditions;
  if (auto c = report.status->find("conditions"); c != report.status->end() && c->is_array()) {
    for (const auto& cond : *c) {
      // The condition types the controller writes only: a status written by
      // someone else cannot add series.
      std::string type = text::StringField(cond, "type");
      if (type != api::kConditionReady && type != api::kConditionProgressing && type != api::kConditionDegraded)
        continue;
      if (std::any_of(conditions.begin(), conditions.end(), [&](const auto& s) { return s.labels[0] == type; }))
        continue;
      conditions.push_back(
          {{std::move(type), text::StringField(cond, "status"), text::StringField(cond, "reason")}, 1});
    }
  }
  metrics_.conditions.Set(request.ns, request.name, std::move(conditions));
  metrics_.info.Set(request.ns, request.name, {{{text::StringField(*report.status, "servingVersion")}, 1}});
}

Report Executor::Run(const runtime::Request& request) {
  Report report;
  std::optional<WriteFailure> failure;
  bool fresh = false;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt, fresh = true) {
    std::optional<World> w = ReadWorld(request, fresh, report);
    if (!w) return report;
    Recommend(*w, report);
    w->observed.failure = failure;
    const Actions actions = Plan(*w->ms, w->observed, options_.plan, clock_.WallNow());
    report.desired_replicas = w->deleting ? std::nullopt : std::optional<int>(actions.desired_replicas);
    report.ready_replicas = w->deleting ? std::nullopt : std::optional<int>(actions.ready_replicas);
    report.status = std::nullopt;
    if (!w->deleting) report.status = actions.status ? *actions.status : w->ms->object.value("status", json::object());
    // An update is computed on the object read through the API: the caches
    // hold only what the plan compares.
    if (HasUpdate(actions) && !w->live) continue;
    Step step = ApplyWrites(*w, actions, failure, report);
    if (step == Step::kNext) step = Finish(*w, actions, failure, report);
    if (step == Step::kStop) return report;
  }
  report.result =
      runtime::Result::Requeue("gave up after " + std::to_string(options_.max_attempts) + " attempts (conflicts)");
  return report;
}

Executor::Step Executor::Finish(World& w, const Actions& actions, const std::optional<WriteFailure>& failure,
                                Report& report) {
  if (actions.status) {
    const Step s = WriteStatus(w, *actions.status, report);
    if (s != Step::kNext) return s;
  }
  for (const Event& e : actions.events) events_.Record(w.ms->object, e);
  if (failure) {
    report.result = runtime::Result::Error(failure->message);
    return Step::kStop;
  }
  if (actions.look_again) return Step::kRetry;
  if (actions.name_conflict) {
    report.result = runtime::Result::RequeueAfter(options_.name_conflict_recheck);
  } else if (actions.requeue) {
    report.result = runtime::Result::RequeueAfter(std::chrono::seconds(1));
  }
  return Step::kStop;
}

kube::Result Executor::Read(const CachedReads::Read& cache, bool fresh, const std::string& key, const ObjectRef& ref,
                            bool& behind, bool* from_cache) {
  if (!fresh && cache) {
    std::optional<json> obj = cache(key);
    switch (expectations_.Check(ref, obj ? kube::ResourceVersionOf(*obj) : std::string())) {
      case Expectations::Cache::kCurrent:
        if (from_cache != nullptr) *from_cache = true;
        if (obj) return {200, std::move(*obj), std::nullopt};
        return {404, json(), kube::Status{404, "NotFound", "not in cache"}};
      case Expectations::Cache::kBehind:
        behind = true;
        return {200, json::object(), std::nullopt};
      case Expectations::Cache::kUnknown:
        break;
    }
  }
  expectations_.Forget(ref);
  return client_.Get(PathOf(ref));
}

std::optional<Executor::World> Executor::ReadWorld(const runtime::Request& request, bool fresh, Report& report) {
  World w;
  w.request = request;
  const ObjectRef ref{Kind::kModelService, request.ns, request.name};
  bool behind = false;
  kube::Result ms = Read(cache_.model_service, fresh, request.Key(), ref, behind);
  if (behind) {
    // The event of our own write comes next and queues the key again; look
    // again after the expectation's time to live in any case.
    report.result = runtime::Result::RequeueAfter(Expectations::kTtl);
    return std::nullopt;
  }
  if (ms.IsNotFound()) {
    autoscaler_.Forget(request.ns, request.name);
    autoscaler_.ForgetGpu(request.ns, request.name);
    for (Kind k : {Kind::kModelService, Kind::kDeployment, Kind::kService, Kind::kHorizontalPodAutoscaler})
      expectations_.Forget({k, request.ns, request.name});
    report.gone = true;
    return std::nullopt;
  }
  if (!ms.ok()) {
    report.result = runtime::Result::Error("get ModelService " + request.Key() + ": " + ms.Text());
    return std::nullopt;
  }
  w.ms.emplace(std::move(ms.body), options_.plan);
  w.deleting = BeingDeleted(w.ms->object);
  if (!ReadOwned(w, fresh, report)) return std::nullopt;
  if (cache_.pods) w.observed.pods = cache_.pods(request.Key());
  return w;
}

bool Executor::ReadOwned(World& w, bool fresh, Report& report) {
  // The cache may miss an object whose labels we do not watch: the finalizer
  // decision and a name conflict are made on what the API says.
  const json& ms = w.ms->object;
  const json* ready = FindCondition(ms.contains("status") ? &ms["status"] : nullptr, api::kConditionReady);
  const bool live = fresh || w.deleting || (ready != nullptr && ready->value("reason", "") == api::kReasonNameConflict);
  const std::string key = w.request.Key();
  w.live = true;
  for (auto [cache, kind, slot] : {std::tuple{&cache_.deployment, Kind::kDeployment, &w.observed.deployment},
                                   std::tuple{&cache_.service, Kind::kService, &w.observed.service},
                                   std::tuple{&cache_.hpa, Kind::kHorizontalPodAutoscaler, &w.observed.hpa}}) {
    const ObjectRef ref{kind, w.request.ns, w.request.name};
    bool behind = false, from_cache = false;
    kube::Result r = Read(*cache, live, key, ref, behind, &from_cache);
    if (behind) {
      report.result = runtime::Result::RequeueAfter(Expectations::kTtl);  // as for the ModelService
      return false;
    }
    if (from_cache) w.live = false;
    if (r.ok()) {
      *slot = std::move(r.body);
    } else if (!r.IsNotFound()) {
      report.result = runtime::Result::Error("get " + PathOf(ref) + ": " + r.Text());
      return false;
    }
  }
  return true;
}

void Executor::Recommend(World& w, Report& report) {
  const ResolvedSpec& spec = w.ms->spec;
  // Mode HPA: the HorizontalPodAutoscaler scales, the controller's autoscaler is not asked.
  report.autoscaled = spec.autoscaling.has_value() && !spec.hpa && !w.deleting;
  // status.gpuUtilization of the pods of GPU ModelServices (design.md §3).
  report.polled = !w.deleting && (spec.gpus > 0 || (report.autoscaled && spec.autoscaling->target_gpu_utilization > 0));
  if (report.polled) {
    w.observed.gpu = autoscaler_.Gpu(w.request.ns, w.request.name);
  } else {
    autoscaler_.ForgetGpu(w.request.ns, w.request.name);
  }
  if (!report.autoscaled) {
    autoscaler_.Forget(w.request.ns, w.request.name);
    return;
  }
  const json* dep =
      w.observed.deployment && IsControlledBy(*w.observed.deployment, spec.uid) ? &*w.observed.deployment : nullptr;
  w.observed.recommendation =
      autoscaler_.Recommend(w.request.ns, w.request.name, *spec.autoscaling, CurrentReplicas(spec, dep));
}

kube::Result Executor::Write(const Action& a) {
  switch (a.type) {
    case ActionType::kPatchModelService:
      return client_.Patch(PathOf(a.target), kube::PatchType::kMerge, a.body);
    case ActionType::kCreate:
      return client_.Create(CollectionPathOf(a.target), a.body);
    case ActionType::kUpdate:
      return client_.Update(PathOf(a.target), a.body);
    case ActionType::kDelete:
      return client_.Delete(PathOf(a.target), a.body);
  }
  return {};
}

Executor::Step Executor::ApplyWrites(World& w, const Actions& actions, std::optional<WriteFailure>& failure,
                                     Report& report) {
  for (const Action& a : actions.writes) {
    kube::Result r = Write(a);
    report.writes++;
    const std::string what = std::string(Verb(a.type)) + " " + Describe(a.target);
    if (r.ok()) {
      if (logger_) logger_->info("{}", what);
      if (a.type != ActionType::kDelete && r.body.is_object()) {
        const std::string read_rv = a.type == ActionType::kCreate              ? std::string()
                                    : a.type == ActionType::kPatchModelService ? kube::ResourceVersionOf(w.ms->object)
                                                                               : kube::ResourceVersionOf(a.body);
        expectations_.Wrote(a.target, read_rv, kube::ResourceVersionOf(r.body));
      }
      // The status goes with the ModelService's new resourceVersion.
      if (a.type == ActionType::kPatchModelService && r.body.is_object()) w.ms->object = std::move(r.body);
      continue;
    }
    if (a.type == ActionType::kDelete && r.IsNotFound()) continue;
    if (a.type == ActionType::kPatchModelService && r.IsNotFound()) {
      report.gone = true;
      return Step::kStop;
    }
    // The world is not what we read (a newer object, one the cache did not
    // show, or one deleted meanwhile): read it through the API and plan again.
    if (r.IsConflict() || r.IsAlreadyExists() || (a.type == ActionType::kUpdate && r.IsNotFound())) {
      if (logger_) logger_->debug("{}: {}; re-reading", what, r.Text());
      return Step::kRetry;
    }
    if (a.type == ActionType::kCreate && IsPermanent(r) && !failure) {
      failure = WriteFailure{api::kReasonCreateFailed, what + ": " + r.Text()};
      if (logger_) logger_->error("{}", failure->message);
      return Step::kRetry;
    }
    const std::string message = what + ": " + r.Text();
    events_.Record(w.ms->object,
                   Event{"Warning", std::string(KindName(a.target.kind)) + "WriteFailed", "Reconcile", message});
    report.result = runtime::Result::Error(message);
    return Step::kStop;
  }
  return Step::kNext;
}

Executor::Step Executor::WriteStatus(World& w, const json& status, Report& report) {
  // The /status subresource takes only the status from the body (and the
  // resourceVersion as a precondition): no need to send the rest.
  const json& ms = w.ms->object;
  const std::string& ns = w.request.ns;
  const std::string& name = w.request.name;
  json body = {{"apiVersion", ms.value("apiVersion", api::kApiVersion)},
               {"kind", ms.value("kind", api::kKind)},
               {"metadata", {{"name", name}, {"namespace", ns}, {"resourceVersion", kube::ResourceVersionOf(ms)}}},
               {"status", status}};
  kube::Result r = client_.Update(ModelServiceStatusPath(ns, name), body);
  report.writes++;
  if (r.IsConflict()) {
    if (logger_) logger_->debug("update status of {}/{}: conflict; re-reading", ns, name);
    return Step::kRetry;
  }
  if (r.IsNotFound()) {
    report.gone = true;
    return Step::kStop;
  }
  if (!r.ok()) {
    report.result = runtime::Result::Error("update status of " + ns + "/" + name + ": " + r.Text());
    return Step::kStop;
  }
  if (r.body.is_object())
    expectations_.Wrote({Kind::kModelService, ns, name}, kube::ResourceVersionOf(ms), kube::ResourceVersionOf(r.body));
  return Step::kNext;
}

clock::Clock::Duration ResyncDelay(const std::string& key, clock::Clock::Duration interval,
                                   clock::Clock::TimePoint now) {
  if (interval <= clock::Clock::Duration::zero()) return clock::Clock::Duration::zero();
  const auto n = interval.count();
  const auto slot =
      static_cast<clock::Clock::Duration::rep>(std::hash<std::string>{}(key) % static_cast<std::size_t>(n));
  const auto phase = ((now.time_since_epoch().count() % n) + n) % n;
  auto delay = ((slot - phase) % n + n) % n;
  if (delay < n / 2) delay += n;
  return clock::Clock::Duration(delay);
}

}  // namespace ms::modelservice
