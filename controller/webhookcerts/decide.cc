#include "controller/webhookcerts/decide.h"

#include <algorithm>

#include "shared/clock/timefmt.h"

namespace ms::webhookcerts {

namespace {

std::string Describe(const Certificate& c) {
  return c.subject + " (sha256 " + c.fingerprint.substr(0, 12) + ", until " + ms::clock::FormatTime(c.not_after) + ")";
}

// Why `ca` cannot sign at `now`, or "" when it can.
std::string CaProblem(const std::optional<CertRecord>& ca, WallTime now) {
  if (!ca) return "there is no CA";
  if (!ca->cert.is_ca) return "it is not a CA certificate";
  if (!ca->key_ok) return "its key does not match it";
  if (now >= ca->cert.not_after) return "it has expired";
  return {};
}

CertRecord IssueCa(Issuer& issuer, WallTime now, const Policy& p, Decision& d) {
  const WallTime t = FloorSeconds(now);
  ++d.cas_issued;
  return issuer.NewCa(CaCommonName(now), FloorSeconds(t - Backdate(p.ca_validity)), t + p.ca_validity);
}

// 1. A usable current CA; what was trusted before stays trusted a while.
void EnsureCurrent(SecretState& s, const Observed& o, WallTime now, const Policy& p, Issuer& issuer, Decision& d) {
  const std::string problem = CaProblem(s.current, now);
  if (problem.empty()) return;
  // Every CA trusted anywhere: the Secret's, its ca.crt, the configurations'.
  SecretState trusted = s;
  trusted.previous.insert(trusted.previous.end(), s.bundle.begin(), s.bundle.end());
  for (const auto& config : o.configs)
    trusted.previous.insert(trusted.previous.end(), config.cas.begin(), config.cas.end());
  std::vector<Certificate> carried = TrustBundle(trusted, now);

  if (CaProblem(s.next, now).empty()) {
    s.current = std::move(s.next);
    d.changes.push_back("the current CA cannot sign (" + problem + "): ca-next " + Describe(s.current->cert) +
                        " takes over");
  } else {
    s.current = IssueCa(issuer, now, p, d);
    d.changes.push_back("the current CA cannot sign (" + problem + "): new CA " + Describe(s.current->cert));
  }
  s.next.reset();
  s.next_trusted_since.reset();
  const std::string fp = s.current->cert.fingerprint;
  std::erase_if(carried, [&](const Certificate& c) { return c.fingerprint == fp; });
  s.previous = std::move(carried);
  s.previous_until.reset();
  if (!s.previous.empty()) {
    s.previous_until = CeilSeconds(now + p.propagation);
    d.changes.push_back(std::to_string(s.previous.size()) + " CA(s) trusted before stay in the bundle until " +
                        ms::clock::FormatTime(*s.previous_until));
  }
}

// 2. At 2/3 of the current CA's lifetime, a new CA joins the bundle.
void RenewCa(SecretState& s, WallTime now, const Policy& p, Issuer& issuer, Decision& d) {
  if (s.next) {
    if (const std::string problem = CaProblem(s.next, now); !problem.empty()) {
      d.changes.push_back("ca-next dropped: " + problem);
      s.next.reset();
      s.next_trusted_since.reset();
    }
  }
  if (s.next || now < RenewAt(s.current->cert.not_before, s.current->cert.not_after)) return;
  s.next = IssueCa(issuer, now, p, d);
  s.next_trusted_since.reset();
  d.changes.push_back("CA rotation: new CA " + Describe(s.next->cert) +
                      " joins the trust bundle; it signs once both webhook configurations have carried it for " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(p.propagation).count()) + "s");
}

bool CarriesAll(const ConfigState& c, const std::vector<std::string>& fps) {
  return std::all_of(c.webhook_bundles.begin(), c.webhook_bundles.end(), [&](const std::vector<std::string>& b) {
    return std::all_of(fps.begin(), fps.end(),
                       [&](const std::string& fp) { return std::find(b.begin(), b.end(), fp) != b.end(); });
  });
}

// 3. Record when every configuration was seen trusting both CAs.
void TrustNext(SecretState& s, const Observed& o, WallTime now, Decision& d) {
  if (!s.next || s.next_trusted_since) return;
  const std::vector<std::string> fps{s.current->cert.fingerprint, s.next->cert.fingerprint};
  for (const auto& config : o.configs)
    if (config.exists && !CarriesAll(config, fps)) return;
  s.next_trusted_since = CeilSeconds(now);
  d.changes.push_back("the webhook configurations trust ca-next since " + ms::clock::FormatTime(*s.next_trusted_since));
}

// 4. One propagation delay after that, ca-next signs.
void SwitchCa(SecretState& s, WallTime now, const Policy& p, Decision& d) {
  if (!s.next || !s.next_trusted_since || now < *s.next_trusted_since + p.propagation) return;
  s.previous.push_back(s.current->cert);
  s.previous_until = CeilSeconds(now + p.propagation);
  d.changes.push_back("CA rotation: " + Describe(s.next->cert) + " signs from now on; the old CA " +
                      Describe(s.current->cert) + " stays trusted until " + ms::clock::FormatTime(*s.previous_until));
  s.current = std::move(s.next);
  s.next.reset();
  s.next_trusted_since.reset();
}

// Why the serving certificate must be replaced, or "".
std::string ServingProblem(const std::optional<CertRecord>& srv, const CertRecord& ca, const Policy& p, WallTime now) {
  if (!srv) return "there is none";
  if (!srv->key_ok) return "its key does not match it";
  if (srv->signed_by != ca.cert.fingerprint) return "it is not signed by the current CA";
  if (srv->cert.dns_names != p.dns_names) return "its names are not the Service's";
  if (now >= srv->cert.not_after) return "it has expired";
  return {};
}

// 5. The serving certificate.
void EnsureServing(SecretState& s, WallTime now, const Policy& p, Issuer& issuer, Decision& d) {
  const WallTime t = FloorSeconds(now);
  const WallTime end = std::min(t + p.serving_validity, s.current->cert.not_after);
  std::string why = ServingProblem(s.serving, *s.current, p, now);
  if (why.empty() && now >= RenewAt(s.serving->cert.not_before, s.serving->cert.not_after) &&
      end > s.serving->cert.not_after)
    why = "2/3 of its lifetime has passed";
  if (why.empty()) return;
  s.serving =
      issuer.NewServing(*s.current, p.common_name, p.dns_names, FloorSeconds(t - Backdate(p.serving_validity)), end);
  ++d.servings_issued;
  d.changes.push_back("serving certificate issued (" + why + "): " + Describe(s.serving->cert));
}

// 6. Retired CAs leave the bundle.
void Retire(SecretState& s, WallTime now, Decision& d) {
  if (s.previous_until && now >= *s.previous_until && !s.previous.empty()) {
    d.changes.push_back(std::to_string(s.previous.size()) + " old CA(s) dropped from the trust bundle");
    s.previous.clear();
  }
  const size_t before = s.previous.size();
  std::erase_if(s.previous, [&](const Certificate& c) { return now >= c.not_after; });
  if (s.previous.size() != before) d.changes.push_back("expired CA(s) dropped from the trust bundle");
  if (s.previous.empty()) s.previous_until.reset();
}

std::string RecordId(const std::optional<CertRecord>& r) { return r ? r->cert.fingerprint + "/" + r->key_pem : ""; }

bool SameSecret(const SecretState& a, const SecretState& b) {
  return RecordId(a.current) == RecordId(b.current) && RecordId(a.next) == RecordId(b.next) &&
         RecordId(a.serving) == RecordId(b.serving) && Fingerprints(a.previous) == Fingerprints(b.previous) &&
         a.next_trusted_since == b.next_trusted_since && a.previous_until == b.previous_until;
}

// The earliest time something falls due (never before now + 1 s).
WallTime NextCheck(const SecretState& s, WallTime now, const Policy& p) {
  std::vector<WallTime> due{s.current->cert.not_after, s.serving->cert.not_after};
  if (!s.next) due.push_back(RenewAt(s.current->cert.not_before, s.current->cert.not_after));
  if (s.next) due.push_back(s.next_trusted_since ? *s.next_trusted_since + p.propagation : now + p.propagation);
  // The serving certificate's renewal, unless one then would end no later (capped at the CA's end).
  const WallTime renew = RenewAt(s.serving->cert.not_before, s.serving->cert.not_after);
  if (std::min(FloorSeconds(renew) + p.serving_validity, s.current->cert.not_after) > s.serving->cert.not_after)
    due.push_back(renew);
  if (s.previous_until) due.push_back(*s.previous_until);
  for (const auto& c : s.previous) due.push_back(c.not_after);
  return std::max(*std::min_element(due.begin(), due.end()), now + std::chrono::seconds(1));
}

}  // namespace

