#include "shared/certs/cert_watcher.h"

#include <algorithm>
#include <utility>

#include "shared/process/files.h"

namespace ms::certs {

namespace {

double UnixSeconds(WallTime t) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace

CertWatcher::CertWatcher(std::string cert_file, std::string key_file, CertWatcherMetrics& metrics,
                         std::shared_ptr<spdlog::logger> logger, const clock::Clock& clock, std::string client_ca_file)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      client_ca_file_(std::move(client_ca_file)),
      logger_(std::move(logger)),
      clock_(clock),
      metrics_(metrics) {}

CertWatcher::~CertWatcher() { Stop(); }

const std::optional<Certificate>& CertWatcher::CheckedPair(std::string cert_pem, std::string key_pem) {
  if (checked_pem_ && checked_pem_->first == cert_pem && checked_pem_->second == key_pem) return checked_;
  try {
    checked_ = CheckPair(cert_pem, key_pem);
    checked_error_.clear();
  } catch (const std::exception& e) {
    checked_.reset();
    checked_error_ = e.what();
  }
  checked_pem_.emplace(std::move(cert_pem), std::move(key_pem));
  return checked_;
}

bool CertWatcher::ReadOnce() {
  metrics_.reads.Increment();
  std::string error;
  const Certificate* cert = nullptr;
  try {
    const std::optional<Certificate>& checked =
        CheckedPair(process::ReadFile(cert_file_), process::ReadFile(key_file_));
    if (checked) cert = &*checked;
    error = checked_error_;
  } catch (const std::exception& e) {  // a file missing or unreadable
    error = e.what();
  }
  if (!cert) {
    metrics_.read_errors.Increment();
    // The reloader warns about a bad pair too; here only each new error.
    if (logger_ && last_error_ != error) logger_->debug("certwatcher: {}: {}", cert_file_, error);
    last_error_ = error;
    return false;
  }
  last_error_.clear();
  metrics_.expiration.Add({{"certificate", "serving"}}).Set(UnixSeconds(cert->not_after));
  Warn("serving certificate", *cert);
  if (!client_ca_file_.empty()) ReadClientCa();
  return true;
}

void CertWatcher::ReadClientCa() {
  std::vector<Certificate> cas;
  try {
    cas = ParseCertificates(process::ReadFile(client_ca_file_));
  } catch (const std::exception& e) {
    if (logger_) logger_->debug("certwatcher: {}: {}", client_ca_file_, e.what());
    return;
  }
  if (cas.empty()) return;
  const auto last = std::max_element(
      cas.begin(), cas.end(), [](const Certificate& a, const Certificate& b) { return a.not_after < b.not_after; });
  metrics_.expiration.Add({{"certificate", "client-ca"}}).Set(UnixSeconds(last->not_after));
  Warn("client CA (--client-ca)", *last);
}

void CertWatcher::Warn(std::string_view what, const Certificate& cert) {
  auto w = warnings_.Check(what, cert, clock_.WallNow());
  if (!w || !logger_) return;
  if (w->expired) {
    logger_->error("{}", w->message);
  } else {
    logger_->warn("{}", w->message);
  }
}

void CertWatcher::Start(std::chrono::milliseconds interval) {
  ReadOnce();
  const clock::Clock::TimePoint first = clock_.Now() + interval;
  thread_ = std::thread([this, interval, first] {
    std::unique_lock<std::mutex> lock(mu_);
    auto next = first;
    while (!stop_) {
      clock_.WaitUntil(cv_, lock, next);
      if (stop_) break;
      if (clock_.Now() < next) continue;  // woken early
      next = clock_.Now() + interval;
      lock.unlock();
      ReadOnce();
      lock.lock();
    }
  });
}

void CertWatcher::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ms::certs
