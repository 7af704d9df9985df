// The rotation schedule and the bundle overlap in virtual time: the decision
// (decide.h) driven pass after pass on a FakeClock, against a simulated
// cluster whose API servers load the webhook configurations `api_lag` after
// they are written and whose webhook replicas load the Secret `kubelet_lag`
// after (the kubelet's Secret volume sync). At every moment something
// changes, the certificate being served must be valid and signed by a valid
// CA in the bundle the API server trusts: that is "no admission request
// fails across a rotation".
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "controller/webhookcerts/decide.h"
#include "test/controller/webhookcerts/fake_issuer.h"
#include "test/support/fake_clock.h"

namespace ms::webhookcerts {
namespace {

using namespace std::chrono_literals;
using testing::Configs;
using testing::FakeIssuer;

Policy TestPolicy(Duration ca, Duration serving) {
  Settings s;
  s.secret_namespace = "modelservice-system";
  s.ca_validity = std::chrono::duration_cast<std::chrono::milliseconds>(ca);
  s.serving_validity = std::chrono::duration_cast<std::chrono::milliseconds>(serving);
  return MakePolicy(s);
}

// The controller's passes over a simulated Secret and two configurations.
class Cluster {
 public:
  Cluster(Policy policy, FakeClock& clock) : configs_(Configs()), policy_(std::move(policy)), clock_(clock) {}

  // One pass at the clock's time; what it decided is written at once
  // (configurations only while `inject` is on).
  Decision Pass() {
    const WallTime now = clock_.WallNow();
    Decision d = Decide(Observed{secret_, configs_}, now, policy_, issuer_);
    EXPECT_GT(d.next_check, now);
    if (d.write_secret) {
      secret_ = d.secret;
      if (servings_.empty() || servings_.back().second.cert.fingerprint != d.secret.serving->cert.fingerprint)
        servings_.emplace_back(now, *d.secret.serving);
    }
    for (const auto& c : d.bundle) certs_[c.fingerprint] = c;
    if (!d.configs_to_fix.empty() && inject) {
      for (size_t i : d.configs_to_fix) {
        configs_[i].webhook_bundles = {Fingerprints(d.bundle)};
        configs_[i].cas = d.bundle;
      }
      bundles_.emplace_back(now, Fingerprints(d.bundle));
    }
    return d;
  }

  // Passes until `end`: when something falls due, and 0.1 s after a pass
  // that wrote a configuration (its watch event).
  void RunUntil(WallTime end) {
    while (clock_.WallNow() < end) {
      const Decision d = Pass();
      const bool wrote_config = inject && !d.configs_to_fix.empty();
      const WallTime next = std::min(wrote_config ? clock_.WallNow() + 100ms : d.next_check, end);
      clock_.Advance(next - clock_.WallNow());
    }
  }

  // What fails between `from` and `to` with those lags; empty when nothing.
  std::vector<std::string> Failures(WallTime from, WallTime to, Duration kubelet_lag, Duration api_lag) const {
    std::set<WallTime> checks{from, to};
    for (const auto& [t, _] : servings_) checks.insert(t + kubelet_lag);
    for (const auto& [t, _] : bundles_) checks.insert(t + api_lag);
    for (const auto& [t, s] : servings_) checks.insert({s.cert.not_before, s.cert.not_after});
    for (const auto& [_, c] : certs_) checks.insert({c.not_before, c.not_after});
    std::vector<std::string> out;
    for (WallTime b : checks)
      for (WallTime t : {b - 1ms, b})
        if (t >= from && t <= to)
          if (std::string f = FailureAt(t, kubelet_lag, api_lag); !f.empty() && out.size() < 10) out.push_back(f);
    return out;
  }

  // The bundle the configurations carried at `t` (as written), e.g. "ca-1 ca-2".
  std::string BundleAt(WallTime t) const {
    std::string out;
    for (const auto& [at, fps] : bundles_) {
      if (at > t) break;
      out.clear();
      for (const auto& fp : fps) out += (out.empty() ? "" : " ") + fp;
    }
    return out;
  }

