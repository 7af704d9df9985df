// The decision of mode `self` case by case: first start, a steady state that
// writes nothing, a blanked caBundle, a deleted or foreign Secret, broken
// keys, names that changed.
#include "controller/webhookcerts/decide.h"

#include <gtest/gtest.h>

#include "test/controller/webhookcerts/fake_issuer.h"
#include "test/support/fake_clock.h"

namespace ms::webhookcerts {
namespace {

using namespace std::chrono_literals;
using testing::Configs;
using testing::FakeIssuer;
using testing::FakeRecord;

class DecideTest : public ::testing::Test {
 protected:
  DecideTest() {
    Settings s;
    s.secret_namespace = "ns";
    s.service_name = "wh";
    s.ca_validity = 10h;
    s.serving_validity = 1h;
    policy = MakePolicy(s);
    now = clock.WallNow();
  }
  // A steady state at `now`: ca-a signs srv-a, both configurations trust ca-a.
  Observed Steady() {
    SecretState s;
    s.current = FakeRecord("ca-a", now - 1h, now + 9h, true);
    s.serving = FakeRecord("srv-a", now - 10min, now + 50min, false, policy.dns_names, "ca-a");
    s.bundle = {s.current->cert};
    return Observed{s, Configs({"ca-a"}, {s.current->cert})};
  }

