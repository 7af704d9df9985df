#include "controller/autoscale/prometheus_credentials.h"

#include <algorithm>

#include "shared/text/base64.h"

namespace ms::autoscale {

PrometheusCredentials::PrometheusCredentials(const PrometheusAuth& auth, const clock::Clock& clock,
                                             clock::Clock::Duration refresh)
    : username_(auth.basic_auth_username) {
  auto source = [&](const std::string& file) {
    sources_.push_back(std::make_unique<kube::TokenSource>("", file, clock, refresh));
    return sources_.back().get();
  };
  if (!auth.bearer_token_file.empty()) token_ = source(auth.bearer_token_file);
  if (!auth.basic_auth_password_file.empty()) password_ = source(auth.basic_auth_password_file);
  for (const std::string& s : auth.headers) {
    HeaderSetting h;
    if (ParseHeaderSetting("prometheus-header", s, false, &h).empty()) headers_.push_back(std::move(h));
  }
  for (const std::string& s : auth.header_files) {
    HeaderSetting h;
    if (ParseHeaderSetting("prometheus-header-file", s, true, &h).empty())
      file_headers_.push_back({h.name, source(h.value)});
  }
}

RequestCredentials PrometheusCredentials::Current() {
  RequestCredentials out;
  if (token_ != nullptr) {
    const std::string token = token_->Token();
    out.header_lines.push_back("Authorization: Bearer " + token);
    out.secrets.push_back(token);
  } else if (password_ != nullptr) {
    const std::string password = password_->Token();
    const std::string basic = text::Base64Encode(username_ + ":" + password);
    out.header_lines.push_back("Authorization: Basic " + basic);
    out.secrets.push_back(password);
    out.secrets.push_back(basic);
  }
  for (const HeaderSetting& h : headers_) out.header_lines.push_back(h.name + ": " + h.value);
  for (const FileHeader& h : file_headers_) {
    std::string value = h.source->Token();
    if (std::string why = CheckHeaderValue(value); !why.empty() && out.error.empty())
      out.error = "--prometheus-header-file " + h.name + ": " + why;
    out.header_lines.push_back(h.name + ": " + value);
    out.secrets.push_back(std::move(value));
  }
  return out;
}

bool PrometheusCredentials::Refresh() {
  bool changed = false;
  for (const auto& s : sources_) changed = s->Refresh() || changed;
  return changed;
}

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  static constexpr std::string_view kMark = "[redacted]";
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + kMark.size()))
      text.replace(at, secret.size(), kMark);
  }
  return text;
}

}  // namespace ms::autoscale
