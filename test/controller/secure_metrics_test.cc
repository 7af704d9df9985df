// --metrics-secure end to end within the process: SecureMetricsSetup (the
// self-signed certificate, the TLS context, the reviews through a real API
// client) behind SideEndpoints, a local HTTP server playing the API
// server's TokenReviews and SubjectAccessReviews, scraped with libcurl.
#include "controller/secure_metrics.h"

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include <atomic>
#include <memory>
#include <string>

#include "controller/kube/curl_handles.h"
#include "shared/metrics/metrics.h"
#include "test/support/http_test_server.h"

namespace ms::controller {
namespace {

const kube::curl::GlobalInit kCurl;

size_t Collect(char* p, size_t s, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, s * n);
  return s * n;
}

// The status of a GET of `url` (0: no HTTP answer), without verifying the
// server's certificate, with `authorization` when set.
long Get(const std::string& url, const std::string& authorization, std::string* body) {
  CURL* h = curl_easy_init();
  curl_slist* headers = authorization.empty() ? nullptr : curl_slist_append(nullptr, authorization.c_str());
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  if (headers != nullptr) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return status;
}

TEST(SecureMetrics, HttpsForAllowedTokensOnlyWithReviewsThroughTheApiClient) {
  test::HttpTestServer api;
  std::atomic<int> reviews{0};
  api.server.Post(metricsauth::kTokenReviewsPath, [&](const httplib::Request& req, httplib::Response& res) {
    ++reviews;
    const auto token = nlohmann::json::parse(req.body).at("spec").at("token").get<std::string>();
    nlohmann::json status = {{"authenticated", token == "reader" || token == "stranger"}};
    if (status["authenticated"]) status["user"] = {{"username", token}};
    res.set_content(nlohmann::json{{"status", status}}.dump(), "application/json");
  });
  api.server.Post(metricsauth::kSubjectAccessReviewsPath, [&](const httplib::Request& req, httplib::Response& res) {
    ++reviews;
    const auto spec = nlohmann::json::parse(req.body).at("spec");
    const bool allowed = spec.at("user") == "reader" && spec.at("nonResourceAttributes").at("path") == "/metrics";
    res.set_content(nlohmann::json{{"status", {{"allowed", allowed}}}}.dump(), "application/json");
  });
  api.Start();

  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  kube::RestConfig rest;
  rest.server = api.url();
  const clock::SystemClock clock;
  metrics::Registry registry;
  kube::ClientMetrics client_metrics(registry);
  SecureMetricsSetup secure(rest, clock, client_metrics, logger);
  transport::SideEndpoints side(logger);
  std::string error;
  ASSERT_TRUE(side.Start(
      {"127.0.0.1", 0}, {"127.0.0.1", -1}, registry, [] { return true; }, [](std::string*) { return true; }, &error,
      secure.Secure()))
      << error;
  const std::string url = "https://127.0.0.1:" + std::to_string(side.metrics_port()) + "/metrics";

  std::string body;
  EXPECT_EQ(Get(url, "", &body), 401);
  EXPECT_EQ(reviews.load(), 0);
  EXPECT_EQ(Get(url, "Authorization: Bearer forged", &body), 401);
  EXPECT_EQ(Get(url, "Authorization: Bearer stranger", &body), 403);
  body.clear();
  EXPECT_EQ(Get(url, "Authorization: Bearer reader", &body), 200);
  // The reviews went through the API client (its requests counted).
  EXPECT_NE(body.find("rest_client_requests_total{code=\"200\""), std::string::npos) << body;
  EXPECT_EQ(reviews.load(), 5);  // 1 + 2 + 2
  EXPECT_EQ(Get(url, "Authorization: Bearer reader", &body), 200);
  EXPECT_EQ(reviews.load(), 5);  // cached
  // Plain HTTP on the HTTPS port is refused.
  EXPECT_EQ(Get("http://127.0.0.1:" + std::to_string(side.metrics_port()) + "/metrics", "", &body), 400);
  side.Stop();
  api.Stop();
}

}  // namespace
}  // namespace ms::controller
