// The /metrics gate of --metrics-secure (metrics_auth.h): a fake API server
// answers the TokenReviews and SubjectAccessReviews and counts them; time
// is a FakeClock.
#include "controller/metricsauth/metrics_auth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test/support/fake_clock.h"
#include "test/support/gate.h"
#include "test/support/verb_client.h"

namespace ms::metricsauth {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// Tokens it knows authenticate as their user; users in `allowed` may get
// /metrics. `fail_with` non-zero: every review is answered with that code.
class FakeReviews final : public test::VerbClient {
 public:
  std::map<std::string, json> users;  // token -> TokenReview status.user
  std::set<std::string> allowed;      // usernames
  int fail_with = 0;
  test::Gate hold{true};

  int calls() {
    std::lock_guard<std::mutex> g(mu_);
    return static_cast<int>(paths_.size());
  }
  int calls_to(const std::string& path) {
    std::lock_guard<std::mutex> g(mu_);
    return static_cast<int>(std::count(paths_.begin(), paths_.end(), path));
  }
  json last_access_review() {
    std::lock_guard<std::mutex> g(mu_);
    return last_sar_;
  }
  kube::Deadline last_deadline() {
    std::lock_guard<std::mutex> g(mu_);
    return last_deadline_;
  }

 protected:
  kube::Result OnCreate(const std::string& path, const json& body, kube::Deadline deadline) override {
    hold.Pass();
    {
      std::lock_guard<std::mutex> g(mu_);
      paths_.push_back(path);
      last_deadline_ = deadline;
      if (path == kSubjectAccessReviewsPath) last_sar_ = body;
    }
    if (fail_with != 0) return {fail_with, json(), kube::Status{fail_with, "Forbidden", "no RBAC for reviews"}};
    json status;
    if (path == kTokenReviewsPath) {
      auto it = users.find(body.at("spec").at("token").get<std::string>());
      status = it == users.end() ? json{{"authenticated", false}} : json{{"authenticated", true}, {"user", it->second}};
    } else if (path == kSubjectAccessReviewsPath) {
      status = {{"allowed", allowed.count(body.at("spec").at("user").get<std::string>()) > 0}};
    } else {
      return NotAllowed();
    }
    return {201, json{{"status", status}}, std::nullopt};
  }

 private:
  std::mutex mu_;
  std::vector<std::string> paths_;
  json last_sar_;
  kube::Deadline last_deadline_;
};

constexpr const char* kProm = "system:serviceaccount:monitoring:prometheus";
constexpr const char* kOther = "system:serviceaccount:default:other";

class MetricsAuthTest : public ::testing::Test {
 protected:
  MetricsAuthTest() {
    api_.users["prom-token"] = {{"username", kProm},
                                {"uid", "u-1"},
                                {"groups", {"system:serviceaccounts", "system:authenticated"}},
                                {"extra", {{"authentication.kubernetes.io/pod-name", {"prom-0"}}}}};
    api_.users["other-token"] = {{"username", kOther}, {"groups", {"system:authenticated"}}};
    api_.allowed.insert(kProm);
  }
  static transport::Request Scrape(const std::string& authorization) {
    transport::Request r;
    r.method = "GET";
    r.path = r.target = "/metrics";
    if (!authorization.empty()) r.headers.emplace_back("authorization", authorization);
    return r;
  }

