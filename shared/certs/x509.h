// X.509 for the webhook's serving certificate, over OpenSSL 3's EVP APIs:
// ECDSA P-256 keys, CA and serving certificates signed with SHA-256, and
// reading certificates back (validity, fingerprint, names, CA flag). Both
// programs use it: the controller issues (controller/webhookcerts), the webhook
// reads what it serves (cert_watcher.h). Everything is PEM text in and out.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ms::certs {

using WallTime = std::chrono::system_clock::time_point;

// What a certificate is, as read from its PEM.
struct Certificate {
  std::string pem;          // this one certificate, PEM
  std::string fingerprint;  // SHA-256 of the DER, lowercase hex
  std::string subject;      // e.g. "CN=modelservice-webhook.modelservice-system.svc"
  WallTime not_before{}, not_after{};
  bool is_ca = false;                  // basicConstraints CA:TRUE
  std::vector<std::string> dns_names;  // subjectAltName DNS entries, in order
};

// Every CERTIFICATE block of a PEM text, in order; other blocks (keys) are
// skipped. Throws std::runtime_error when a CERTIFICATE block is malformed.
std::vector<Certificate> ParseCertificates(std::string_view pem);

// The first certificate of a PEM text; nullopt when there is none or it is
// malformed.
std::optional<Certificate> ParseCertificate(std::string_view pem);

// A new ECDSA P-256 private key, PKCS#8 PEM.
std::string NewPrivateKey();

// The private key `key_pem` belongs to the certificate `cert_pem` (its first
// certificate). False when either does not parse.
bool KeyMatches(std::string_view cert_pem, std::string_view key_pem);

// `cert_pem` was issued by `issuer_pem`: the issuer's subject is its issuer
// and the issuer's public key verifies its signature. False when either does
// not parse.
bool IsSignedBy(std::string_view cert_pem, std::string_view issuer_pem);

// What to put in a new certificate.
struct Template {
  std::string common_name;
  std::vector<std::string> dns_names;  // subjectAltName (serving certificates)
  bool is_ca = false;                  // CA: keyCertSign; else digitalSignature + serverAuth
  WallTime not_before{}, not_after{};
};

struct KeyPairPem {
  std::string cert_pem;
  std::string key_pem;
};

// Issues a certificate for the public half of `subject_key_pem`, signed by
// `issuer` (a CA's certificate and key), or self-signed when `issuer` is
// null. A random 128-bit serial, SHA-256, X.509 v3 with subject and
// authority key identifiers. Returns the certificate's PEM; throws
// std::runtime_error when OpenSSL refuses (bad key, issuer key not matching).
std::string Issue(const Template& tmpl, std::string_view subject_key_pem, const KeyPairPem* issuer);

// Checks a serving pair as the webhook loads it: the first certificate and
// the key parse and match. Returns the leaf; throws std::runtime_error with
// the reason otherwise.
Certificate CheckPair(std::string_view cert_pem, std::string_view key_pem);

}  // namespace ms::certs