  // "+SECONDS fingerprint" per serving certificate issued, from `t0`.
  std::string ServingIssues(WallTime t0) const {
    std::ostringstream os;
    for (const auto& [t, s] : servings_)
      os << "+" << std::chrono::duration_cast<std::chrono::seconds>(t - t0).count() << " " << s.cert.fingerprint << "<-"
         << s.signed_by << " ";
    return os.str();
  }

  bool inject = true;
  FakeIssuer issuer_;
  std::optional<SecretState> secret_;
  std::vector<ConfigState> configs_;

 private:
  std::string FailureAt(WallTime t, Duration kubelet_lag, Duration api_lag) const {
    const CertRecord* served = nullptr;
    for (const auto& [at, s] : servings_)
      if (at + kubelet_lag <= t) served = &s;
    const std::vector<std::string>* trusted = nullptr;
    for (const auto& [at, fps] : bundles_)
      if (at + api_lag <= t) trusted = &fps;
    const std::string when =
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
    if (served == nullptr || trusted == nullptr) return "at " + when + ": nothing served or trusted yet";
    if (t < served->cert.not_before || t >= served->cert.not_after)
      return "at " + when + ": served " + served->cert.fingerprint + " is not valid";
    if (std::find(trusted->begin(), trusted->end(), served->signed_by) == trusted->end())
      return "at " + when + ": served " + served->cert.fingerprint + " is signed by " + served->signed_by +
             ", not in the trusted bundle";
    const Certificate& ca = certs_.at(served->signed_by);
    if (t < ca.not_before || t >= ca.not_after) return "at " + when + ": CA " + ca.fingerprint + " is not valid";
    return {};
  }

