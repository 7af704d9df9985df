// The webhook's certificate metrics, all declared here. Built once per
// program from its registry; CertWatcher (cert_watcher.h) takes them by
// reference.
#pragma once

#include "shared/metrics/metrics.h"

namespace ms::certs {

struct CertWatcherMetrics {
  explicit CertWatcherMetrics(metrics::Registry& registry);

  // certwatcher_read_certificate_total: reads of the serving pair.
  prometheus::Counter& reads;
  // certwatcher_read_certificate_errors_total: reads that failed.
  prometheus::Counter& read_errors;
  // modelservice_webhook_certificate_expiration_timestamp_seconds{certificate=serving|client-ca}.
  prometheus::Family<prometheus::Gauge>& expiration;
};

}  // namespace ms::certs
