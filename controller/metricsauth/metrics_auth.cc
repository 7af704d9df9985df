#include "controller/metricsauth/metrics_auth.h"

#include <openssl/evp.h>

#include <cctype>
#include <iterator>
#include <string_view>

namespace ms::metricsauth {

namespace {

using transport::GateDecision;
using json = nlohmann::json;

GateDecision Unavailable(const std::string& why) { return {503, "cannot review the token: " + why}; }

// The body of a TokenReview for `token`.
json TokenReview(const std::string& token) {
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
}

// The body of a SubjectAccessReview of `get /metrics` for the user a
// TokenReview's status names.
json AccessReview(const json& user) {
  json spec = {{"nonResourceAttributes", {{"path", kMetricsPath}, {"verb", kMetricsVerb}}}};
  spec["user"] = user.value("username", "");
  if (user.contains("uid") && user["uid"].is_string()) spec["uid"] = user["uid"];
  if (user.contains("groups") && user["groups"].is_array()) spec["groups"] = user["groups"];
  if (user.contains("extra") && user["extra"].is_object()) spec["extra"] = user["extra"];
  return {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
}

const json& StatusOf(const kube::Result& r) {
  static const json kEmpty = json::object();
  if (!r.body.is_object() || !r.body.contains("status") || !r.body["status"].is_object()) return kEmpty;
  return r.body["status"];
}

bool IsTrue(const json& status, const char* field) {
  return status.contains(field) && status[field].is_boolean() && status[field].get<bool>();
}

}  // namespace

std::string TokenDigest(const std::string& token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(token.data(), token.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string BearerToken(const std::string* authorization) {
  if (authorization == nullptr) return {};
  std::string_view v = *authorization;
  constexpr std::string_view kScheme = "bearer ";
  if (v.size() <= kScheme.size()) return {};
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(v[i])) != kScheme[i]) return {};
  v.remove_prefix(kScheme.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  for (char c : v)
    if (c == ' ' || c == '\t') return {};
  return std::string(v);
}

MetricsAuthorizer::MetricsAuthorizer(kube::Client& client, const clock::Clock& clock, MetricsAuthOptions options,
                                     std::shared_ptr<spdlog::logger> logger)
    : client_(client),
      clock_(clock),
      options_(options),
      logger_(std::move(logger)),
      bucket_(options.reviews_per_second, options.review_burst, clock.Now()) {}

GateDecision MetricsAuthorizer::Check(const transport::Request& request) {
  return CheckToken(BearerToken(request.Header("authorization")));
}

GateDecision MetricsAuthorizer::CheckToken(const std::string& token) {
  if (token.empty()) return {401, "Unauthorized: a bearer token is required"};
  const std::string key = TokenDigest(token);
  if (key.empty()) return Unavailable("no SHA-256");
  if (auto cached = Lookup(key)) return *cached;
  if (auto refused = Admit()) return *refused;
  bool cacheable = false;
  GateDecision d;
  try {
    d = Review(token, &cacheable);
  } catch (const std::exception& e) {  // an answer that is not what the API promises
    if (logger_) logger_->warn("/metrics: a review's answer: {}", e.what());
    d = Unavailable("an unexpected answer");
  }
  Release();
  if (cacheable) Remember(key, d);
  return d;
}

size_t MetricsAuthorizer::cached() const {
  std::lock_guard<std::mutex> g(mu_);
  return cache_.size();
}

std::optional<GateDecision> MetricsAuthorizer::Lookup(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end() || clock_.Now() >= it->second.expires) return std::nullopt;
  return it->second.decision;
}

void MetricsAuthorizer::Remember(const std::string& key, const GateDecision& decision) {
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = cache_.find(key); it != cache_.end()) {
    order_.erase(it->second.order);
    cache_.erase(it);
  }
  while (!order_.empty() && cache_.size() >= options_.max_entries) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  if (options_.max_entries == 0) return;
  const clock::Clock::Duration ttl = decision.status == 200 ? options_.allowed_ttl : options_.denied_ttl;
  order_.push_back(key);
  cache_.emplace(key, Entry{decision, clock_.Now() + ttl, std::prev(order_.end())});
}

std::optional<GateDecision> MetricsAuthorizer::Admit() {
  std::lock_guard<std::mutex> g(mu_);
  if (in_flight_ >= options_.max_in_flight) return GateDecision{503, "too many token reviews in flight; retry"};
  if (!bucket_.TryAccept(clock_.Now())) return GateDecision{429, "too many token reviews; retry later"};
  ++in_flight_;
  return std::nullopt;
}

void MetricsAuthorizer::Release() {
  std::lock_guard<std::mutex> g(mu_);
  --in_flight_;
}

GateDecision MetricsAuthorizer::Review(const std::string& token, bool* cacheable) {
  const kube::Deadline deadline = clock_.Now() + options_.review_timeout;
  const kube::Result tr = client_.Create(kTokenReviewsPath, TokenReview(token), deadline);
  if (!tr.ok()) {
    if (logger_) logger_->warn("/metrics: TokenReview failed: {}", tr.Text());
    return Unavailable("the TokenReview failed");
  }
  const json& who = StatusOf(tr);
  if (!IsTrue(who, "authenticated")) {
    *cacheable = true;
    return {401, "Unauthorized: the token is not authenticated"};
  }
  static const json kNoUser = json::object();
  const json& user = who.contains("user") && who["user"].is_object() ? who["user"] : kNoUser;
  const kube::Result sar = client_.Create(kSubjectAccessReviewsPath, AccessReview(user), deadline);
  if (!sar.ok()) {
    if (logger_) logger_->warn("/metrics: SubjectAccessReview failed: {}", sar.Text());
    return Unavailable("the SubjectAccessReview failed");
  }
  *cacheable = true;
  const json& verdict = StatusOf(sar);
  const std::string name = user.value("username", "");
  if (IsTrue(verdict, "allowed") && !IsTrue(verdict, "denied")) return {200, ""};
  if (logger_) logger_->debug("/metrics: {} may not get /metrics", name);
  return {403, "Forbidden: user \"" + name + "\" may not get /metrics"};
}

}  // namespace ms::metricsauth
