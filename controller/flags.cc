#include "controller/flags.h"

#include "base/files.h"
#include "base/flags.h"
#include "base/logging.h"
#include "base/strings.h"

#include <stdexcept>

namespace ms::controller {

namespace {

// The flag set over `f`: one definition gives parsing, checks and the help.
FlagSet Definitions(Flags& f, const std::string& program = "modelservice-controller") {
  FlagSet fs(program,
             "The ModelService controller: reconciles modelops.dev/v1 ModelServices into Deployments and Services,\n"
             "writes their status and Events, and autoscales them by queue length.");
  auto at_least_one = [](const char* name, const int& v) {
    return [name, &v] { return v >= 1 ? std::string() : std::string("--") + name + " must be at least 1"; };
  };
  auto address = [](const char* name, const std::string& v) {
    return [name, &v] {
      HostPort hp;
      return ms::ParseBindAddress(v, &hp) && !v.empty()
                 ? std::string()
                 : "invalid address \"" + v + "\" for --" + name + " (e.g. :8080, 127.0.0.1:8080, or 0 to disable)";
    };
  };
  fs.String("kubeconfig", &f.kubeconfig,
            "path to a kubeconfig; default: in-cluster config, else $KUBECONFIG, else ~/.kube/config");
  fs.Bool("leader-elect", &f.leader_elect,
          "elect a leader through a coordination.k8s.io/v1 Lease before reconciling (needed with several replicas)");
  fs.String("leader-election-id", &f.leader_election_id, "name of the Lease");
  fs.String("leader-election-namespace", &f.leader_election_namespace,
            "namespace of the Lease (default: the pod's namespace in cluster, else \"default\")");
  fs.Int("concurrency", &f.concurrency, "reconciles running at once");
  fs.Validate("concurrency", at_least_one("concurrency", f.concurrency));
  fs.String("namespace", &f.ns, "only watch this namespace (default: all namespaces)");
  fs.String("default-image", &f.default_image, "image for ModelServices without spec.image");
  fs.String("prometheus-url", &f.prometheus_url, "Prometheus HTTP API base URL for autoscaling");
  fs.String("prometheus-query", &f.prometheus_query,
            "PromQL template; NS and NAME are replaced by the ModelService's namespace and name");
  fs.Duration("autoscale-interval", &f.autoscale_interval, "how often autoscaled ModelServices are re-evaluated");
  fs.Duration("scale-down-stabilization", &f.scale_down_stabilization, "scale-down stabilization window");
  fs.Double("kube-api-qps", &f.kube_api_qps,
            "client-side requests per second towards the API server, for each API group-version (as client-go); "
            "Events have a budget of their own; <= 0: no client-side limit, the API server's Priority and "
            "Fairness governs (as controller-runtime since v0.21)");
  fs.Int("kube-api-burst", &f.kube_api_burst, "client-side burst for each API group-version (with --kube-api-qps > 0)");
  fs.Validate("kube-api-burst", at_least_one("kube-api-burst", f.kube_api_burst));
  fs.String("metrics-bind-address", &f.metrics_bind_address, "address of /metrics; \"0\" disables it");
  fs.Validate("metrics-bind-address", address("metrics-bind-address", f.metrics_bind_address));
  fs.String("health-probe-bind-address", &f.health_probe_bind_address,
            "address of /healthz and /readyz; \"0\" disables it");
  fs.Validate("health-probe-bind-address", address("health-probe-bind-address", f.health_probe_bind_address));
  fs.String("log-format", &f.log_format, "json or text");
  fs.Validate("log-format", [&f] {
    return log::ParseFormat(f.log_format) ? std::string()
                                          : "invalid --log-format \"" + f.log_format + "\": json or text";
  });
  fs.String("log-level", &f.log_level,
            "trace|debug|info|warn|error|critical|off, or a klog verbosity number (0 = info, 1-3 = debug, 4+ = trace)");
  fs.Alias("v", "log-level");
  // The same parser main() applies the level with.
  fs.Validate("log-level", [&f] {
    return log::ParseLevel(f.log_level)
               ? std::string()
               : "invalid log level \"" + f.log_level + "\" (a number for -v, or trace|debug|info|warn|error)";
  });
  return fs;
}

}  // namespace

FlagsResult ParseFlags(const std::vector<std::string>& args) {
  FlagsResult res;
  FlagSet fs = Definitions(res.flags);
  if (std::string err = fs.Parse(args); !err.empty()) res.error = err;
  res.flags.help = fs.help_requested();
  return res;
}

std::string DefaultLeaderElectionNamespace(const std::string& namespace_file) {
  std::string ns;
  try {
    ns = Trim(ReadFile(namespace_file));
  } catch (const std::runtime_error&) {
  }
  return ns.empty() ? "default" : ns;
}

std::string Usage(const std::string& program) {
  Flags defaults;
  return Definitions(defaults, program).Usage();
}

}  // namespace ms::controller
