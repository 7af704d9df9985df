#include "controller/modelservice/events.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "base/timefmt.h"
#include "controller/modelservice/resources.h"

namespace ms::controller {

using nlohmann::json;

json BuildEvent(const json& regarding, const Event& event, const std::string& reporting_instance, Clock::WallTime now,
                uint64_t sequence) {
  const json& meta = regarding.contains("metadata") ? regarding["metadata"] : json::object();
  const std::string name = meta.value("name", "unknown");
  const std::string ns = meta.value("namespace", "default");
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos) + sequence);
  json ref = {{"apiVersion", regarding.value("apiVersion", api::kApiVersion)},
              {"kind", regarding.value("kind", api::kKind)},
              {"name", name},
              {"namespace", ns}};
  if (meta.contains("uid")) ref["uid"] = meta["uid"];
  if (meta.contains("resourceVersion")) ref["resourceVersion"] = meta["resourceVersion"];
  std::string note = event.message;
  if (note.size() > 1024) note.resize(1024);  // the API's limit for `note`
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name + suffix}, {"namespace", ns}}},
          {"eventTime", FormatMicroTime(now)},
          {"reportingController", kReportingController},
          {"reportingInstance", reporting_instance},
          {"action", event.action.empty() ? "Reconcile" : event.action},
          {"reason", event.reason},
          {"note", note},
          {"type", event.type},
          {"regarding", ref}};
}

KubeEventRecorder::KubeEventRecorder(kube::Client& client, const Clock& clock, std::string reporting_instance,
                                     std::shared_ptr<spdlog::logger> logger)
    : client_(client), clock_(clock), instance_(std::move(reporting_instance)), logger_(std::move(logger)) {}

void KubeEventRecorder::Record(const json& regarding, const Event& event) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(mu_);
    seq = sequence_++;
  }
  json body = BuildEvent(regarding, event, instance_, clock_.WallNow(), seq);
  const std::string ns = body["metadata"]["namespace"];
  auto r = client_.Create(kube::CollectionPath("events.k8s.io", "v1", "events", ns), body);
  if (!r.ok() && logger_) {
    logger_->warn("could not write event {} {} for {}/{}: {} {}", event.type, event.reason, ns,
                  body["regarding"]["name"].get<std::string>(), r.code, r.error ? r.error->message : "");
  }
}

}  // namespace ms::controller
