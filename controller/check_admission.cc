#include "controller/check_admission.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>
#include <ostream>
#include <string_view>

#include "controller/kube/config.h"
#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "controller/kube/metrics.h"
#include "shared/clock/clock.h"
#include "shared/metrics/metrics.h"

namespace ms::controller {
namespace {

constexpr std::string_view kValidatingWebhook = "validate.modelservices.modelops.dev";

nlohmann::json ModelService(const std::string& name, const std::string& ns, nlohmann::json spec) {
  return {{"apiVersion", "modelops.dev/v1"},
          {"kind", "ModelService"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", std::move(spec)}};
}

// Check 1: admitted, with the mutating webhook's defaults in the answer.
bool Defaulted(kube::Client& client, const std::string& path, const std::string& ns, std::ostream& out) {
  const kube::Result r =
      client.Create(path, ModelService("modelservice-admission-check", ns, {{"model", "admission-check"}}));
  if (!r.ok()) {
    out << "FAIL: a valid ModelService was not admitted (server-side dry run): " << r.Text() << "\n";
    return false;
  }
  const nlohmann::json spec = r.body.value("spec", nlohmann::json::object());
  if (!spec.contains("replicas") || !spec.contains("port")) {
    out << "FAIL: a valid ModelService was admitted without the mutating webhook's defaults "
           "(spec.replicas, spec.port): no webhook replica answered (failurePolicy Ignore?); spec: "
        << spec.dump() << "\n";
    return false;
  }
  out << "ok: the mutating webhook defaulted a ModelService (spec.replicas " << spec["replicas"].dump()
      << ", spec.port " << spec["port"].dump() << ")\n";
  return true;
}

// Check 2: refused by the validating webhook, by name.
bool Denied(kube::Client& client, const std::string& path, const std::string& ns, std::ostream& out) {
  const nlohmann::json spec = {
      {"model", "admission-check"},
      {"strategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 0}}}}}};
  const kube::Result r = client.Create(path, ModelService("modelservice-admission-check-invalid", ns, spec));
  if (r.ok()) {
    out << "FAIL: an invalid ModelService (maxSurge 0 and maxUnavailable 0) was admitted: no validating "
           "webhook replica answered (failurePolicy Ignore?)\n";
    return false;
  }
  const std::string text = r.Text();
  if (text.find(kValidatingWebhook) == std::string::npos) {
    out << "FAIL: an invalid ModelService was refused, but not by " << kValidatingWebhook << ": " << text << "\n";
    return false;
  }
  out << "ok: the validating webhook denied an invalid ModelService: " << text << "\n";
  return true;
}

}  // namespace

int CheckAdmission(kube::Client& client, const std::string& ns, std::ostream& out) {
  const std::string path = "/apis/modelops.dev/v1/namespaces/" + ns + "/modelservices?dryRun=All";
  const bool defaulted = Defaulted(client, path, ns, out);
  const bool denied = Denied(client, path, ns, out);
  return defaulted && denied ? 0 : 1;
}

int CheckAdmissionMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string ns;
  std::string kubeconfig;
  for (const std::string& a : args) {
    if (a.starts_with("--namespace=")) {
      ns = a.substr(std::string_view("--namespace=").size());
    } else if (a.starts_with("--kubeconfig=")) {
      kubeconfig = a.substr(std::string_view("--kubeconfig=").size());
    } else {
      err << "usage: modelservice-controller check-admission --namespace=NS [--kubeconfig=FILE]\n"
             "  server-side dry-run creates of a valid and an invalid ModelService in NS: exit 0 when the\n"
             "  mutating webhook defaulted the one and the validating webhook denied the other\n";
      return 2;
    }
  }
  if (ns.empty()) {
    err << "check-admission: --namespace is required\n";
    return 2;
  }
  const kube::curl::GlobalInit curl;
  kube::RestConfig rest;
  try {
    rest = kube::ResolveConfig(kubeconfig);
  } catch (const std::exception& e) {
    err << "check-admission: cannot load the API server configuration: " << e.what() << "\n";
    return 1;
  }
  clock::SystemClock clock;
  metrics::Registry registry;
  kube::ClientMetrics client_metrics(registry);
  kube::HttpClientOptions options;
  options.request_timeout = std::chrono::seconds(15);
  kube::HttpClient client(rest, clock, client_metrics, nullptr, options);
  return CheckAdmission(client, ns, out);
}

}  // namespace ms::controller
