// The manager against an in-memory API server (objects with
// resourceVersions, 404, 409) and real certificates: it creates the Secret
// and injects the CA, writes nothing when nothing changed, repairs a blanked
// caBundle, makes a deleted Secret again, retries a conflict, rotates in
// virtual time, and writes only once it leads.
#include "controller/webhookcerts/manager.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "shared/certs/x509.h"
#include "shared/text/base64.h"
#include "test/support/fake_clock.h"
#include "test/support/verb_client.h"

namespace ms::webhookcerts {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "/api/v1/namespaces/ops/secrets/wh-tls";
constexpr const char* kValidating = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v";
constexpr const char* kMutating = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m";

class FakeApi final : public test::VerbClient {
 public:
  kube::Result OnGet(const std::string& path, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = objects_.find(path);
    if (it == objects_.end()) return Error(404, "NotFound");
    return Ok(it->second);
  }
  kube::Result OnList(const std::string&) override {
    std::lock_guard<std::mutex> g(mu_);
    ++lists_;
    cv_.notify_all();
    return Ok({{"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", nlohmann::json::array()}});
  }
  kube::Result OnCreate(const std::string& path, const nlohmann::json& body, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    const std::string at = path + "/" + body["metadata"]["name"].get<std::string>();
    if (objects_.count(at)) return Error(409, "AlreadyExists");
    return Store(at, body, "create");
  }
  kube::Result OnUpdate(const std::string& path, const nlohmann::json& body, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = objects_.find(path);
    if (it == objects_.end()) return Error(404, "NotFound");
    if (conflicts_ > 0) {
      --conflicts_;
      return Error(409, "Conflict");
    }
    if (body["metadata"].value("resourceVersion", "") != it->second["metadata"]["resourceVersion"])
      return Error(409, "Conflict");
    return Store(path, body, "update");
  }
  kube::Result OnDelete(const std::string& path, const nlohmann::json&) override {
    std::lock_guard<std::mutex> g(mu_);
    objects_.erase(path);
    return Ok({});
  }
  kube::Result Watch(const std::string&, const kube::WatchHandler&, std::stop_token stop) override {
    std::mutex m;  // quiet until the informer stops it
    std::unique_lock<std::mutex> lock(m);
    std::condition_variable_any().wait(lock, stop, [] { return false; });
    return Ok({});
  }

  void Put(const std::string& path, nlohmann::json body) {
    std::lock_guard<std::mutex> g(mu_);
    body["metadata"]["resourceVersion"] = std::to_string(++rv_);
    objects_[path] = std::move(body);
  }
  std::optional<nlohmann::json> Object(const std::string& path) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = objects_.find(path);
    return it == objects_.end() ? std::nullopt : std::optional<nlohmann::json>(it->second);
  }
  std::vector<std::string> Writes() {
    std::lock_guard<std::mutex> g(mu_);
    return writes_;
  }
  void ConflictNext(int n) {
    std::lock_guard<std::mutex> g(mu_);
    conflicts_ = n;
  }
  // Waits (real time, bounded) until `pred` holds under the lock.
  bool WaitFor(const std::function<bool()>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, pred);
  }
  int lists_ = 0;
  std::vector<std::string> writes_;

 private:
  static kube::Result Ok(nlohmann::json body) {
    kube::Result r;
    r.code = 200;
    r.body = std::move(body);
    return r;
  }
  static kube::Result Error(int code, const std::string& reason) {
    kube::Result r;
    r.code = code;
    r.error = kube::Status{code, reason, reason};
    return r;
  }
  kube::Result Store(const std::string& path, nlohmann::json body, const std::string& verb) {
    body["metadata"]["resourceVersion"] = std::to_string(++rv_);
    objects_[path] = body;
    writes_.push_back(verb + " " + path);
    cv_.notify_all();
    return Ok(body);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, nlohmann::json> objects_;
  int rv_ = 0;
  int conflicts_ = 0;
};

nlohmann::json Configuration(const char* kind, const char* name) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", name}}},
          {"webhooks",
           {{{"name", "x.modelops.dev"},
             {"clientConfig", {{"service", {{"name", "wh"}, {"namespace", "ops"}}}, {"caBundle", ""}}}}}}};
}

std::string CaBundle(const nlohmann::json& config) {
  return *text::Base64Decode(config["webhooks"][0]["clientConfig"]["caBundle"].get<std::string>());
}
std::string Data(const nlohmann::json& secret, const char* key) {
  return *text::Base64Decode(secret["data"][key].get<std::string>());
}

double Sample(metrics::Registry& registry, const std::string& name, const std::string& label = "") {
  for (const auto& family : registry.families().Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      if (!label.empty() && (m.label.empty() || m.label[0].value != label)) continue;
      return family.type == prometheus::MetricType::Gauge ? m.gauge.value : m.counter.value;
    }
  }
  return -1;
}

class ManagerTest : public ::testing::Test {
 protected:
  ManagerTest() {
    settings.secret_namespace = "ops";
    settings.secret_name = "wh-tls";
    settings.service_name = "wh";
    settings.validating_configuration = "v";
    settings.mutating_configuration = "m";
    settings.ca_validity = 6min;
    settings.serving_validity = 2min;
    api.Put(kValidating, Configuration("ValidatingWebhookConfiguration", "v"));
    api.Put(kMutating, Configuration("MutatingWebhookConfiguration", "m"));
  }
  Manager& Make() {
    manager = std::make_unique<Manager>(api, clock, settings, metrics, nullptr);
    return *manager;
  }
  // The served certificate verifies against both configurations' caBundle.
  void ExpectConsistent() {
    const auto secret = api.Object(kSecret);
    ASSERT_TRUE(secret);
    const std::string bundle = Data(*secret, "ca.crt");
    EXPECT_EQ(CaBundle(*api.Object(kValidating)), bundle);
    EXPECT_EQ(CaBundle(*api.Object(kMutating)), bundle);
    bool signed_by_one = false;
    for (const auto& ca : ms::certs::ParseCertificates(bundle))
      signed_by_one = signed_by_one || ms::certs::IsSignedBy(Data(*secret, "tls.crt"), ca.pem);
    EXPECT_TRUE(signed_by_one);
    EXPECT_TRUE(ms::certs::KeyMatches(Data(*secret, "tls.crt"), Data(*secret, "tls.key")));
  }

