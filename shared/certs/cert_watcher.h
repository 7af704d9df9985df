// The webhook's certificate files as metrics (declared in metrics.h):
//   certwatcher_read_certificate_total          reads of the serving pair
//   certwatcher_read_certificate_errors_total   reads that failed (a file
//       missing or unreadable, no certificate, no key, a key that does not
//       match: the webhook then keeps serving the pair it has)
//       (controller-runtime's certwatcher names, so existing dashboards work)
//   modelservice_webhook_certificate_expiration_timestamp_seconds{certificate}
//       notAfter (Unix seconds) of certificate="serving", the last pair read
//       successfully (what the webhook serves), and with a client CA file,
//       certificate="client-ca", the last of its CAs to expire (until then
//       the bundle still trusts something). controller-runtime has no such
//       gauge, and ours needs the label: hence not a certwatcher_* name.
// and the log warnings of expiry.h for both. It reads the files on its own
// thread every `interval`, with the same checks as the webhook's reloader
// (shared/transport/tls.h), so its gauge is the certificate in service.
// Files whose bytes have not changed since the last read are not parsed
// again (decoding the key is about a millisecond of CPU; the read each poll
// is what notices a change).
//
//   CertWatcher watcher(cert_file, key_file, metrics, logger, clock, client_ca_file);
//   watcher.Start(std::chrono::seconds(1));   // first read at once
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "shared/certs/expiry.h"
#include "shared/certs/metrics.h"
#include "shared/clock/clock.h"

namespace ms::certs {

class CertWatcher {
 public:
  // `client_ca_file` empty: none.
  CertWatcher(std::string cert_file, std::string key_file, CertWatcherMetrics& metrics,
              std::shared_ptr<spdlog::logger> logger, const clock::Clock& clock, std::string client_ca_file = "");
  ~CertWatcher();
  CertWatcher(const CertWatcher&) = delete;
  CertWatcher& operator=(const CertWatcher&) = delete;

  // One read: counted, checked; on success the gauge is set and expiry
  // warnings are logged. Returns whether it succeeded.
  bool ReadOnce();
  // The client CA bundle: the gauge and warnings (not counted as reads).
  void ReadClientCa();
  // Reads now, then every `interval` on a thread until Stop().
  void Start(std::chrono::milliseconds interval);
  void Stop();

 private:
  void Warn(std::string_view what, const Certificate& cert);
  // CheckPair of the two files' bytes, or its error: computed again only
  // when the bytes differ from the last call's.
  const std::optional<Certificate>& CheckedPair(std::string cert_pem, std::string key_pem);

  const std::string cert_file_, key_file_, client_ca_file_;
  std::shared_ptr<spdlog::logger> logger_;
  const clock::Clock& clock_;
  CertWatcherMetrics& metrics_;
  ExpiryWarnings warnings_;  // ReadOnce's thread only
  std::string last_error_;   // ReadOnce's thread only: logged once per distinct error
  // ReadOnce's thread only: the last pair checked and its result.
  std::optional<std::pair<std::string, std::string>> checked_pem_;
  std::optional<Certificate> checked_;
  std::string checked_error_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ms::certs
