// The certificates as the controller keeps them, and how they are read from
// and written to the API objects:
//
// Secret (type kubernetes.io/tls), data:
//   tls.crt, tls.key          the serving certificate and key (what the webhook mounts)
//   ca.crt                    the trust bundle: every CA the API server must
//                             trust now (what goes into caBundle)
//   ca-current.crt/.key       the CA that signs the serving certificate
//   ca-next.crt/.key          a new CA, trusted but not signing yet (CA rotation)
//   ca-previous.crt           CAs no longer signing, still trusted until
//                             annotation modelops.dev/ca-previous-until
// annotation modelops.dev/ca-next-trusted-since: when both webhook
// configurations were first seen carrying ca-next.
//
// Webhook configurations: webhooks[*].clientConfig.caBundle = ca.crt.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "controller/webhookcerts/policy.h"
#include "shared/certs/x509.h"

namespace ms::webhookcerts {

using ms::certs::Certificate;

inline constexpr const char* kNextTrustedSinceAnnotation = "modelops.dev/ca-next-trusted-since";
inline constexpr const char* kPreviousUntilAnnotation = "modelops.dev/ca-previous-until";

// A certificate with its private key.
struct CertRecord {
  Certificate cert;
  std::string key_pem;
  bool key_ok = false;    // key_pem belongs to cert
  std::string signed_by;  // fingerprint of the CA that verifiably signed it (serving certificates), or ""
};

struct SecretState {
  std::optional<CertRecord> current;  // the CA that signs
  std::optional<CertRecord> next;     // the CA being introduced
  std::vector<Certificate> previous;  // retired CAs, still trusted until previous_until
  std::optional<CertRecord> serving;
  std::optional<WallTime> next_trusted_since;
  std::optional<WallTime> previous_until;
  std::vector<Certificate> bundle;  // ca.crt as read (only meaningful on an observed Secret)
};

// The CAs to trust now: previous (not expired), current, next; each once.
std::vector<Certificate> TrustBundle(const SecretState& s, WallTime now);
std::string BundlePem(const std::vector<Certificate>& bundle);
std::vector<std::string> Fingerprints(const std::vector<Certificate>& certs);

// Reads a Secret object. What does not parse (a malformed certificate, a
// key that does not match) is left out or marked, never thrown: the
// decision replaces it. `notes` gets one line per thing left out.
SecretState ParseSecret(const nlohmann::json& secret, std::vector<std::string>* notes = nullptr);

// The Secret's data (base64 values) and annotations for `s` with `bundle`.
nlohmann::json SecretData(const SecretState& s, const std::vector<Certificate>& bundle);
nlohmann::json SecretAnnotations(const SecretState& s);
// A new Secret object.
nlohmann::json NewSecret(const std::string& ns, const std::string& name, const SecretState& s,
                         const std::vector<Certificate>& bundle);
// `observed` with our data keys and annotations set to `s` (other keys and
// annotations kept, managedFields dropped), for an update.
nlohmann::json UpdatedSecret(nlohmann::json observed, const SecretState& s, const std::vector<Certificate>& bundle);

// A webhook configuration as the decision sees it.
struct ConfigState {
  std::string name;
  bool exists = false;
  // Per webhook entry: the fingerprints of the certificates in its caBundle
  // (empty when blank or unreadable).
  std::vector<std::vector<std::string>> webhook_bundles;
  std::vector<Certificate> cas;  // every certificate found in them, each once
};
ConfigState ParseConfig(const std::string& name, const std::optional<nlohmann::json>& config);

// Sets every webhook's clientConfig.caBundle to `bundle_pem` (base64), and
// drops managedFields, for an update. Returns false when there is no
// webhooks list.
bool InjectBundle(nlohmann::json& config, const std::string& bundle_pem);

}  // namespace ms::webhookcerts
