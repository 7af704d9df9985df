#include "controller/kube/metrics.h"

namespace ms::kube {

ClientMetrics::ClientMetrics(metrics::Registry& registry)
    : requests(prometheus::BuildCounter()
                   .Name("rest_client_requests_total")
                   .Help("Number of HTTP requests, partitioned by status code, method, and host.")
                   .Register(registry.families())) {}

}  // namespace ms::kube