  FakeApi api;
  FakeClock clock;
  metrics::Registry registry;
  CertificateMetrics metrics{registry};
  Settings settings;
  std::unique_ptr<Manager> manager;
};

TEST_F(ManagerTest, TheFirstPassCreatesTheSecretAndInjectsTheCa) {
  Manager& m = Make();
  const clock::Clock::Duration next = m.SyncOnce();
  EXPECT_EQ(api.Writes(),
            (std::vector<std::string>{"create /api/v1/namespaces/ops/secrets/wh-tls",
                                      std::string("update ") + kValidating, std::string("update ") + kMutating}));
  ExpectConsistent();
  const auto secret = *api.Object(kSecret);
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  const auto serving = ms::certs::ParseCertificate(Data(secret, "tls.crt"));
  ASSERT_TRUE(serving);
  EXPECT_EQ(serving->dns_names, (std::vector<std::string>{"wh", "wh.ops", "wh.ops.svc", "wh.ops.svc.cluster.local"}));
  EXPECT_EQ(serving->subject, "CN=wh.ops.svc");
  // The next pass is due at 2/3 of the serving certificate's 132 s (12 s backdated).
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(next), 76s);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_certificates_issued_total", "ca"), 1);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_certificates_issued_total", "serving"), 1);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_ca_bundle_injections_total", "v"), 1);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_secret_certificate_expiration_timestamp_seconds", "serving"),
            std::chrono::duration_cast<std::chrono::seconds>(serving->not_after.time_since_epoch()).count());
  // Nothing changed: nothing written.
  m.SyncOnce();
  EXPECT_EQ(api.Writes().size(), 3u);
}

TEST_F(ManagerTest, ABlankedCaBundleIsRepairedAndADeletedSecretMadeAgain) {
  Manager& m = Make();
  m.SyncOnce();
  const std::string first_bundle = Data(*api.Object(kSecret), "ca.crt");
  auto blank = *api.Object(kMutating);
  blank["webhooks"][0]["clientConfig"]["caBundle"] = "";
  api.Put(kMutating, blank);
  m.SyncOnce();
  EXPECT_EQ(api.Writes().back(), std::string("update ") + kMutating);
  EXPECT_EQ(api.Writes().size(), 4u);
  EXPECT_EQ(CaBundle(*api.Object(kMutating)), first_bundle);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_ca_bundle_injections_total", "m"), 2);

  api.Delete(kSecret);
  m.SyncOnce();
  ExpectConsistent();
  // A new CA, and the old one still trusted meanwhile.
  const auto bundle = ms::certs::ParseCertificates(Data(*api.Object(kSecret), "ca.crt"));
  ASSERT_EQ(bundle.size(), 2u);
  EXPECT_EQ(bundle[0].pem, first_bundle);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_certificates_issued_total", "ca"), 2);
}

TEST_F(ManagerTest, AConflictIsRetriedWithBackoff) {
  Manager& m = Make();
  m.SyncOnce();
  auto blank = *api.Object(kValidating);
  blank["webhooks"][0]["clientConfig"]["caBundle"] = "";
  api.Put(kValidating, blank);
  api.ConflictNext(1);
  const clock::Clock::Duration retry = m.SyncOnce();
  EXPECT_GT(retry, 0s);
  EXPECT_LE(retry, 1s);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_certificate_sync_errors_total"), 1);
  m.SyncOnce();
  ExpectConsistent();
}

// Ten virtual minutes (CA 6 min, serving 2 min), pass after pass as the loop
// runs them: after every pass the served certificate verifies against both
// configurations, the serving certificate was renewed and the CA rotated.
TEST_F(ManagerTest, RotatesInVirtualTime) {
  Manager& m = Make();
  const WallTime start = clock.WallNow();
  std::set<std::string> servings, cas;
  while (clock.WallNow() < start + 10min) {
    const clock::Clock::Duration next = m.SyncOnce();
    ExpectConsistent();
    const auto secret = *api.Object(kSecret);
    servings.insert(Data(secret, "tls.crt"));
    cas.insert(Data(secret, "ca-current.crt"));
    clock.Advance(std::max<clock::Clock::Duration>(next, 100ms));
  }
  EXPECT_GE(servings.size(), 7u);
  EXPECT_GE(cas.size(), 2u);
  EXPECT_EQ(Sample(registry, "modelservice_webhook_certificate_sync_errors_total"), 0);
}

TEST_F(ManagerTest, OnlyTheLeaderWrites) {
  Manager& m = Make();
  m.Start();
  ASSERT_TRUE(api.WaitFor([&] { return api.lists_ >= 3; }));  // the Secret's and both configurations' watches
  clock.Advance(2h);                                          // past any wait of the loop
  EXPECT_TRUE(api.Writes().empty());
  m.Lead();
  ASSERT_TRUE(api.WaitFor([&] { return api.writes_.size() >= 3; }));
  m.Stop();
  ExpectConsistent();
}

}  // namespace
}  // namespace ms::webhookcerts
