// Who owns the webhook's serving certificate, and on which schedule the
// controller renews it in mode `self` (docs/operator/certificates.md):
//   - a serving certificate is renewed at 2/3 of its lifetime (notBefore to
//     notAfter), never beyond the end of the CA that signs it;
//   - a CA is renewed at 2/3 of its lifetime: the new CA joins the trust
//     bundle first, signs only once both webhook configurations have carried
//     that bundle for `propagation`, and the old CA stays in the bundle for
//     another `propagation` after the switch;
//   - `propagation` is the time every API server and every webhook replica
//     (kubelet's Secret volume sync) are given to load a change:
//     ca_validity / 12, between 1 s and 5 minutes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ms::flags {
class FlagSet;
}

namespace ms::webhookcerts {

using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;

// --cert-mode: `self` (the controller keeps the certificates), `cert-manager`
// (cert-manager issues them and injects the CA) or `provided` (the user's
// Secret and caBundle): in the last two the controller leaves them alone.
enum class Mode { kSelf, kCertManager, kProvided };
std::optional<Mode> ParseMode(std::string_view s);
std::string_view ModeName(Mode mode);

// The controller's certificate flags.
struct Settings {
  Mode mode = Mode::kSelf;
  std::string mode_name = "self";  // --cert-mode as given (parsed into `mode`)
  std::string secret_namespace;    // empty until resolved: the pod's namespace (as --leader-election-namespace)
  std::string secret_name = "modelservice-webhook-tls";
  std::string service_name = "modelservice-webhook";                 // in secret_namespace
  std::string validating_configuration = "modelservice-validating";  // empty: none kept
  std::string mutating_configuration = "modelservice-mutating";      // empty: none kept
  std::chrono::milliseconds ca_validity = std::chrono::hours(24 * 365 * 10);
  std::chrono::milliseconds serving_validity = std::chrono::hours(24 * 365);
};

// "" when the settings can be used, else what is wrong (flag names).
std::string CheckSettings(const Settings& s);

// Defines the flags over `s`: --cert-mode, --cert-secret-name,
// --cert-secret-namespace, --webhook-service-name,
// --validating-webhook-configuration, --mutating-webhook-configuration,
// --ca-cert-validity, --serving-cert-validity. Run CheckSettings after
// parsing (it compares flags).
void DefineFlags(flags::FlagSet& fs, Settings& s);

// What the decision needs from the settings.
struct Policy {
  std::string common_name;             // SERVICE.NAMESPACE.svc
  std::vector<std::string> dns_names;  // the Service's names (ServiceDnsNames)
  Duration ca_validity{}, serving_validity{}, propagation{};
};
Policy MakePolicy(const Settings& s);

// SERVICE, SERVICE.NAMESPACE, SERVICE.NAMESPACE.svc, SERVICE.NAMESPACE.svc.cluster.local.
std::vector<std::string> ServiceDnsNames(const std::string& service, const std::string& ns);

// When a certificate valid from `not_before` to `not_after` is renewed.
WallTime RenewAt(WallTime not_before, WallTime not_after);
// How far before its issue time a certificate starts (clock skew between the
// controller and the API servers): a tenth of its validity, at most 1 h.
Duration Backdate(Duration validity);
// See the header comment.
Duration PropagationDelay(Duration ca_validity);

// Whole seconds (certificates and annotations carry no fraction).
WallTime FloorSeconds(WallTime t);
WallTime CeilSeconds(WallTime t);

}  // namespace ms::webhookcerts
