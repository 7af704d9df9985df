// The Secret and the webhook configurations as read and written, with real
// certificates (OpensslIssuer): what is written reads back the same, what is
// broken is reported and left for the decision to replace, what is not ours
// is kept.
#include "controller/webhookcerts/state.h"

#include <gtest/gtest.h>

#include "controller/webhookcerts/issuer.h"
#include "shared/clock/timefmt.h"
#include "shared/text/base64.h"

namespace ms::webhookcerts {
namespace {

using namespace std::chrono_literals;

class StateTest : public ::testing::Test {
 protected:
  StateTest() {
    now = FloorSeconds(std::chrono::system_clock::now());
    s.current = issuer.NewCa("ca-current", now - 1h, now + 24h);
    s.next = issuer.NewCa("ca-next", now - 1h, now + 48h);
    s.serving = issuer.NewServing(*s.current, "wh.ns.svc", {"wh", "wh.ns", "wh.ns.svc", "wh.ns.svc.cluster.local"},
                                  now - 1h, now + 2h);
    s.previous = {issuer.NewCa("ca-old", now - 30h, now + 1h).cert};
    s.next_trusted_since = now - 10s;
    s.previous_until = now + 5min;
  }
  static std::string Data(const nlohmann::json& secret, const char* key) {
    return *text::Base64Decode(secret["data"][key].get<std::string>());
  }

  OpensslIssuer issuer;
  WallTime now;
  SecretState s;
};

TEST_F(StateTest, ASecretReadsBackAsWritten) {
  const auto bundle = TrustBundle(s, now);
  ASSERT_EQ(bundle.size(), 3u);
  const nlohmann::json secret = NewSecret("ns", "wh-tls", s, bundle);
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret["metadata"]["labels"]["app.kubernetes.io/managed-by"], "modelservice-controller");
  EXPECT_EQ(Data(secret, "tls.crt"), s.serving->cert.pem);
  EXPECT_EQ(Data(secret, "tls.key"), s.serving->key_pem);
  EXPECT_EQ(Data(secret, "ca.crt"), s.previous[0].pem + s.current->cert.pem + s.next->cert.pem);
  EXPECT_EQ(secret["metadata"]["annotations"][kPreviousUntilAnnotation], ms::clock::FormatTime(now + 5min));

