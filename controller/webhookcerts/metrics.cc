#include "controller/webhookcerts/metrics.h"

namespace ms::webhookcerts {

CertificateMetrics::CertificateMetrics(metrics::Registry& registry)
    : expiration(prometheus::BuildGauge()
                     .Name("modelservice_webhook_secret_certificate_expiration_timestamp_seconds")
                     .Help("notAfter (Unix seconds) of the webhook's current CA and serving certificate in the "
                           "Secret the controller keeps (--cert-mode=self)")
                     .Register(registry.families())),
      issued(prometheus::BuildCounter()
                 .Name("modelservice_webhook_certificates_issued_total")
                 .Help("Certificates the controller issued for the webhook (--cert-mode=self)")
                 .Register(registry.families())),
      injections(prometheus::BuildCounter()
                     .Name("modelservice_webhook_ca_bundle_injections_total")
                     .Help("Writes of the trust bundle into a webhook configuration's caBundle")
                     .Register(registry.families())),
      errors(prometheus::BuildCounter()
                 .Name("modelservice_webhook_certificate_sync_errors_total")
                 .Help("Passes over the webhook's certificates that failed (and were retried)")
                 .Register(registry.families())
                 .Add({})) {}

}  // namespace ms::webhookcerts
