#include "controller/webhookcerts/state.h"

#include <set>

#include "shared/clock/timefmt.h"
#include "shared/text/base64.h"
#include "shared/text/json_fields.h"

namespace ms::webhookcerts {

namespace {

constexpr const char* kOurKeys[] = {"tls.crt",        "tls.key",     "ca.crt",      "ca-current.crt",
                                    "ca-current.key", "ca-next.crt", "ca-next.key", "ca-previous.crt"};

void Note(std::vector<std::string>* notes, std::string line) {
  if (notes) notes->push_back(std::move(line));
}

// data[key], base64-decoded; nullopt when absent or not base64.
std::optional<std::string> DataValue(const nlohmann::json& secret, const char* key) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return std::nullopt;
  const std::string b64 = text::StringField(*data, key);
  if (b64.empty()) return std::nullopt;
  return text::Base64Decode(b64);
}

std::optional<CertRecord> ParseRecord(const nlohmann::json& secret, const char* cert_key, const char* key_key,
                                      std::vector<std::string>* notes) {
  const auto pem = DataValue(secret, cert_key);
  if (!pem) return std::nullopt;
  auto cert = ms::certs::ParseCertificate(*pem);
  if (!cert) {
    Note(notes, std::string(cert_key) + " holds no readable certificate");
    return std::nullopt;
  }
  CertRecord r;
  r.cert = std::move(*cert);
  r.key_pem = DataValue(secret, key_key).value_or("");
  r.key_ok = ms::certs::KeyMatches(*pem, r.key_pem);
  if (!r.key_ok) Note(notes, std::string(key_key) + " does not hold the key of " + cert_key);
  return r;
}

std::vector<Certificate> ParseList(const std::optional<std::string>& pem, const char* what,
                                   std::vector<std::string>* notes) {
  if (!pem) return {};
  try {
    return ms::certs::ParseCertificates(*pem);
  } catch (const std::exception& e) {
    Note(notes, std::string(what) + ": " + e.what());
    return {};
  }
}

std::optional<WallTime> Annotation(const nlohmann::json& object, const char* key) {
  const auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return std::nullopt;
  const auto ann = md->find("annotations");
  if (ann == md->end() || !ann->is_object()) return std::nullopt;
  const std::string v = text::StringField(*ann, key);
  if (v.empty()) return std::nullopt;
  return ms::clock::ParseTime(v);
}

std::string B64(const std::string& s) { return text::Base64Encode(s); }

}  // namespace

std::vector<Certificate> TrustBundle(const SecretState& s, WallTime now) {
  std::vector<Certificate> out;
  std::set<std::string> seen;
  auto add = [&](const Certificate& c) {
    if (now < c.not_after && seen.insert(c.fingerprint).second) out.push_back(c);
  };
  for (const auto& c : s.previous) add(c);
  if (s.current) add(s.current->cert);
  if (s.next) add(s.next->cert);
  return out;
}

std::string BundlePem(const std::vector<Certificate>& bundle) {
  std::string out;
  for (const auto& c : bundle) out += c.pem;
  return out;
}

std::vector<std::string> Fingerprints(const std::vector<Certificate>& certs) {
  std::vector<std::string> out;
  out.reserve(certs.size());
  for (const auto& c : certs) out.push_back(c.fingerprint);
  return out;
}

SecretState ParseSecret(const nlohmann::json& secret, std::vector<std::string>* notes) {
  SecretState s;
  s.current = ParseRecord(secret, "ca-current.crt", "ca-current.key", notes);
  s.next = ParseRecord(secret, "ca-next.crt", "ca-next.key", notes);
  s.serving = ParseRecord(secret, "tls.crt", "tls.key", notes);
  s.previous = ParseList(DataValue(secret, "ca-previous.crt"), "ca-previous.crt", notes);
  s.bundle = ParseList(DataValue(secret, "ca.crt"), "ca.crt", notes);
  if (s.serving) {
    for (const auto* ca : {&s.current, &s.next}) {
      if (*ca && ms::certs::IsSignedBy(s.serving->cert.pem, (*ca)->cert.pem)) {
        s.serving->signed_by = (*ca)->cert.fingerprint;
        break;
      }
    }
  }
  s.next_trusted_since = Annotation(secret, kNextTrustedSinceAnnotation);
  s.previous_until = Annotation(secret, kPreviousUntilAnnotation);
  return s;
}

