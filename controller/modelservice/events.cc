#include "controller/modelservice/events.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <random>

#include "controller/modelservice/resources.h"
#include "shared/clock/timefmt.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

constexpr const char* kSourceComponent = "modelservice-controller";
constexpr int kMaxTries = 12;                                             // client-go's maxTriesPerEvent
constexpr clock::Clock::Duration kRetrySleep = std::chrono::seconds(10);  // client-go's defaultSleepDuration
constexpr size_t kMaxMessage = 1024;

}  // namespace

json EventReference(const json& regarding) {
  static const json kEmpty = json::object();
  const json& meta =
      regarding.contains("metadata") && regarding["metadata"].is_object() ? regarding["metadata"] : kEmpty;
  json ref = {{"apiVersion", text::StringField(regarding, "apiVersion", api::kApiVersion)},
              {"kind", text::StringField(regarding, "kind", api::kKind)},
              {"name", text::StringField(meta, "name", "unknown")},
              {"namespace", text::StringField(meta, "namespace", "default")}};
  for (const char* f : {"uid", "resourceVersion"}) {
    if (std::string v = text::StringField(meta, f); !v.empty()) ref[f] = v;
  }
  return ref;
}

namespace {

bool Retryable(const kube::Result& r) { return r.code == 0 || r.code == 429 || r.code >= 500; }

}  // namespace

json BuildEvent(const json& ref, const Event& event, const std::string& reporting_instance,
                const runtime::CorrelatedEvent& c, clock::Clock::WallTime now) {
  std::string message = c.message;
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", c.name}, {"namespace", ref["namespace"]}}},
          {"involvedObject", ref},
          {"reason", event.reason},
          {"message", message},
          {"type", event.type},
          {"action", event.action.empty() ? "Reconcile" : event.action},
          {"source", {{"component", kSourceComponent}, {"host", reporting_instance}}},
          {"reportingComponent", kReportingController},
          {"reportingInstance", reporting_instance},
          {"firstTimestamp", clock::FormatTime(c.first_timestamp)},
          {"lastTimestamp", clock::FormatTime(now)},
          {"count", c.count}};
}

KubeEventRecorder::KubeEventRecorder(kube::Client& client, const clock::Clock& clock, std::string reporting_instance,
                                     std::shared_ptr<spdlog::logger> logger, size_t max_queued)
    : client_(client),
      clock_(clock),
      instance_(std::move(reporting_instance)),
      logger_(std::move(logger)),
      max_queued_(max_queued),
      correlator_(clock),
      writer_([this] { Run(); }) {}

KubeEventRecorder::~KubeEventRecorder() { Shutdown(); }

void KubeEventRecorder::Record(const json& regarding, const Event& event) {
  Pending p{EventReference(regarding), event};
  std::lock_guard<std::mutex> g(mu_);
  if (stopping_) return;
  if (queue_.size() >= max_queued_) {
    if (dropped_++ % 100 == 0 && logger_) {
      logger_->warn("event queue full ({} events): dropping {} {} ({} dropped so far)", max_queued_, event.type,
                    event.reason, dropped_);
    }
    return;
  }
  queue_.push_back(std::move(p));
  cv_.notify_all();
}

void KubeEventRecorder::Shutdown(clock::Clock::Duration drain) {
  std::optional<size_t> dropped;  // set when this call abandons what is queued
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!stopping_) {
      stopping_ = true;
      drain_deadline_ = clock_.Now() + drain;
      abandon_ = drain <= clock::Clock::Duration::zero();
      if (abandon_) dropped = queue_.size();
    }
    cv_.notify_all();
  }
  if (dropped && logger_) logger_->info("event recorder stopping: {} queued events dropped", *dropped);
  if (writer_.joinable()) writer_.join();
}

void KubeEventRecorder::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return (queue_.empty() && in_flight_ == 0) || !writer_.joinable(); });
}

uint64_t KubeEventRecorder::dropped() const {
  std::lock_guard<std::mutex> g(mu_);
  return dropped_;
}

bool KubeEventRecorder::Sleep(clock::Clock::Duration d) {
  const auto deadline = clock_.Now() + d;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_ && clock_.Now() < deadline) clock_.WaitUntil(cv_, lock, deadline);
  return !stopping_;
}

void KubeEventRecorder::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_ && (queue_.empty() || abandon_ || clock_.Now() >= drain_deadline_)) break;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    in_flight_++;
    lock.unlock();
    try {
      Write(p);
    } catch (const std::exception& e) {
      if (logger_) logger_->error("writing event {} {}: {}", p.event.type, p.event.reason, e.what());
    }
    lock.lock();
    in_flight_--;
    cv_.notify_all();
  }
  queue_.clear();
  cv_.notify_all();
}

void KubeEventRecorder::Write(const Pending& p) {
  const json& ref = p.involved_object;
  runtime::EventFields fields;
  fields.source = std::string(kSourceComponent) + "/" + instance_;
  fields.object_name = ref["name"].get<std::string>();
  for (const char* f : {"kind", "namespace", "name", "uid", "apiVersion"})
    fields.object += text::StringField(ref, f) + "/";
  fields.type = p.event.type;
  fields.reason = p.event.reason;
  fields.message = p.event.message;
  const runtime::CorrelatedEvent c = correlator_.Correlate(fields);
  if (c.skip) return;

  const std::string ns = ref["namespace"].get<std::string>();
  json body = BuildEvent(ref, p.event, instance_, c, clock_.WallNow());
  for (int tries = 1;; ++tries) {
    kube::Result r;
    if (c.count > 1) {
      json patch = {{"count", body["count"]}, {"lastTimestamp", body["lastTimestamp"]}, {"message", body["message"]}};
      r = client_.Patch(kube::ObjectPath("", "v1", "events", ns, c.name), kube::PatchType::kMerge, patch);
    }
    if (c.count == 1 || r.IsNotFound()) r = client_.Create(kube::CollectionPath("", "v1", "events", ns), body);
    if (r.ok()) return;
    const bool retry = Retryable(r) && tries < kMaxTries;
    if (logger_) {
      logger_->warn("could not write event {} {} for {}/{}: {} {}{}", p.event.type, p.event.reason, ns,
                    fields.object_name, r.code, r.error ? r.error->message : "", retry ? " (will retry)" : "");
    }
    if (!retry) return;
    auto delay = kRetrySleep;
    if (tries == 1)
      delay = std::chrono::duration_cast<clock::Clock::Duration>(delay * std::uniform_real_distribution<>(0, 1)(rng_));
    if (!Sleep(delay)) return;
  }
}

}  // namespace ms::modelservice
