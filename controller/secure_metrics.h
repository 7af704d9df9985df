// --metrics-secure (design.md §4): /metrics over HTTPS with a self-signed
// certificate made in memory at start (ECDSA P-256, a year; the controller
// has no serving certificate of its own, and Prometheus checks who it
// scrapes by the Service it discovers, not by this certificate: the chart's
// ServiceMonitor skips its verification), behind the MetricsAuthorizer
// (controller/metricsauth/metrics_auth.h): a TokenReview and a
// SubjectAccessReview through an API client of its own, without the write
// gate, so that a standby answers scrapes too.
#pragma once

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <memory>

#include "controller/kube/config.h"
#include "controller/kube/http_client.h"
#include "controller/kube/metrics.h"
#include "controller/metricsauth/metrics_auth.h"
#include "shared/clock/clock.h"
#include "shared/transport/side_endpoints.h"
#include "shared/transport/tls.h"

namespace ms::controller {

class SecureMetricsSetup {
 public:
  // Makes the certificate and the TLS context; throws std::runtime_error
  // when OpenSSL cannot.
  SecureMetricsSetup(const kube::RestConfig& rest, const clock::Clock& clock, kube::ClientMetrics& client_metrics,
                     std::shared_ptr<spdlog::logger> logger);
  SecureMetricsSetup(const SecureMetricsSetup&) = delete;
  SecureMetricsSetup& operator=(const SecureMetricsSetup&) = delete;

  // For SideEndpoints::Start; valid while this lives.
  transport::SecureMetrics Secure() { return {ctx_.get(), auth_.Gate()}; }

 private:
  static kube::RestConfig ReviewConfig(kube::RestConfig rest);
  static kube::HttpClientOptions ReviewOptions();

  std::unique_ptr<transport::CertificateReloader> reloader_;
  transport::ServerTlsOptions tls_;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_{nullptr, SSL_CTX_free};
  kube::HttpClient client_;
  metricsauth::MetricsAuthorizer auth_;
};

}  // namespace ms::controller