  FakeClock clock_;
  FakeReviews api_;
};

TEST_F(MetricsAuthTest, WithoutABearerTokenIs401AndAsksNothing) {
  MetricsAuthorizer auth(api_, clock_);
  EXPECT_EQ(auth.Check(Scrape("")).status, 401);
  EXPECT_EQ(auth.Check(Scrape("Basic cHJvbTpwdw==")).status, 401);
  EXPECT_EQ(auth.Check(Scrape("Bearer ")).status, 401);
  EXPECT_EQ(api_.calls(), 0);
  EXPECT_EQ(auth.Check(Scrape("bearer prom-token")).status, 200);  // the scheme is case-insensitive
}

TEST_F(MetricsAuthTest, AnUnauthenticatedTokenIs401WithoutAnAccessReview) {
  MetricsAuthorizer auth(api_, clock_);
  const transport::GateDecision d = auth.Check(Scrape("Bearer forged"));
  EXPECT_EQ(d.status, 401) << d.reason;
  EXPECT_EQ(api_.calls_to(kTokenReviewsPath), 1);
  EXPECT_EQ(api_.calls_to(kSubjectAccessReviewsPath), 0);
}

TEST_F(MetricsAuthTest, AUserNotAllowedIs403) {
  MetricsAuthorizer auth(api_, clock_);
  const transport::GateDecision d = auth.Check(Scrape("Bearer other-token"));
  EXPECT_EQ(d.status, 403) << d.reason;
  EXPECT_NE(d.reason.find(kOther), std::string::npos) << d.reason;
  EXPECT_EQ(api_.calls_to(kSubjectAccessReviewsPath), 1);
}

TEST_F(MetricsAuthTest, AnAllowedUserIs200AndTheAccessReviewAsksForGetMetricsAsThatUser) {
  MetricsAuthorizer auth(api_, clock_);
  EXPECT_EQ(auth.Check(Scrape("Bearer prom-token")).status, 200);
  const json spec = api_.last_access_review().at("spec");
  EXPECT_EQ(spec.at("nonResourceAttributes"), (json{{"path", "/metrics"}, {"verb", "get"}}));
  EXPECT_EQ(spec.at("user"), kProm);
  EXPECT_EQ(spec.at("uid"), "u-1");
  EXPECT_EQ(spec.at("groups"), (json{"system:serviceaccounts", "system:authenticated"}));
  EXPECT_EQ(spec.at("extra"), (json{{"authentication.kubernetes.io/pod-name", {"prom-0"}}}));
  // Both reviews together have the review timeout at most.
  EXPECT_EQ(api_.last_deadline(), clock_.Now() + 2s);
}

TEST_F(MetricsAuthTest, ASecondScrapeIsAnsweredFromTheCache) {
  MetricsAuthorizer auth(api_, clock_);
  ASSERT_EQ(auth.Check(Scrape("Bearer prom-token")).status, 200);
  ASSERT_EQ(auth.Check(Scrape("Bearer other-token")).status, 403);
  ASSERT_EQ(auth.Check(Scrape("Bearer forged")).status, 401);
  const int calls = api_.calls();
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(auth.Check(Scrape("Bearer prom-token")).status, 200);
  EXPECT_EQ(auth.Check(Scrape("Bearer other-token")).status, 403);
  EXPECT_EQ(auth.Check(Scrape("Bearer forged")).status, 401);
  EXPECT_EQ(api_.calls(), calls);
}

TEST_F(MetricsAuthTest, TheCacheIsKeyedByTheTokensSha256) {
  // SHA-256("abc"), FIPS 180-2's example.
  const std::string d = TokenDigest("abc");
  ASSERT_EQ(d.size(), 32u);
  EXPECT_EQ(static_cast<unsigned char>(d[0]), 0xba);
  EXPECT_EQ(static_cast<unsigned char>(d[31]), 0xad);
}

TEST_F(MetricsAuthTest, TheCacheHoldsAtMostMaxEntriesAndTheOldestGivesWay) {
  MetricsAuthOptions o;
  o.max_entries = 3;
  o.review_burst = 100;
  MetricsAuthorizer auth(api_, clock_, o);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(auth.CheckToken("forged-" + std::to_string(i)).status, 401);
  EXPECT_EQ(auth.cached(), 3u);
  EXPECT_EQ(api_.calls(), 10);
  auth.CheckToken("forged-9");  // among the newest three: cached
  EXPECT_EQ(api_.calls(), 10);
  auth.CheckToken("forged-0");  // evicted: asked again
  EXPECT_EQ(api_.calls(), 11);
  EXPECT_EQ(auth.cached(), 3u);
}

TEST_F(MetricsAuthTest, AnswersExpireAfterTheirTtlOnTheClock) {
  MetricsAuthorizer auth(api_, clock_);
  ASSERT_EQ(auth.CheckToken("prom-token").status, 200);   // 2 calls, kept 1 min
  ASSERT_EQ(auth.CheckToken("other-token").status, 403);  // 2 calls, kept 10 s
  ASSERT_EQ(api_.calls(), 4);
  clock_.Advance(9s);
  auth.CheckToken("prom-token");
  auth.CheckToken("other-token");
  EXPECT_EQ(api_.calls(), 4);
  clock_.Advance(1s);  // the denial is 10 s old
  EXPECT_EQ(auth.CheckToken("other-token").status, 403);
  EXPECT_EQ(api_.calls(), 6);
  auth.CheckToken("prom-token");
  EXPECT_EQ(api_.calls(), 6);
  clock_.Advance(50s);  // the allowance is 1 min old
  EXPECT_EQ(auth.CheckToken("prom-token").status, 200);
  EXPECT_EQ(api_.calls(), 8);
}

TEST_F(MetricsAuthTest, FailuresOfTheApiServerAre503AndNotCached) {
  api_.fail_with = 403;  // say, no RBAC to create tokenreviews
  MetricsAuthorizer auth(api_, clock_);
  const transport::GateDecision d = auth.CheckToken("prom-token");
  EXPECT_EQ(d.status, 503) << d.reason;
  EXPECT_NE(d.reason.find("TokenReview"), std::string::npos) << d.reason;
  api_.fail_with = 0;
  EXPECT_EQ(auth.CheckToken("prom-token").status, 200);
  EXPECT_EQ(api_.calls(), 3);
}

TEST_F(MetricsAuthTest, ReviewsOfNewTokensAreRateLimitedWith429) {
  MetricsAuthOptions o;
  o.reviews_per_second = 1;
  o.review_burst = 2;
  MetricsAuthorizer auth(api_, clock_, o);
  EXPECT_EQ(auth.CheckToken("forged-1").status, 401);
  EXPECT_EQ(auth.CheckToken("forged-2").status, 401);
  for (int i = 3; i < 50; ++i) EXPECT_EQ(auth.CheckToken("forged-" + std::to_string(i)).status, 429);
  EXPECT_EQ(api_.calls(), 2);
  EXPECT_EQ(auth.CheckToken("forged-1").status, 401);  // cached answers are not limited
  clock_.Advance(1s);
  EXPECT_EQ(auth.CheckToken("prom-token").status, 200);
  EXPECT_EQ(api_.calls(), 4);
}

TEST_F(MetricsAuthTest, ReviewsInFlightAreBoundedWith503AndNothingQueues) {
  MetricsAuthOptions o;
  o.max_in_flight = 1;
  MetricsAuthorizer auth(api_, clock_, o);
  api_.hold.Close();
  transport::GateDecision first;
  std::thread scrape([&] { first = auth.CheckToken("prom-token"); });
  ASSERT_TRUE(api_.hold.AwaitHeld(1));
  EXPECT_EQ(auth.CheckToken("other-token").status, 503);  // at once, while the first is held
  api_.hold.Open();
  scrape.join();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(auth.CheckToken("other-token").status, 403);  // the slot is free again
}

}  // namespace
}  // namespace ms::metricsauth