nlohmann::json SecretData(const SecretState& s, const std::vector<Certificate>& bundle) {
  nlohmann::json data = nlohmann::json::object();
  if (s.serving) {
    data["tls.crt"] = B64(s.serving->cert.pem);
    data["tls.key"] = B64(s.serving->key_pem);
  }
  data["ca.crt"] = B64(BundlePem(bundle));
  if (s.current) {
    data["ca-current.crt"] = B64(s.current->cert.pem);
    data["ca-current.key"] = B64(s.current->key_pem);
  }
  if (s.next) {
    data["ca-next.crt"] = B64(s.next->cert.pem);
    data["ca-next.key"] = B64(s.next->key_pem);
  }
  if (!s.previous.empty()) data["ca-previous.crt"] = B64(BundlePem(s.previous));
  return data;
}

nlohmann::json SecretAnnotations(const SecretState& s) {
  nlohmann::json ann = nlohmann::json::object();
  if (s.next_trusted_since) ann[kNextTrustedSinceAnnotation] = ms::clock::FormatTime(*s.next_trusted_since);
  if (s.previous_until) ann[kPreviousUntilAnnotation] = ms::clock::FormatTime(*s.previous_until);
  return ann;
}

nlohmann::json NewSecret(const std::string& ns, const std::string& name, const SecretState& s,
                         const std::vector<Certificate>& bundle) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"labels",
         {{"app.kubernetes.io/managed-by", "modelservice-controller"}, {"app.kubernetes.io/part-of", "modelservice"}}},
        {"annotations", SecretAnnotations(s)}}},
      {"type", "kubernetes.io/tls"},
      {"data", SecretData(s, bundle)}};
}

nlohmann::json UpdatedSecret(nlohmann::json observed, const SecretState& s, const std::vector<Certificate>& bundle) {
  if (!observed["data"].is_object()) observed["data"] = nlohmann::json::object();
  for (const char* key : kOurKeys) observed["data"].erase(key);
  observed["data"].update(SecretData(s, bundle));
  nlohmann::json& md = observed["metadata"];
  md.erase("managedFields");
  if (!md["annotations"].is_object()) md["annotations"] = nlohmann::json::object();
  md["annotations"].erase(kNextTrustedSinceAnnotation);
  md["annotations"].erase(kPreviousUntilAnnotation);
  md["annotations"].update(SecretAnnotations(s));
  return observed;
}

ConfigState ParseConfig(const std::string& name, const std::optional<nlohmann::json>& config) {
  ConfigState c;
  c.name = name;
  c.exists = config.has_value();
  if (!config) return c;
  const auto webhooks = config->find("webhooks");
  if (webhooks == config->end() || !webhooks->is_array()) return c;
  std::set<std::string> seen;
  for (const auto& w : *webhooks) {
    std::vector<std::string> fps;
    const auto cc = w.is_object() ? w.find("clientConfig") : w.end();
    const auto b64 = cc != w.end() ? text::StringField(*cc, "caBundle") : std::string();
    const auto pem = b64.empty() ? std::nullopt : text::Base64Decode(b64);
    for (auto& cert : ParseList(pem, "caBundle", nullptr)) {
      fps.push_back(cert.fingerprint);
      if (seen.insert(cert.fingerprint).second) c.cas.push_back(std::move(cert));
    }
    c.webhook_bundles.push_back(std::move(fps));
  }
  return c;
}

bool InjectBundle(nlohmann::json& config, const std::string& bundle_pem) {
  auto webhooks = config.find("webhooks");
  if (webhooks == config.end() || !webhooks->is_array()) return false;
  const std::string b64 = text::Base64Encode(bundle_pem);
  for (auto& w : *webhooks) {
    if (!w.is_object()) continue;
    if (!w["clientConfig"].is_object()) w["clientConfig"] = nlohmann::json::object();
    w["clientConfig"]["caBundle"] = b64;
  }
  if (config.contains("metadata") && config["metadata"].is_object()) config["metadata"].erase("managedFields");
  return true;
}

}  // namespace ms::webhookcerts
