#include "controller/secure_metrics.h"

#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "shared/certs/x509.h"

namespace ms::controller {

namespace {

// The names the certificate carries: the host (the Pod's name in a
// cluster) and localhost.
std::vector<std::string> Names() {
  std::vector<std::string> names;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') names.emplace_back(host);
  names.emplace_back("localhost");
  return names;
}

transport::CertificateReloader::InMemory SelfSigned(const clock::Clock& clock) {
  certs::Template t;
  t.common_name = "modelservice-controller-metrics";
  t.dns_names = Names();
  t.not_before = clock.WallNow() - std::chrono::hours(1);
  t.not_after = clock.WallNow() + std::chrono::hours(24 * 365);
  const std::string key = certs::NewPrivateKey();
  return {certs::Issue(t, key, nullptr), key};
}

}  // namespace

SecureMetricsSetup::SecureMetricsSetup(const kube::RestConfig& rest, const clock::Clock& clock,
                                       kube::ClientMetrics& client_metrics, std::shared_ptr<spdlog::logger> logger)
    : reloader_(std::make_unique<transport::CertificateReloader>(SelfSigned(clock), logger)),
      client_(ReviewConfig(rest), clock, client_metrics, logger, ReviewOptions()),
      auth_(client_, clock, metricsauth::MetricsAuthOptions{}, logger) {
  ctx_.reset(SSL_CTX_new(TLS_server_method()));
  std::string error = "out of memory";
  if (!ctx_ || !transport::ConfigureServerContext(*ctx_, tls_, *reloader_, &error))
    throw std::runtime_error("/metrics over HTTPS: " + error);
  if (logger)
    logger->info("/metrics over HTTPS with a self-signed certificate ({}), for callers allowed to get /metrics",
                 reloader_->Current()->subject);
}

// The reviews have the authorizer's budgets, not the client's token buckets.
kube::RestConfig SecureMetricsSetup::ReviewConfig(kube::RestConfig rest) {
  rest.qps = -1;
  rest.user_agent += "/metrics-auth";
  return rest;
}

kube::HttpClientOptions SecureMetricsSetup::ReviewOptions() {
  kube::HttpClientOptions o;
  o.request_timeout = std::chrono::seconds(2);
  return o;
}

}  // namespace ms::controller
