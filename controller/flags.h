// The controller's command line (design.md §4), Kubernetes style:
// `--flag=value` or `--flag value`, boolean flags bare or `--flag=true|false`,
// durations as `300ms`, `15s`, `5m`, `1h30m`; unknown flags are an error.
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "controller/autoscale/prometheus_auth.h"
#include "controller/autoscale/promql.h"
#include "controller/modelservice/desired.h"
#include "controller/webhookcerts/policy.h"
#include "shared/flags/flags.h"

namespace ms::controller {

// The default queue query of each runtime but Custom, in api::Runtime's
// order: sum(<its gauge of waiting requests>{namespace="NS",modelservice="NAME"}).
std::vector<std::string> DefaultRuntimeQueries();

// With the flags both programs have (CommonFlags: --metrics-bind-address,
// --health-probe-bind-address, --log-format, -v/--log-level).
struct Flags : flags::CommonFlags {
  std::string kubeconfig;
  bool leader_elect = false;
  std::string leader_election_id = "modelservice-controller";
  std::string leader_election_namespace;  // empty after parsing: see DefaultLeaderElectionNamespace
  int concurrency = 2;
  // --namespace: one namespace or several, comma-separated; empty: all
  // namespaces (Namespaces()).
  std::string ns;
  std::string default_image = modelservice::kDefaultImage;
  std::string prometheus_url = "http://prometheus-operated.monitoring.svc:9090";
  std::string prometheus_query = std::string(autoscale::kDefaultQueryTemplate);
  // The queue query of ModelServices of each runtime but Custom
  // (--prometheus-query-vllm, ...): sum(<its gauge>{namespace="NS",modelservice="NAME"}).
  std::vector<std::string> prometheus_runtime_queries = DefaultRuntimeQueries();
  std::string prometheus_gpu_query = std::string(autoscale::kDefaultGpuQueryTemplate);
  std::chrono::milliseconds prometheus_timeout{5'000};
  // How it authenticates to Prometheus, and its TLS files
  // (--prometheus-bearer-token-file, ..., --prometheus-header).
  autoscale::PrometheusAuth prometheus_auth;
  std::chrono::milliseconds autoscale_interval{15'000};
  std::chrono::milliseconds scale_down_stabilization{300'000};
  // Per API group-version client (client-go's semantics); <= 0: no
  // client-side limit (controller-runtime's default since v0.21: the API
  // server's Priority and Fairness governs).
  double kube_api_qps = -1;
  int kube_api_burst = 30;
  // /metrics over HTTPS, behind a TokenReview and a SubjectAccessReview of
  // `get /metrics` (controller/secure_metrics.h).
  bool metrics_secure = false;
  // The per-ModelService series (modelservice_replicas, _status_condition,
  // _info: they name every ModelService of every namespace).
  bool per_object_metrics = true;
  // The webhook's certificates (--cert-mode and the flags of mode self).
  webhookcerts::Settings certs;
  bool help = false;

  // The queue query templates, indexed by api::Runtime (Custom's is --prometheus-query).
  std::vector<std::string> QueueQueries() const;
  // The namespaces --namespace names, in its order (empty: all namespaces).
  std::vector<std::string> Namespaces() const;
};

// Why `list` (--namespace's value) is not a comma-separated list of distinct
// namespace names (DNS-1123 labels); empty when it is, or when it is empty.
std::string CheckNamespaces(const std::string& list);

struct FlagsResult {
  Flags flags;
  std::optional<std::string> error;  // set: print it with a usage hint, exit 2
};

// `args` excludes the program name.
FlagsResult ParseFlags(const std::vector<std::string>& args);

std::string Usage(const std::string& program);

// What main() does with its command line (FlagSet::ParseCommandLine, with
// argv[0] as the program name): an exit status when done (error: 2, --help:
// 0), else nothing with `flags` set.
std::optional<int> ParseCommandLine(int argc, const char* const* argv, Flags* flags, std::ostream& out,
                                    std::ostream& err);

// The namespace in `sa_dir`/namespace (in cluster), else "default".
std::string DefaultLeaderElectionNamespace(
    const std::string& namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace");

}  // namespace ms::controller
