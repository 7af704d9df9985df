// The serving certificate's files as metrics, with controller-runtime's
// certwatcher names so that existing dashboards and alerts work:
//   certwatcher_read_certificate_total          reads of the pair
//   certwatcher_read_certificate_errors_total   reads that failed (a file
//       missing or unreadable, no certificate, no key, a key that does not
//       match: the webhook then keeps serving the pair it has)
//   certwatcher_certificate_expiration_timestamp_seconds  notAfter of the
//       last pair read successfully (what the webhook serves), Unix seconds
// and the log warnings of expiry.h. It reads the files on its own thread
// every `interval`, with the same checks as the webhook's reloader
// (webhook/transport/tls.h), so its gauge is the certificate in service.
//
//   CertWatcher watcher(cert_file, key_file, registry, logger, clock);
//   watcher.Start(std::chrono::seconds(1));   // first read at once
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "certs/expiry.h"

namespace ms::certs {

class CertWatcher {
 public:
  CertWatcher(std::string cert_file, std::string key_file, prometheus::Registry& registry,
              std::shared_ptr<spdlog::logger> logger, const Clock& clock);
  ~CertWatcher();
  CertWatcher(const CertWatcher&) = delete;
  CertWatcher& operator=(const CertWatcher&) = delete;

  // One read: counted, checked; on success the gauge is set and expiry
  // warnings are logged. Returns whether it succeeded.
  bool ReadOnce();
  // Reads now, then every `interval` on a thread until Stop().
  void Start(std::chrono::milliseconds interval);
  void Stop();

 private:
  const std::string cert_file_, key_file_;
  std::shared_ptr<spdlog::logger> logger_;
  const Clock& clock_;
  prometheus::Counter& reads_;
  prometheus::Counter& errors_;
  prometheus::Gauge& expiration_;
  ExpiryWarnings warnings_;  // ReadOnce's thread only
  std::string last_error_;   // ReadOnce's thread only: logged once per distinct error

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ms::certs