std::string CaCommonName(WallTime now) {
  return "modelservice-webhook-ca@" +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count());
}

Decision Decide(const Observed& observed, WallTime now, const Policy& policy, Issuer& issuer) {
  Decision d;
  SecretState s = observed.secret.value_or(SecretState{});
  EnsureCurrent(s, observed, now, policy, issuer, d);
  RenewCa(s, now, policy, issuer, d);
  TrustNext(s, observed, now, d);
  SwitchCa(s, now, policy, d);
  EnsureServing(s, now, policy, issuer, d);
  Retire(s, now, d);

  d.bundle = TrustBundle(s, now);
  const std::vector<std::string> fps = Fingerprints(d.bundle);
  d.write_secret = !observed.secret || !SameSecret(*observed.secret, s) || Fingerprints(observed.secret->bundle) != fps;
  for (size_t i = 0; i < observed.configs.size(); ++i) {
    const ConfigState& c = observed.configs[i];
    if (!c.exists) continue;
    if (std::any_of(c.webhook_bundles.begin(), c.webhook_bundles.end(),
                    [&](const std::vector<std::string>& b) { return b != fps; }))
      d.configs_to_fix.push_back(i);
  }
  d.next_check = NextCheck(s, now, policy);
  s.bundle = d.bundle;
  d.secret = std::move(s);
  return d;
}

}  // namespace ms::webhookcerts
