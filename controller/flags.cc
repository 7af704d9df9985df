#include "controller/flags.h"

#include "shared/flags.h"
#include "shared/logging.h"

#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace ms::controller {

namespace {

bool ParseInt(const std::string& s, int& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

bool ParseDouble(const std::string& s, double& out) {
  if (s.empty()) return false;
  std::istringstream in(s);
  in.imbue(std::locale::classic());
  in >> out;
  return !in.fail() && in.eof();
}

bool ParseBool(const std::string& s, bool& out) {
  if (s == "true" || s == "1" || s == "t" || s == "TRUE" || s == "True") {
    out = true;
    return true;
  }
  if (s == "false" || s == "0" || s == "f" || s == "FALSE" || s == "False") {
    out = false;
    return true;
  }
  return false;
}

struct FlagDef {
  bool is_bool = false;
  // Returns an error message, or "" when the value was accepted.
  std::function<std::string(Flags&, const std::string&)> set;
};

std::string Positive(const char* name, int v) { return v >= 1 ? "" : std::string("--") + name + " must be at least 1"; }

std::map<std::string, FlagDef> Definitions() {
  std::map<std::string, FlagDef> d;
  auto str = [](std::string Flags::*field) {
    return FlagDef{false, [field](Flags& f, const std::string& v) {
                     f.*field = v;
                     return std::string();
                   }};
  };
  auto dur = [](std::chrono::milliseconds Flags::*field, const char* name) {
    return FlagDef{false, [field, name](Flags& f, const std::string& v) {
                     auto d = ParseDuration(v);
                     if (!d) return "invalid duration \"" + v + "\" for --" + name + " (e.g. 15s, 5m, 300ms)";
                     if (d->count() < 0) return std::string("--") + name + " must not be negative";
                     f.*field = *d;
                     return std::string();
                   }};
  };
  d["kubeconfig"] = str(&Flags::kubeconfig);
  d["leader-elect"] = {true, [](Flags& f, const std::string& v) {
                         return ParseBool(v, f.leader_elect) ? "" : "invalid boolean \"" + v + "\" for --leader-elect";
                       }};
  d["leader-election-id"] = str(&Flags::leader_election_id);
  d["leader-election-namespace"] = str(&Flags::leader_election_namespace);
  d["concurrency"] = {false, [](Flags& f, const std::string& v) {
                        if (!ParseInt(v, f.concurrency)) return "invalid integer \"" + v + "\" for --concurrency";
                        return Positive("concurrency", f.concurrency);
                      }};
  d["namespace"] = str(&Flags::ns);
  d["default-image"] = str(&Flags::default_image);
  d["prometheus-url"] = str(&Flags::prometheus_url);
  d["prometheus-query"] = str(&Flags::prometheus_query);
  d["autoscale-interval"] = dur(&Flags::autoscale_interval, "autoscale-interval");
  d["scale-down-stabilization"] = dur(&Flags::scale_down_stabilization, "scale-down-stabilization");
  d["kube-api-qps"] = {false, [](Flags& f, const std::string& v) {
                         if (!ParseDouble(v, f.kube_api_qps) || f.kube_api_qps <= 0) {
                           return "invalid positive number \"" + v + "\" for --kube-api-qps";
                         }
                         return std::string();
                       }};
  d["kube-api-burst"] = {false, [](Flags& f, const std::string& v) {
                           if (!ParseInt(v, f.kube_api_burst))
                             return "invalid integer \"" + v + "\" for --kube-api-burst";
                           return Positive("kube-api-burst", f.kube_api_burst);
                         }};
  auto addr = [](std::string Flags::*field, const char* name) {
    return FlagDef{false, [field, name](Flags& f, const std::string& v) {
                     if (!ParseBindAddress(v)) return "invalid address \"" + v + "\" for --" + name + " (e.g. :8080)";
                     f.*field = v;
                     return std::string();
                   }};
  };
  d["metrics-bind-address"] = addr(&Flags::metrics_bind_address, "metrics-bind-address");
  d["health-probe-bind-address"] = addr(&Flags::health_probe_bind_address, "health-probe-bind-address");
  d["log-format"] = {false, [](Flags& f, const std::string& v) {
                       if (!log::ParseFormat(v)) return "invalid --log-format \"" + v + "\": json or text";
                       f.log_format = v;
                       return std::string();
                     }};
  auto level = FlagDef{false, [](Flags& f, const std::string& v) {
                         // The same parser main() applies the level with.
                         const bool ok = log::ParseLevel(v).has_value();
                         if (!ok)
                           return "invalid log level \"" + v + "\" (a number for -v, or trace|debug|info|warn|error)";
                         f.log_level = v;
                         return std::string();
                       }};
  d["log-level"] = level;
  d["v"] = level;
  d["help"] = {true, [](Flags& f, const std::string& v) {
                 return ParseBool(v, f.help) ? "" : "invalid boolean \"" + v + "\" for --help";
               }};
  d["h"] = d["help"];
  return d;
}

}  // namespace

FlagsResult ParseFlags(const std::vector<std::string>& args) {
  FlagsResult res;
  const auto defs = Definitions();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string body;
    if (arg.rfind("--", 0) == 0) {
      body = arg.substr(2);
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1) {
      body = arg.substr(1);  // -v=2, -h
    } else {
      res.error = "unexpected argument \"" + arg + "\"";
      return res;
    }
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    auto it = defs.find(name);
    if (it == defs.end() || name.empty()) {
      res.error = "unknown flag: " + arg;
      return res;
    }
    if (!has_value) {
      if (it->second.is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        res.error = "flag needs an argument: " + arg;
        return res;
      }
    }
    if (std::string err = it->second.set(res.flags, value); !err.empty()) {
      res.error = err;
      return res;
    }
  }
  return res;
}