  std::vector<std::string> notes;
  const SecretState back = ParseSecret(secret, &notes);
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(back.current && back.next && back.serving);
  EXPECT_EQ(back.current->cert.fingerprint, s.current->cert.fingerprint);
  EXPECT_TRUE(back.current->key_ok);
  EXPECT_TRUE(back.current->cert.is_ca);
  EXPECT_EQ(back.next->cert.fingerprint, s.next->cert.fingerprint);
  EXPECT_EQ(back.serving->cert.fingerprint, s.serving->cert.fingerprint);
  EXPECT_EQ(back.serving->signed_by, s.current->cert.fingerprint);  // verified, not taken from the writer
  EXPECT_EQ(back.serving->cert.dns_names, s.serving->cert.dns_names);
  EXPECT_EQ(back.serving->cert.not_after, now + 2h);
  EXPECT_EQ(Fingerprints(back.previous), Fingerprints(s.previous));
  EXPECT_EQ(Fingerprints(back.bundle), Fingerprints(bundle));
  EXPECT_EQ(back.next_trusted_since, s.next_trusted_since);
  EXPECT_EQ(back.previous_until, s.previous_until);
}

TEST_F(StateTest, WhatIsBrokenIsReportedNotThrown) {
  nlohmann::json secret = NewSecret("ns", "wh-tls", s, TrustBundle(s, now));
  secret["data"]["ca-current.key"] = text::Base64Encode(s.next->key_pem);  // another CA's key
  secret["data"]["ca-next.crt"] =
      text::Base64Encode("-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n");
  secret["data"]["ca.crt"] = "%%% not base64";
  secret["data"]["ca-previous.crt"] = text::Base64Encode("garbage");
  secret["metadata"]["annotations"][kNextTrustedSinceAnnotation] = "yesterday";
  std::vector<std::string> notes;
  const SecretState back = ParseSecret(secret, &notes);
  ASSERT_TRUE(back.current);
  EXPECT_FALSE(back.current->key_ok);
  EXPECT_FALSE(back.next);
  EXPECT_TRUE(back.bundle.empty());
  EXPECT_TRUE(back.previous.empty());
  EXPECT_FALSE(back.next_trusted_since);
  EXPECT_EQ(notes, (std::vector<std::string>{"ca-current.key does not hold the key of ca-current.crt",
                                             "ca-next.crt holds no readable certificate"}));
  EXPECT_TRUE(ParseSecret(nlohmann::json::object()).bundle.empty());
  EXPECT_FALSE(ParseSecret(nlohmann::json{{"data", 5}}).serving);
}

TEST_F(StateTest, AnUpdateKeepsWhatIsNotOurs) {
  nlohmann::json observed = NewSecret("ns", "wh-tls", s, TrustBundle(s, now));
  observed["metadata"]["resourceVersion"] = "42";
  observed["metadata"]["managedFields"] = nlohmann::json::array({{{"manager", "kubectl"}}});
  observed["metadata"]["annotations"]["team"] = "ml";
  observed["data"]["extra"] = text::Base64Encode("kept");
  SecretState later = s;
  later.next.reset();
  later.next_trusted_since.reset();
  later.previous.clear();
  later.previous_until.reset();
  const nlohmann::json updated = UpdatedSecret(observed, later, TrustBundle(later, now));
  EXPECT_EQ(updated["metadata"]["resourceVersion"], "42");
  EXPECT_FALSE(updated["metadata"].contains("managedFields"));
  EXPECT_EQ(updated["metadata"]["annotations"], (nlohmann::json{{"team", "ml"}}));
  EXPECT_EQ(Data(updated, "extra"), "kept");
  EXPECT_FALSE(updated["data"].contains("ca-next.crt"));
  EXPECT_FALSE(updated["data"].contains("ca-next.key"));
  EXPECT_FALSE(updated["data"].contains("ca-previous.crt"));
  EXPECT_EQ(Data(updated, "ca.crt"), s.current->cert.pem);
}

TEST_F(StateTest, ConfigurationsAreReadPerWebhookAndInjectedEverywhere) {
  const std::string one = text::Base64Encode(s.current->cert.pem);
  nlohmann::json config = {
      {"metadata", {{"name", "v"}, {"resourceVersion", "7"}, {"managedFields", nlohmann::json::array()}}},
      {"webhooks",
       {{{"name", "a"}, {"clientConfig", {{"caBundle", one}}}},
        {{"name", "b"}, {"clientConfig", {{"caBundle", ""}}}},
        {{"name", "c"}, {"clientConfig", {{"caBundle", "!!"}}}},
        {{"name", "d"}}}}};
  const ConfigState c = ParseConfig("v", config);
  EXPECT_TRUE(c.exists);
  EXPECT_EQ(c.webhook_bundles, (std::vector<std::vector<std::string>>{{s.current->cert.fingerprint}, {}, {}, {}}));
  EXPECT_EQ(Fingerprints(c.cas), std::vector<std::string>{s.current->cert.fingerprint});
  EXPECT_FALSE(ParseConfig("gone", std::nullopt).exists);

  const auto bundle = TrustBundle(s, now);
  ASSERT_TRUE(InjectBundle(config, BundlePem(bundle)));
  EXPECT_FALSE(config["metadata"].contains("managedFields"));
  EXPECT_EQ(config["metadata"]["resourceVersion"], "7");
  const ConfigState after = ParseConfig("v", config);
  EXPECT_EQ(after.webhook_bundles, std::vector<std::vector<std::string>>(4, Fingerprints(bundle)));
  nlohmann::json no_webhooks = {{"metadata", {{"name", "x"}}}};
  EXPECT_FALSE(InjectBundle(no_webhooks, BundlePem(bundle)));
}

TEST_F(StateTest, TheBundleLeavesOutExpiredCas) {
  EXPECT_EQ(TrustBundle(s, now + 1h).size(), 2u);  // ca-old ends at now + 1h
  EXPECT_EQ(TrustBundle(s, now + 1h - 1s).size(), 3u);
}

}  // namespace
}  // namespace ms::webhookcerts
