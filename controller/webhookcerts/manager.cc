#include "controller/webhookcerts/manager.h"

#include <algorithm>

#include "controller/kube/paths.h"
#include "controller/webhookcerts/issuer.h"
#include "shared/text/json_fields.h"

namespace ms::webhookcerts {

namespace {

// Informer caches keep only what identifies the object: they only wake the loop.
nlohmann::json Identity(const nlohmann::json& o) {
  return {{"metadata",
           {{"name", text::MetadataString(o, "name")},
            {"namespace", text::MetadataString(o, "namespace")},
            {"resourceVersion", text::MetadataString(o, "resourceVersion")}}}};
}

std::string ErrorText(const std::string& what, const kube::Result& r) { return what + ": " + r.Text(); }

double UnixSeconds(WallTime t) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace

Manager::Manager(kube::Client& client, const clock::Clock& clock, Settings settings, CertificateMetrics& metrics,
                 std::shared_ptr<spdlog::logger> logger, std::unique_ptr<Issuer> issuer, ManagerOptions options)
    : client_(client),
      clock_(clock),
      settings_(std::move(settings)),
      policy_(MakePolicy(settings_)),
      logger_(std::move(logger)),
      issuer_(issuer ? std::move(issuer) : std::make_unique<OpensslIssuer>()),
      options_(options),
      metrics_(metrics),
      backoff_(options.initial_backoff, options.max_backoff) {
  const std::string group = "admissionregistration.k8s.io";
  if (!settings_.validating_configuration.empty())
    targets_.push_back(
        {"ValidatingWebhookConfiguration", settings_.validating_configuration,
         kube::ObjectPath(group, "v1", "validatingwebhookconfigurations", "", settings_.validating_configuration)});
  if (!settings_.mutating_configuration.empty())
    targets_.push_back(
        {"MutatingWebhookConfiguration", settings_.mutating_configuration,
         kube::ObjectPath(group, "v1", "mutatingwebhookconfigurations", "", settings_.mutating_configuration)});
}

Manager::~Manager() { Stop(); }

std::string Manager::SecretPath() const {
  return kube::ObjectPath("", "v1", "secrets", settings_.secret_namespace, settings_.secret_name);
}

void Manager::Start() {
  // One watch per object, narrowed by name (RBAC resourceNames then apply to list and watch too).
  auto one = [](const std::string& collection, const std::string& name) {
    return kube::WithQuery(collection, "fieldSelector", "metadata.name=" + name);
  };
  runtime::InformerOptions io;
  io.transform = Identity;
  informers_.push_back(std::make_unique<runtime::Informer>(
      client_, clock_, logger_,
      one(kube::CollectionPath("", "v1", "secrets", settings_.secret_namespace), settings_.secret_name), "", "", io));
  for (const Target& t : targets_) {
    const std::string collection = t.path.substr(0, t.path.rfind('/'));
    informers_.push_back(
        std::make_unique<runtime::Informer>(client_, clock_, logger_, one(collection, t.name), "", "", io));
  }
  for (auto& inf : informers_) {
    auto wake = [this](const nlohmann::json&) { Trigger(); };
    inf->AddEventHandler({wake, [this](const nlohmann::json&, const nlohmann::json&) { Trigger(); }, wake});
    threads_.emplace_back([inf = inf.get()](std::stop_token stop) { inf->Run(stop); });
  }
  threads_.emplace_back([this](std::stop_token stop) { Loop(stop); });
}

void Manager::Lead() {
  if (logger_) {
    std::string names;
    for (const Target& t : targets_) names += (names.empty() ? "" : ", ") + t.kind + " " + t.name;
    logger_->info("leading: keeping the webhook certificates in Secret {}/{} and the caBundle of {}",
                  settings_.secret_namespace, settings_.secret_name, names.empty() ? "no configuration" : names);
  }
  std::lock_guard<std::mutex> g(mu_);
  leading_ = true;
  triggered_ = true;
  cv_.notify_all();
}

void Manager::Trigger() {
  std::lock_guard<std::mutex> g(mu_);
  triggered_ = true;
  cv_.notify_all();
}

void Manager::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  for (auto& inf : informers_) inf->Stop();
  threads_.clear();  // request_stop + join
}

void Manager::Loop(std::stop_token stop) {
  std::stop_callback on_stop(stop, [this] {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (leading_ && (triggered_ || clock_.Now() >= next_)) {
      triggered_ = false;
      lock.unlock();
      const clock::Clock::Duration delay = SyncOnce();
      lock.lock();
      next_ = clock_.Now() + delay;
      continue;
    }
    clock_.WaitUntil(cv_, lock, leading_ ? next_ : clock_.Now() + std::chrono::hours(1));
  }
}

bool Manager::Read(const std::string& path, std::optional<nlohmann::json>* out, std::string* error) {
  kube::Result r = client_.Get(path);
  if (r.IsNotFound()) {
    out->reset();
    return true;
  }
  if (!r.ok() || !r.body.is_object()) {
    *error = ErrorText("GET " + path, r);
    return false;
  }
  *out = std::move(r.body);
  return true;
}

bool Manager::Observe(Snapshot* snap, std::string* error) {
  if (!Read(SecretPath(), &snap->secret, error)) return false;
  if (snap->secret) {
    std::vector<std::string> notes;
    snap->observed.secret = ParseSecret(*snap->secret, &notes);
    for (const auto& n : notes)
      if (logger_) logger_->warn("Secret {}/{}: {}", settings_.secret_namespace, settings_.secret_name, n);
  }
  for (const Target& t : targets_) {
    std::optional<nlohmann::json> config;
    if (!Read(t.path, &config, error)) return false;
    snap->observed.configs.push_back(ParseConfig(t.name, config));
    snap->configs.push_back(std::move(config));
  }
  return true;
}

bool Manager::WriteSecret(const Snapshot& snap, const Decision& d, std::string* error) {
  kube::Result r;
  if (snap.secret) {
    r = client_.Update(SecretPath(), UpdatedSecret(*snap.secret, d.secret, d.bundle));
  } else {
    r = client_.Create(kube::CollectionPath("", "v1", "secrets", settings_.secret_namespace),
                       NewSecret(settings_.secret_namespace, settings_.secret_name, d.secret, d.bundle));
  }
  if (!r.ok()) {
    *error = ErrorText(std::string(snap.secret ? "update" : "create") + " Secret " + settings_.secret_namespace + "/" +
                           settings_.secret_name,
                       r);
    return false;
  }
  if (logger_ && !snap.secret)
    logger_->info("created Secret {}/{} with the webhook's CA and serving certificate", settings_.secret_namespace,
                  settings_.secret_name);
  return true;
}

bool Manager::FixConfig(const Target& t, nlohmann::json config, const Decision& d, std::string* error) {
  if (!InjectBundle(config, BundlePem(d.bundle))) return true;  // no webhooks: nothing to trust
  const kube::Result r = client_.Update(t.path, config);
  if (!r.ok()) {
    *error = ErrorText("update " + t.kind + " " + t.name, r);
    return false;
  }
  metrics_.injections.Add({{"configuration", t.name}}).Increment();
  if (logger_)
    logger_->info("injected the trust bundle ({} CA(s)) into the caBundle of {} {}", d.bundle.size(), t.kind, t.name);
  return true;
}

void Manager::Report(const Decision& d) {
  const WallTime now = clock_.WallNow();
  const std::pair<const char*, const CertRecord*> certs[] = {{"ca", &*d.secret.current},
                                                             {"serving", &*d.secret.serving}};
  for (const auto& [label, record] : certs) {
    metrics_.expiration.Add({{"certificate", label}}).Set(UnixSeconds(record->cert.not_after));
    const char* what = std::string_view(label) == "ca" ? "webhook CA" : "webhook serving certificate";
    if (auto w = warnings_.Check(what, record->cert, now); w && logger_) {
      if (w->expired) {
        logger_->error("{}", w->message);
      } else {
        logger_->warn("{}", w->message);
      }
    }
  }
}

clock::Clock::Duration Manager::Failed(const std::string& error) {
  metrics_.errors.Increment();
  const clock::Clock::Duration delay = backoff_.Next();
  if (logger_)
    logger_->warn("webhook certificates: {} (retrying in {} ms)", error,
                  std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
  return delay;
}

clock::Clock::Duration Manager::SyncOnce() {
  Snapshot snap;
  std::string error;
  if (!Observe(&snap, &error)) return Failed(error);
  Decision d;
  try {
    d = Decide(snap.observed, clock_.WallNow(), policy_, *issuer_);
  } catch (const std::exception& e) {
    return Failed(std::string("cannot issue a certificate: ") + e.what());
  }
  if (d.write_secret && !WriteSecret(snap, d, &error)) return Failed(error);
  for (const auto& change : d.changes)
    if (logger_) logger_->info("webhook certificates: {}", change);
  metrics_.issued.Add({{"certificate", "ca"}}).Increment(d.cas_issued);
  metrics_.issued.Add({{"certificate", "serving"}}).Increment(d.servings_issued);
  for (size_t i : d.configs_to_fix)
    if (!FixConfig(targets_[i], *snap.configs[i], d, &error)) return Failed(error);
  Report(d);
  backoff_.Reset();
  const auto until_due = std::chrono::duration_cast<clock::Clock::Duration>(d.next_check - clock_.WallNow());
  return std::clamp<clock::Clock::Duration>(until_due, clock::Clock::Duration::zero(), options_.resync);
}

}  // namespace ms::webhookcerts
