// The bearer token for API requests, re-read from its file (service account
// token rotation): at most once per refresh period, or at once after a 401,
// as client-go's cached file token source. A read that fails or finds the
// file empty keeps the last token (the file may be mid-rotation). The
// Prometheus client reads its token, password and secret header values
// through it too (controller/autoscale/prometheus_credentials.h).
#pragma once

#include <mutex>
#include <string>

#include "shared/clock/clock.h"

namespace ms::kube {

class TokenSource {
 public:
  // `file` empty: the static token is used as is.
  TokenSource(std::string token, std::string file, const clock::Clock& clock,
              clock::Clock::Duration refresh = std::chrono::minutes(1));

  // The current token (re-read from the file when the refresh period has passed).
  std::string Token();
  // Forces a re-read now (after a 401). Returns true when the token changed.
  bool Refresh();
  bool has_file() const { return !file_.empty(); }

 private:
  bool ReadLocked();  // true when the token changed

  const std::string file_;
  const clock::Clock& clock_;
  const clock::Clock::Duration refresh_;
  std::mutex mu_;
  std::string token_;
  clock::Clock::TimePoint last_read_;
};

}  // namespace ms::kube