  Policy policy_;
  FakeClock& clock_;
  std::vector<std::pair<WallTime, CertRecord>> servings_;               // Secret writes of a new serving certificate
  std::vector<std::pair<WallTime, std::vector<std::string>>> bundles_;  // configuration writes
  std::map<std::string, Certificate> certs_;                            // every CA seen
};

// The whole schedule with the e2e suite's values (CA 6 min, serving 2 min:
// propagation delay 30 s, backdating 36 s and 12 s), second by second.
TEST(CertSchedule, RotationTimesAndTheBundleAtEveryMoment) {
  FakeClock clock;
  const WallTime t0 = clock.WallNow();
  Cluster cluster(TestPolicy(6min, 2min), clock);
  cluster.RunUntil(t0 + 400s);

  // Serving: at once, then at 2/3 of each lifetime (132 s with backdating:
  // 88 s after notBefore); at +228 s also the CA's 2/3 (ca-2 made, not
  // signing); at +259 s ca-2 signs (trusted since +229 s, + 30 s); +335 s is
  // 2/3 of srv-5.
  EXPECT_EQ(cluster.ServingIssues(t0),
            "+0 srv-1<-ca-1 +76 srv-2<-ca-1 +152 srv-3<-ca-1 +228 srv-4<-ca-1 +259 srv-5<-ca-2 +335 srv-6<-ca-2 ");
  // The bundle: ca-1 alone, then both from the moment ca-2 exists until 30 s
  // after ca-2 began to sign, then ca-2 alone.
  const std::pair<int, const char*> expected[] = {{0, "ca-1"},        {227, "ca-1"},      {228, "ca-1 ca-2"},
                                                  {258, "ca-1 ca-2"}, {259, "ca-1 ca-2"}, {288, "ca-1 ca-2"},
                                                  {289, "ca-2"},      {400, "ca-2"}};
  for (const auto& [s, bundle] : expected)
    EXPECT_EQ(cluster.BundleAt(t0 + std::chrono::seconds(s)), bundle) << "+" << s << "s";
  EXPECT_EQ(cluster.issuer_.cas, 2);
  ASSERT_TRUE(cluster.secret_->current);
  EXPECT_EQ(cluster.secret_->current->cert.fingerprint, "ca-2");
  EXPECT_TRUE(cluster.secret_->previous.empty());
  EXPECT_FALSE(cluster.secret_->previous_until);
}

struct SimCase {
  const char* name;
  Duration ca, serving, kubelet_lag, api_lag, run;
  int min_ca_rotations;
};

void PrintTo(const SimCase& c, std::ostream* os) { *os << c.name; }

class NoFailedRequest : public ::testing::TestWithParam<SimCase> {};

TEST_P(NoFailedRequest, AcrossEveryRotation) {
  const SimCase& c = GetParam();
  FakeClock clock;
  const WallTime t0 = clock.WallNow();
  Cluster cluster(TestPolicy(c.ca, c.serving), clock);
  cluster.RunUntil(t0 + c.run);
  // From when the first certificate is loaded everywhere.
  const WallTime from = t0 + std::max(c.kubelet_lag, c.api_lag);
  EXPECT_EQ(cluster.Failures(from, t0 + c.run, c.kubelet_lag, c.api_lag), std::vector<std::string>{});
  EXPECT_GE(cluster.issuer_.cas - 1, c.min_ca_rotations);
  // A serving certificate at least every 2/3 of its validity.
  EXPECT_GE(cluster.issuer_.servings, static_cast<int>(c.run / (c.serving * 2 / 3)));
}

INSTANTIATE_TEST_SUITE_P(Schedules, NoFailedRequest,
                         ::testing::Values(SimCase{"e2e", 6min, 2min, 10s, 1s, 60min, 8},
                                           SimCase{"kubelet_as_slow_as_the_propagation_delay", 6min, 2min, 29s, 29s,
                                                   60min, 8},
                                           SimCase{"api_server_slower_than_the_kubelet", 6min, 2min, 2s, 25s, 60min, 8},
                                           SimCase{"one_hour_ca", 1h, 10min, 90s, 5s, 24h, 20},
                                           SimCase{"defaults", std::chrono::hours(87600), std::chrono::hours(8760),
                                                   120s, 10s, std::chrono::hours(87600 * 3), 3},
                                           SimCase{"month_ca_day_serving", std::chrono::hours(720), 24h, 90s, 5s,
                                                   std::chrono::hours(24 * 120), 5}),
                         [](const ::testing::TestParamInfo<SimCase>& info) { return std::string(info.param.name); });

// The checker can fail: webhook replicas slower than the propagation delay
// (35 s > 30 s) still serve the old CA's certificate when that CA leaves the bundle.
TEST(CertSchedule, AKubeletSlowerThanThePropagationDelayWouldFail) {
  FakeClock clock;
  const WallTime t0 = clock.WallNow();
  Cluster cluster(TestPolicy(6min, 2min), clock);
  cluster.RunUntil(t0 + 30min);
  const auto failures = cluster.Failures(t0 + 35s, t0 + 30min, 35s, 1s);
  ASSERT_FALSE(failures.empty());
  EXPECT_NE(failures.front().find("not in the trusted bundle"), std::string::npos) << failures.front();
  // An API server that loads configurations later than that (35 s) does not
  // trust the new CA yet when it starts to sign.
  const auto api_failures = cluster.Failures(t0 + 35s, t0 + 30min, 2s, 35s);
  ASSERT_FALSE(api_failures.empty());
  EXPECT_NE(api_failures.front().find("not in the trusted bundle"), std::string::npos) << api_failures.front();
}

// Configurations that never take the bundle (their writes fail): ca-next
// never becomes trusted, so it never signs until the current CA expires; the
// serving certificate, capped at the CA's end, is not reissued in a loop.
TEST(CertSchedule, NoReissueLoopWhenTheConfigurationsCannotBeWritten) {
  FakeClock clock;
  const WallTime t0 = clock.WallNow();
  Cluster cluster(TestPolicy(6min, 2min), clock);
  cluster.inject = false;
  int passes = 0;
  while (clock.WallNow() < t0 + 20min) {
    const Decision d = cluster.Pass();
    ++passes;
    clock.Advance(d.next_check - clock.WallNow());
  }
  EXPECT_LT(passes, 150);
  EXPECT_LT(cluster.issuer_.servings, 40);
  ASSERT_TRUE(cluster.secret_->current);
  EXPECT_GT(cluster.secret_->current->cert.not_after, clock.WallNow());  // a CA took over after each expiry
}

}  // namespace
}  // namespace ms::webhookcerts
