// The API client's metrics, all declared here (client-go's names, so that
// existing dashboards work). Built once per program from its registry and
// shared by every client.
#pragma once

#include "shared/metrics/metrics.h"

namespace ms::kube {

struct ClientMetrics {
  explicit ClientMetrics(metrics::Registry& registry);

  // rest_client_requests_total{code,method,host}: every request, by the
  // answer's status code ("<error>" without one, UNKNOWN outside 100-599).
  prometheus::Family<prometheus::Counter>& requests;
};

}  // namespace ms::kube
