#include "shared/certs/metrics.h"

namespace ms::certs {

CertWatcherMetrics::CertWatcherMetrics(metrics::Registry& registry)
    : reads(prometheus::BuildCounter()
                .Name("certwatcher_read_certificate_total")
                .Help("Total number of certificate reads")
                .Register(registry.families())
                .Add({})),
      read_errors(prometheus::BuildCounter()
                      .Name("certwatcher_read_certificate_errors_total")
                      .Help("Total number of certificate read errors")
                      .Register(registry.families())
                      .Add({})),
      expiration(prometheus::BuildGauge()
                     .Name("modelservice_webhook_certificate_expiration_timestamp_seconds")
                     .Help("Expiry (notAfter, Unix seconds) of the certificates the webhook uses: serving (the pair "
                           "last read successfully), client-ca (the last CA of --client-ca to expire)")
                     .Register(registry.families())) {}

}  // namespace ms::certs
