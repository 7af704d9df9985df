// The credentials of each request to Prometheus (the Authorization header
// and the extra headers of PrometheusAuth), read from their files as they
// rotate: projected ServiceAccount tokens and Secret volumes change under a
// running process. Each file is read through a kube::TokenSource, as the API
// client's token is: client-go's cached file token source (the file is read
// again at most once a minute, and at once after a 401; a read that fails or
// finds the file empty keeps the last value, since a file may be
// mid-rotation). Values are trimmed of white space and line ends.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "controller/autoscale/prometheus_auth.h"
#include "controller/kube/token_source.h"
#include "shared/clock/clock.h"

namespace ms::autoscale {

// What one request sends.
struct RequestCredentials {
  std::vector<std::string> header_lines;  // "Name: value", the Authorization header first
  std::vector<std::string> secrets;       // the secret values sent, which no text may show
  std::string error;                      // non-empty: a header file's value cannot be sent (why, without it)
};

// Thread-safe. `auth` must pass CheckPrometheusAuth.
class PrometheusCredentials {
 public:
  PrometheusCredentials(const PrometheusAuth& auth, const clock::Clock& clock,
                        clock::Clock::Duration refresh = std::chrono::minutes(1));

  RequestCredentials Current();
  // After a 401: every file is read again now. True when a value changed.
  bool Refresh();
  // Whether any value comes from a file (a 401 may then be a rotation).
  bool has_files() const { return !sources_.empty(); }

 private:
  struct FileHeader {
    std::string name;
    kube::TokenSource* source;
  };
  std::vector<std::unique_ptr<kube::TokenSource>> sources_;  // every file, each once
  kube::TokenSource* token_ = nullptr;
  kube::TokenSource* password_ = nullptr;
  std::string username_;
  std::vector<HeaderSetting> headers_;
  std::vector<FileHeader> file_headers_;
};

// `text` with every (non-empty) secret in it replaced by "[redacted]".
std::string Redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace ms::autoscale
