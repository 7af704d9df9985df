// The metrics of the webhook's certificates kept by the controller
// (--cert-mode=self), all declared here. Built once per program from its
// registry; the Manager (manager.h) takes them by reference.
#pragma once

#include "shared/metrics/metrics.h"

namespace ms::webhookcerts {

struct CertificateMetrics {
  explicit CertificateMetrics(metrics::Registry& registry);

  // modelservice_webhook_secret_certificate_expiration_timestamp_seconds{certificate=ca|serving}:
  // notAfter of the current CA and of the serving certificate in the Secret.
  prometheus::Family<prometheus::Gauge>& expiration;
  // modelservice_webhook_certificates_issued_total{certificate=ca|serving}.
  prometheus::Family<prometheus::Counter>& issued;
  // modelservice_webhook_ca_bundle_injections_total{configuration}: caBundle
  // writes (a repair after a blanking apply counts one).
  prometheus::Family<prometheus::Counter>& injections;
  // modelservice_webhook_certificate_sync_errors_total.
  prometheus::Counter& errors;
};

}  // namespace ms::webhookcerts
