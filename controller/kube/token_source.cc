#include "controller/kube/token_source.h"

#include <stdexcept>

#include "shared/process/files.h"
#include "shared/text/strings.h"

namespace ms::kube {

TokenSource::TokenSource(std::string token, std::string file, const clock::Clock& clock, clock::Clock::Duration refresh)
    : file_(std::move(file)), clock_(clock), refresh_(refresh), token_(std::move(token)), last_read_(clock.Now()) {
  if (token_.empty() && !file_.empty()) ReadLocked();
}

bool TokenSource::ReadLocked() {
  last_read_ = clock_.Now();
  std::string t;
  try {
    t = text::Trim(process::ReadFile(file_));
  } catch (const std::runtime_error&) {
    return false;  // keep the old token: the file may be mid-rotation
  }
  if (t.empty() || t == token_) return false;
  token_ = std::move(t);
  return true;
}

std::string TokenSource::Token() {
  std::lock_guard<std::mutex> g(mu_);
  if (!file_.empty() && clock_.Now() - last_read_ >= refresh_) ReadLocked();
  return token_;
}

bool TokenSource::Refresh() {
  if (file_.empty()) return false;
  std::lock_guard<std::mutex> g(mu_);
  return ReadLocked();
}

}  // namespace ms::kube
