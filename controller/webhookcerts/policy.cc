#include "controller/webhookcerts/policy.h"

#include <algorithm>

#include "shared/flags/flags.h"

namespace ms::webhookcerts {

std::optional<Mode> ParseMode(std::string_view s) {
  if (s == "self") return Mode::kSelf;
  if (s == "cert-manager") return Mode::kCertManager;
  if (s == "provided") return Mode::kProvided;
  return std::nullopt;
}

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kSelf:
      return "self";
    case Mode::kCertManager:
      return "cert-manager";
    case Mode::kProvided:
      return "provided";
  }
  return "self";
}

namespace {

// A DNS-1123 label: what a Service name and a namespace are.
bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

std::string CheckSettings(const Settings& s) {
  if (s.mode != Mode::kSelf) return {};
  if (!IsDnsLabel(s.service_name)) return "--webhook-service-name must be a DNS label (a Service name)";
  if (!s.secret_namespace.empty() && !IsDnsLabel(s.secret_namespace))
    return "--cert-secret-namespace must be a DNS label (a namespace)";
  if (s.secret_name.empty()) return "--cert-secret-name must not be empty";
  if (s.serving_validity < std::chrono::minutes(1)) return "--serving-cert-validity must be at least 1m";
  if (s.ca_validity < s.serving_validity) return "--ca-cert-validity must be at least --serving-cert-validity";
  return {};
}

std::vector<std::string> ServiceDnsNames(const std::string& service, const std::string& ns) {
  return {service, service + "." + ns, service + "." + ns + ".svc", service + "." + ns + ".svc.cluster.local"};
}

Policy MakePolicy(const Settings& s) {
  Policy p;
  p.dns_names = ServiceDnsNames(s.service_name, s.secret_namespace);
  p.common_name = p.dns_names[2];
  p.ca_validity = std::chrono::duration_cast<Duration>(s.ca_validity);
  p.serving_validity = std::chrono::duration_cast<Duration>(s.serving_validity);
  p.propagation = PropagationDelay(p.ca_validity);
  return p;
}

WallTime RenewAt(WallTime not_before, WallTime not_after) { return not_before + (not_after - not_before) * 2 / 3; }

Duration Backdate(Duration validity) { return std::min<Duration>(std::chrono::hours(1), validity / 10); }

Duration PropagationDelay(Duration ca_validity) {
  return std::clamp<Duration>(ca_validity / 12, std::chrono::seconds(1), std::chrono::minutes(5));
}

WallTime FloorSeconds(WallTime t) { return std::chrono::floor<std::chrono::seconds>(t); }
WallTime CeilSeconds(WallTime t) { return std::chrono::ceil<std::chrono::seconds>(t); }

}  // namespace ms::webhookcerts

namespace ms::webhookcerts {

void DefineFlags(flags::FlagSet& fs, Settings& s) {
  fs.String("cert-mode", &s.mode_name,
            "who keeps the webhook's serving certificate: self (this controller's leader: a CA and the serving "
            "certificate in --cert-secret-name, the CA injected into both webhook configurations, renewed before "
            "they expire), cert-manager or provided (the controller leaves certificates alone)");
  fs.Validate("cert-mode", [&s] {
    const auto mode = ParseMode(s.mode_name);
    if (!mode) return "--cert-mode must be one of self, cert-manager, provided (got \"" + s.mode_name + "\")";
    s.mode = *mode;
    return std::string();
  });
  fs.String("cert-secret-name", &s.secret_name,
            "with --cert-mode=self: the Secret holding the webhook's CA and serving certificate (the webhook mounts "
            "its tls.crt and tls.key)");
  fs.String("cert-secret-namespace", &s.secret_namespace,
            "namespace of that Secret and of the webhook's Service (default: the pod's namespace in cluster, else "
            "\"default\")");
  fs.String("webhook-service-name", &s.service_name,
            "the webhook's Service: the serving certificate is for its DNS names (NAME, NAME.NS, NAME.NS.svc, "
            "NAME.NS.svc.cluster.local)");
  fs.String("validating-webhook-configuration", &s.validating_configuration,
            "the ValidatingWebhookConfiguration whose caBundle the controller keeps (empty: none)");
  fs.String("mutating-webhook-configuration", &s.mutating_configuration,
            "the MutatingWebhookConfiguration whose caBundle the controller keeps (empty: none)");
  fs.Duration("ca-cert-validity", &s.ca_validity,
              "lifetime of the CA the controller makes; renewed at 2/3 of it with an overlap (values under 1h "
              "are for tests)");
  fs.Duration("serving-cert-validity", &s.serving_validity,
              "lifetime of the webhook's serving certificate; renewed at 2/3 of it");
}

}  // namespace ms::webhookcerts