  FakeClock clock;
  Policy policy;
  WallTime now;
  FakeIssuer issuer;
};

TEST_F(DecideTest, FirstStartMakesACaAndAServingCertificateAndFixesBothConfigurations) {
  const Decision d = Decide(Observed{std::nullopt, Configs()}, now, policy, issuer);
  EXPECT_TRUE(d.write_secret);
  ASSERT_TRUE(d.secret.current && d.secret.serving);
  EXPECT_EQ(d.secret.current->cert.fingerprint, "ca-1");
  EXPECT_EQ(d.secret.current->cert.not_after, now + 10h);
  EXPECT_EQ(d.secret.current->cert.not_before, now - 1h);  // backdated by min(1 h, 10 h / 10)
  EXPECT_EQ(d.secret.serving->cert.fingerprint, "srv-1");
  EXPECT_EQ(d.secret.serving->signed_by, "ca-1");
  EXPECT_EQ(d.secret.serving->cert.dns_names,
            (std::vector<std::string>{"wh", "wh.ns", "wh.ns.svc", "wh.ns.svc.cluster.local"}));
  EXPECT_EQ(d.secret.serving->cert.not_before, now - 6min);
  EXPECT_EQ(d.secret.serving->cert.not_after, now + 1h);
  EXPECT_FALSE(d.secret.next);
  EXPECT_TRUE(d.secret.previous.empty());
  EXPECT_EQ(Fingerprints(d.bundle), std::vector<std::string>{"ca-1"});
  EXPECT_EQ(d.configs_to_fix, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(d.cas_issued, 1);
  EXPECT_EQ(d.servings_issued, 1);
  // Next: the serving certificate's 2/3 (notBefore + 44 min).
  EXPECT_EQ(d.next_check, now - 6min + 44min);
}

TEST_F(DecideTest, ASteadyStateWritesNothing) {
  const Decision d = Decide(Steady(), now, policy, issuer);
  EXPECT_FALSE(d.write_secret);
  EXPECT_TRUE(d.configs_to_fix.empty());
  EXPECT_TRUE(d.changes.empty());
  EXPECT_EQ(issuer.cas + issuer.servings, 0);
  // Its own output, observed again, is steady too.
  const Decision first = Decide(Observed{std::nullopt, Configs()}, now, policy, issuer);
  Observed again{first.secret, Configs(Fingerprints(first.bundle), first.bundle)};
  const Decision second = Decide(again, now + 1s, policy, issuer);
  EXPECT_FALSE(second.write_secret);
  EXPECT_TRUE(second.configs_to_fix.empty());
}

TEST_F(DecideTest, ABlankedCaBundleIsPutBackWithoutTouchingTheSecret) {
  Observed o = Steady();
  o.configs[1].webhook_bundles = {{}};  // `kubectl apply` of caBundle: ""
  o.configs[1].cas.clear();
  const Decision d = Decide(o, now, policy, issuer);
  EXPECT_FALSE(d.write_secret);
  EXPECT_EQ(d.configs_to_fix, std::vector<size_t>{1});
  EXPECT_EQ(Fingerprints(d.bundle), std::vector<std::string>{"ca-a"});
}

TEST_F(DecideTest, EveryWebhookOfAConfigurationIsChecked) {
  Observed o = Steady();
  o.configs[0].webhook_bundles = {{"ca-a"}, {"ca-other"}};
  const Decision d = Decide(o, now, policy, issuer);
  EXPECT_EQ(d.configs_to_fix, std::vector<size_t>{0});
}

TEST_F(DecideTest, AConfigurationThatDoesNotExistIsLeftAlone) {
  Observed o = Steady();
  o.configs[0] = ConfigState{"validating", false, {}, {}};
  const Decision d = Decide(o, now, policy, issuer);
  EXPECT_TRUE(d.configs_to_fix.empty());
}

// The Secret deleted: a new CA signs at once, and the CA the configurations
// still trust stays in the bundle for one propagation delay, so webhook
// replicas still serving the old certificate are not refused.
TEST_F(DecideTest, ADeletedSecretIsMadeAgainAndTheOldCaStaysTrustedForAWhile) {
  Observed o = Steady();
  o.secret.reset();
  const Decision d = Decide(o, now, policy, issuer);
  EXPECT_TRUE(d.write_secret);
  EXPECT_EQ(d.secret.current->cert.fingerprint, "ca-1");
  EXPECT_EQ(d.secret.serving->signed_by, "ca-1");
  EXPECT_EQ(Fingerprints(d.bundle), (std::vector<std::string>{"ca-a", "ca-1"}));
  ASSERT_TRUE(d.secret.previous_until);
  EXPECT_EQ(*d.secret.previous_until, now + policy.propagation);
  EXPECT_EQ(d.configs_to_fix, (std::vector<size_t>{0, 1}));
  // Once that has passed, ca-a leaves.
  Observed later{d.secret, Configs(Fingerprints(d.bundle), d.bundle)};
  const Decision d2 = Decide(later, *d.secret.previous_until, policy, issuer);
  EXPECT_EQ(Fingerprints(d2.bundle), std::vector<std::string>{"ca-1"});
  EXPECT_FALSE(d2.secret.previous_until);
}

// A Secret made by hand or by certs-scripts/gen-certs.sh (no CA key): taken
// over with a new CA, its ca.crt trusted a while longer.
TEST_F(DecideTest, AForeignSecretIsTakenOverKeepingItsCaTrustedForAWhile) {
  SecretState foreign;
  const CertRecord their_ca = FakeRecord("their-ca", now - 24h, now + 24h * 300, true);
  foreign.serving = FakeRecord("their-srv", now - 24h, now + 24h * 300, false, policy.dns_names);
  foreign.bundle = {their_ca.cert};
  const Decision d = Decide(Observed{foreign, Configs({"their-ca"}, {their_ca.cert})}, now, policy, issuer);
  EXPECT_EQ(Fingerprints(d.bundle), (std::vector<std::string>{"their-ca", "ca-1"}));
  EXPECT_EQ(d.secret.serving->cert.fingerprint, "srv-1");
}

TEST_F(DecideTest, AServingCertificateThatDoesNotFitIsReplaced) {
  struct Bad {
    const char* what;
    void (*spoil)(CertRecord&);
  };
  const Bad cases[] = {
      {"key", [](CertRecord& r) { r.key_ok = false; }},
      {"signer", [](CertRecord& r) { r.signed_by = "ca-other"; }},
      {"names", [](CertRecord& r) { r.cert.dns_names = {"wh.other.svc"}; }},
  };
  for (const auto& bad : cases) {
    Observed o = Steady();
    bad.spoil(*o.secret->serving);
    const Decision d = Decide(o, now, policy, issuer);
    EXPECT_TRUE(d.write_secret) << bad.what;
    EXPECT_NE(d.secret.serving->cert.fingerprint, "srv-a") << bad.what;
    EXPECT_EQ(d.secret.current->cert.fingerprint, "ca-a") << bad.what;
    EXPECT_TRUE(d.configs_to_fix.empty()) << bad.what;
  }
  // Another Service name: the certificate is made again for its names.
  Settings s;
  s.secret_namespace = "ns";
  s.service_name = "renamed";
  s.ca_validity = 10h;
  s.serving_validity = 1h;
  const Decision d = Decide(Steady(), now, MakePolicy(s), issuer);
  EXPECT_EQ(d.secret.serving->cert.dns_names[0], "renamed");
}

TEST_F(DecideTest, ACaWhoseKeyIsLostGivesWayToAUsableNext) {
  Observed o = Steady();
  o.secret->current->key_ok = false;
  o.secret->next = FakeRecord("ca-b", now - 1h, now + 10h, true);
  const Decision d = Decide(o, now, policy, issuer);
  EXPECT_EQ(d.secret.current->cert.fingerprint, "ca-b");
  EXPECT_FALSE(d.secret.next);
  EXPECT_EQ(d.cas_issued, 0);
  EXPECT_EQ(d.secret.serving->signed_by, "ca-b");
  EXPECT_EQ(Fingerprints(d.bundle), (std::vector<std::string>{"ca-a", "ca-b"}));
}

TEST_F(DecideTest, ACaNextIsMadeAtTwoThirdsOfTheCaLifetimeAndSignsOnlyOnceTrusted) {
  Observed o = Steady();
  const WallTime renew = RenewAt(o.secret->current->cert.not_before, o.secret->current->cert.not_after);
  EXPECT_FALSE(Decide(o, renew - 1s, policy, issuer).secret.next);
  const Decision d = Decide(o, renew, policy, issuer);
  ASSERT_TRUE(d.secret.next);
  EXPECT_EQ(d.secret.current->cert.fingerprint, "ca-a");
  EXPECT_EQ(d.secret.serving->signed_by, "ca-a");
  EXPECT_FALSE(d.secret.next_trusted_since);
  EXPECT_EQ(Fingerprints(d.bundle), (std::vector<std::string>{"ca-a", "ca-1"}));
  // One configuration carries both, the other not yet: not trusted.
  Observed half{d.secret, Configs(Fingerprints(d.bundle), d.bundle)};
  half.configs[1].webhook_bundles = {{"ca-a"}};
  EXPECT_FALSE(Decide(half, renew + 1s, policy, issuer).secret.next_trusted_since);
  // Both: trusted from then; signing one propagation delay later.
  Observed both{d.secret, Configs(Fingerprints(d.bundle), d.bundle)};
  const Decision t = Decide(both, renew + 1s, policy, issuer);
  ASSERT_TRUE(t.secret.next_trusted_since);
  EXPECT_EQ(*t.secret.next_trusted_since, renew + 1s);
  EXPECT_EQ(t.next_check, renew + 1s + policy.propagation);
  Observed trusted{t.secret, both.configs};
  EXPECT_EQ(Decide(trusted, renew + 1s + policy.propagation - 1ms, policy, issuer).secret.current->cert.fingerprint,
            "ca-a");
  const Decision sw = Decide(trusted, renew + 1s + policy.propagation, policy, issuer);
  EXPECT_EQ(sw.secret.current->cert.fingerprint, "ca-1");
  EXPECT_EQ(sw.secret.serving->signed_by, "ca-1");
  EXPECT_EQ(Fingerprints(sw.bundle), (std::vector<std::string>{"ca-a", "ca-1"}));
  EXPECT_EQ(*sw.secret.previous_until, renew + 1s + 2 * policy.propagation);
}

TEST_F(DecideTest, PropagationDelayAndBackdating) {
  EXPECT_EQ(PropagationDelay(6min), 30s);
  EXPECT_EQ(PropagationDelay(1h), 5min);
  EXPECT_EQ(PropagationDelay(std::chrono::hours(87600)), 5min);
  EXPECT_EQ(PropagationDelay(3s), 1s);
  EXPECT_EQ(Backdate(2min), 12s);
  EXPECT_EQ(Backdate(std::chrono::hours(8760)), 1h);
  EXPECT_EQ(RenewAt(now, now + 3h), now + 2h);
}

}  // namespace
}  // namespace ms::webhookcerts
