// Mode `self` at run time: keeps the webhook's Secret and the caBundle of
// both webhook configurations as decide.h decides, through the API.
//
//   Manager certs(client, clock, settings, metrics, logger);
//   certs.Start();   // every replica: watches the Secret and the configurations
//   certs.Lead();    // the leader only: from now on it reads, decides and writes
//   ...
//   certs.Stop();
//
// A pass (SyncOnce) reads the Secret and the configurations through the API,
// decides, creates or updates the Secret (with its resourceVersion), then
// updates each configuration whose caBundle differs (with its
// resourceVersion; a 409 retries the pass). Passes run when a watch event
// arrives (a `kubectl apply` that blanks caBundle is repaired as soon as its
// event arrives; the Secret deleted is made again), when something falls
// due, at least every `resync`, and after a failure with backoff. Writes go
// through the client the caller gives: the controller's, gated by the Lease,
// so nothing is written once leadership is lost.
//
// Metrics (metrics.h):
//   modelservice_webhook_secret_certificate_expiration_timestamp_seconds{certificate="ca"|"serving"}
//       notAfter of the current CA and of the serving certificate in the Secret
//   modelservice_webhook_certificates_issued_total{certificate="ca"|"serving"}
//   modelservice_webhook_ca_bundle_injections_total{configuration}
//       caBundle writes (a repair after a blanking apply counts one)
//   modelservice_webhook_certificate_sync_errors_total
// and the expiry log warnings of certs/expiry.h for both certificates.
#pragma once

#include <spdlog/logger.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "controller/kube/backoff.h"
#include "controller/kube/client.h"
#include "controller/runtime/informer.h"
#include "controller/webhookcerts/decide.h"
#include "controller/webhookcerts/metrics.h"
#include "controller/webhookcerts/policy.h"
#include "shared/certs/expiry.h"
#include "shared/clock/clock.h"

namespace ms::webhookcerts {

struct ManagerOptions {
  clock::Clock::Duration resync = std::chrono::minutes(5);
  clock::Clock::Duration initial_backoff = std::chrono::milliseconds(500);
  clock::Clock::Duration max_backoff = std::chrono::seconds(60);
};

class Manager {
 public:
  // `settings.secret_namespace` must be resolved. `issuer`: null for OpenSSL.
  Manager(kube::Client& client, const clock::Clock& clock, Settings settings, CertificateMetrics& metrics,
          std::shared_ptr<spdlog::logger> logger, std::unique_ptr<Issuer> issuer = nullptr,
          ManagerOptions options = {});
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  void Start();
  void Lead();
  void Stop();

  // One pass; returns when the next is due. For the loop and for tests.
  clock::Clock::Duration SyncOnce();

 private:
  struct Target {  // a webhook configuration kept
    std::string kind, name, path;
  };
  struct Snapshot {  // what a pass read
    std::optional<nlohmann::json> secret;
    std::vector<std::optional<nlohmann::json>> configs;  // by targets_ index
    Observed observed;
  };

  void Trigger();
  void Loop(std::stop_token stop);
  // The object at `path`, nullopt when not found; false + error otherwise.
  bool Read(const std::string& path, std::optional<nlohmann::json>* out, std::string* error);
  bool Observe(Snapshot* snap, std::string* error);
  bool WriteSecret(const Snapshot& snap, const Decision& d, std::string* error);
  bool FixConfig(const Target& t, nlohmann::json config, const Decision& d, std::string* error);
  void Report(const Decision& d);
  clock::Clock::Duration Failed(const std::string& error);
  std::string SecretPath() const;

  kube::Client& client_;
  const clock::Clock& clock_;
  const Settings settings_;
  const Policy policy_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<Issuer> issuer_;
  const ManagerOptions options_;
  CertificateMetrics& metrics_;
  std::vector<Target> targets_;
  kube::Backoff backoff_;                                      // SyncOnce's thread only
  ms::certs::ExpiryWarnings warnings_;                         // SyncOnce's thread only
  std::vector<std::unique_ptr<runtime::Informer>> informers_;  // the Secret, then the configurations

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool leading_ = false;
  bool triggered_ = false;
  clock::Clock::TimePoint next_{};
  std::vector<std::jthread> threads_;
};

}  // namespace ms::webhookcerts
