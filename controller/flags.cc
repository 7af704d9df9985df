#include "controller/flags.h"

#include "shared/api/runtimes.h"
#include "shared/flags/flags.h"
#include "shared/process/files.h"
#include "shared/text/strings.h"
#include "shared/version/version.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <stdexcept>
#include <string_view>

namespace ms::controller {

namespace {

// The flags of the autoscaler's Prometheus: its URL, the query templates
// (one per runtime), the GPU query, the timing.
void DefinePrometheusFlags(flags::FlagSet& fs, Flags& f) {
  fs.String("prometheus-url", &f.prometheus_url, "Prometheus HTTP API base URL for autoscaling");
  fs.String("prometheus-query", &f.prometheus_query,
            "PromQL template; NS and NAME are replaced by the ModelService's namespace and name");
  for (size_t i = 1; i < api::kRuntimeNames.size(); ++i) {
    std::string runtime = api::kRuntimeNames[i];
    std::transform(runtime.begin(), runtime.end(), runtime.begin(), [](unsigned char c) { return std::tolower(c); });
    fs.String("prometheus-query-" + runtime, &f.prometheus_runtime_queries[i - 1],
              std::string("PromQL template of the queue of ModelServices with runtime ") + api::kRuntimeNames[i] +
                  " (NS, NAME as above)");
  }
  fs.String("prometheus-gpu-query", &f.prometheus_gpu_query,
            "PromQL template of a ModelService's GPU utilization in percent (status.gpuUtilization, "
            "spec.autoscaling.targetGPUUtilization); NS, NAME as above, and PODS after =~ is the regex of its pods' "
            "names");
  fs.Duration("prometheus-timeout", &f.prometheus_timeout,
              "deadline of one Prometheus query (queries run on the poller's threads, never on the reconcile workers)");
  fs.Validate("prometheus-timeout", [&f] {
    return f.prometheus_timeout.count() > 0 ? std::string() : std::string("--prometheus-timeout must be positive");
  });
  fs.Duration("autoscale-interval", &f.autoscale_interval,
              "how often autoscaled ModelServices are re-evaluated and their Prometheus queries run; a reading "
              "older than 3 intervals is stale and changes no replicas");
  fs.Validate("autoscale-interval", [&f] {
    return f.autoscale_interval.count() > 0 ? std::string() : std::string("--autoscale-interval must be positive");
  });
  fs.Duration("scale-down-stabilization", &f.scale_down_stabilization,
              "scale-down stabilization window of the controller's own autoscaler; in autoscaling mode HPA, the "
              "HPA's behavior.scaleDown.stabilizationWindowSeconds (at most 1h)");
}

// The flags of how the controller authenticates to Prometheus and of its
// TLS (prometheus_auth.h: their rules, checked once all flags are read).
void DefinePrometheusAuthFlags(flags::FlagSet& fs, autoscale::PrometheusAuth& a) {
  fs.String("prometheus-bearer-token-file", &a.bearer_token_file,
            "file holding a bearer token sent to Prometheus as \"Authorization: Bearer <token>\"; read again once a "
            "minute and after a 401 (a projected ServiceAccount token or a Secret that rotates)");
  fs.String("prometheus-basic-auth-username", &a.basic_auth_username,
            "user name of HTTP basic auth towards Prometheus (with --prometheus-basic-auth-password-file; not with "
            "--prometheus-bearer-token-file)");
  fs.String("prometheus-basic-auth-password-file", &a.basic_auth_password_file,
            "file holding the basic auth password; read again once a minute and after a 401");
  fs.String("prometheus-ca-file", &a.ca_file,
            "PEM file of the CAs that verify Prometheus' HTTPS certificate (default: the system's CAs); read at each "
            "connection");
  fs.String("prometheus-cert-file", &a.cert_file,
            "PEM client certificate presented to Prometheus (with --prometheus-key-file); read at each connection, so "
            "a rotated one is used from the next query on");
  fs.String("prometheus-key-file", &a.key_file, "PEM private key of --prometheus-cert-file");
  fs.Repeated("prometheus-header", &a.headers,
              "Name=Value: a header sent with every query, e.g. X-Scope-OrgID=tenant-a (Mimir, Cortex); not "
              "Authorization");
  fs.Repeated("prometheus-header-file", &a.header_files,
              "Name=PATH: a header whose value is the file's content (a secret), read again once a minute and after "
              "a 401");
  for (const char* name : {"prometheus-header", "prometheus-header-file"}) {
    const bool is_path = std::string_view(name) == "prometheus-header-file";
    auto* list = is_path ? &a.header_files : &a.headers;
    fs.Validate(name, [name, is_path, list] {
      autoscale::HeaderSetting h;
      return autoscale::ParseHeaderSetting(name, list->back(), is_path, &h);
    });
  }
  fs.ValidateAll([&a] { return autoscale::CheckPrometheusAuth(a); });
}

// The flag set over `f`: one definition gives parsing, checks and the help.
flags::FlagSet Definitions(Flags& f, const std::string& program = "modelservice-controller") {
  flags::FlagSet fs(
      program,
      "The ModelService controller: reconciles modelops.dev/v1 ModelServices into Deployments and Services,\n"
      "writes their status and Events, and autoscales them by queue length.");
  auto at_least_one = [](const char* name, const int& v) {
    return [name, &v] { return v >= 1 ? std::string() : std::string("--") + name + " must be at least 1"; };
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
  fs.String("namespace", &f.ns,
            "only watch this namespace, or these (comma-separated: a LIST and WATCH of each kind per namespace, "
            "so that Roles in them are enough); default: all namespaces");
  fs.Validate("namespace", [&f] { return CheckNamespaces(f.ns); });
  fs.String("default-image", &f.default_image, "image for ModelServices without spec.image");
  DefinePrometheusFlags(fs, f);
  DefinePrometheusAuthFlags(fs, f.prometheus_auth);
  fs.Double("kube-api-qps", &f.kube_api_qps,
            "client-side requests per second towards the API server, for each API group-version (as client-go); "
            "Events have a budget of their own; <= 0: no client-side limit, the API server's Priority and "
            "Fairness governs (as controller-runtime since v0.21)");
  fs.Int("kube-api-burst", &f.kube_api_burst, "client-side burst for each API group-version (with --kube-api-qps > 0)");
  fs.Validate("kube-api-burst", at_least_one("kube-api-burst", f.kube_api_burst));
  fs.Bool("metrics-secure", &f.metrics_secure,
          "serve /metrics over HTTPS (a self-signed certificate made at start) to callers whose bearer token a "
          "TokenReview authenticates and a SubjectAccessReview allows to get the non-resource URL /metrics; the "
          "probes stay plain HTTP and must have an address of their own");
  fs.Bool("per-object-metrics", &f.per_object_metrics,
          "export the series of each ModelService (modelservice_replicas, modelservice_status_condition, "
          "modelservice_info, labelled with its namespace and name); false: not registered");
  webhookcerts::DefineFlags(fs, f.certs);
  fs.Version(version::VersionText("modelservice-controller"));
  flags::DefineCommonFlags(fs, f);
  return fs;
}

}  // namespace

FlagsResult ParseFlags(const std::vector<std::string>& args) {
  FlagsResult res;
  flags::FlagSet fs = Definitions(res.flags);
  if (std::string err = fs.Parse(args); !err.empty()) res.error = err;
  res.flags.help = fs.help_requested();
  return res;
}

namespace {

std::vector<std::string> SplitNamespaces(const std::string& list) {
  std::vector<std::string> out;
  if (text::Trim(list).empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    out.emplace_back(text::Trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

bool IsLabel(const std::string& s) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace

std::vector<std::string> Flags::Namespaces() const { return SplitNamespaces(ns); }

std::vector<std::string> DefaultRuntimeQueries() {
  std::vector<std::string> out;
  for (size_t i = 1; i < api::kRuntimeNames.size(); ++i)
    out.push_back("sum(" + std::string(api::Preset(static_cast<api::Runtime>(i)).queue_metric) +
                  R"({namespace="NS",modelservice="NAME"}))");
  return out;
}

std::vector<std::string> Flags::QueueQueries() const {
  std::vector<std::string> out = {prometheus_query};
  out.insert(out.end(), prometheus_runtime_queries.begin(), prometheus_runtime_queries.end());
  return out;
}

std::string CheckNamespaces(const std::string& list) {
  const std::vector<std::string> names = SplitNamespaces(list);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!IsLabel(names[i]))
      return "--namespace: \"" + names[i] +
             "\" is not a namespace name (lowercase letters, digits and '-', at most 63)";
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      return "--namespace: \"" + names[i] + "\" is named twice";
  }
  return {};
}

std::string DefaultLeaderElectionNamespace(const std::string& namespace_file) {
  std::string ns;
  try {
    ns = text::Trim(process::ReadFile(namespace_file));
  } catch (const std::runtime_error&) {
  }
  return ns.empty() ? "default" : ns;
}

std::optional<int> ParseCommandLine(int argc, const char* const* argv, Flags* flags, std::ostream& out,
                                    std::ostream& err) {
  flags::FlagSet fs = Definitions(*flags, argc > 0 ? argv[0] : "modelservice-controller");
  return fs.ParseCommandLine(argc, argv, out, err);
}

std::string Usage(const std::string& program) {
  Flags defaults;
  return Definitions(defaults, program).Usage();
}

}  // namespace ms::controller