std::optional<std::chrono::milliseconds> ParseDuration(const std::string& s) {
  std::chrono::milliseconds d{};
  if (!ms::ParseDuration(s, &d)) return std::nullopt;
  return d;
}

std::string DefaultLeaderElectionNamespace(const std::string& namespace_file) {
  std::ifstream in(namespace_file);
  std::string ns;
  if (in && std::getline(in, ns)) {
    while (!ns.empty() && (ns.back() == '\n' || ns.back() == '\r' || ns.back() == ' ')) ns.pop_back();
    if (!ns.empty()) return ns;
  }
  return "default";
}

std::optional<BindAddress> ParseBindAddress(const std::string& s) {
  if (s.empty()) return std::nullopt;
  ms::HostPort hp;
  if (!ms::ParseBindAddress(s, &hp)) return std::nullopt;
  if (hp.port < 0) return BindAddress{"", 0, true};
  return BindAddress{hp.host, hp.port, false};
}

std::string Usage(const std::string& program) {
  return "Usage: " + program + R"USAGE( [flags]

The ModelService controller: reconciles modelops.dev/v1 ModelServices into
Deployments and Services, writes their status and Events, and autoscales them
by queue length.

Flags (--flag=value or --flag value):
      --kubeconfig string                  Path to a kubeconfig. Default: in-cluster config, else $KUBECONFIG,
                                           else ~/.kube/config.
      --leader-elect                       Elect a leader through a coordination.k8s.io/v1 Lease before
                                           reconciling (needed when several replicas run).
      --leader-election-id string          Name of the Lease. (default "modelservice-controller")
      --leader-election-namespace string   Namespace of the Lease. (default: the pod's namespace in cluster,
                                           else "default")
      --concurrency int                    Reconciles running at once. (default 2)
      --namespace string                   Only watch this namespace. (default: all namespaces)
      --default-image string               Image for ModelServices without spec.image.
                                           (default "registry.local/model-server:latest")
      --prometheus-url string              Prometheus HTTP API base URL for autoscaling.
                                           (default "http://prometheus-operated.monitoring.svc:9090")
      --prometheus-query string            PromQL template; NS and NAME are replaced by the ModelService's
                                           namespace and name. (default
                                           "sum(modelservice_queue_length{namespace="NS",modelservice="NAME"})")
      --autoscale-interval duration        How often autoscaled ModelServices are re-evaluated. (default 15s)
      --scale-down-stabilization duration  Scale-down stabilization window. (default 5m0s)
      --kube-api-qps float                 Client-side QPS limit towards the API server. (default 20)
      --kube-api-burst int                 Client-side burst towards the API server. (default 30)
      --metrics-bind-address string        Address of /metrics; "0" disables it. (default ":8080")
      --health-probe-bind-address string   Address of /healthz and /readyz; "0" disables it. (default ":8081")
      --log-format string                  json or text. (default "json")
  -v, --log-level string                   trace|debug|info|warn|error|critical|off, or a klog verbosity number
                                           (0 = info, 1-3 = debug, 4+ = trace). (default "info")
  -h, --help                               Show this help.
)USAGE";
}

}  // namespace ms::controller
