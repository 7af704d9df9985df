#include "certs/cert_watcher.h"

#include <utility>

#include "base/files.h"

namespace ms::certs {

CertWatcher::CertWatcher(std::string cert_file, std::string key_file, prometheus::Registry& registry,
                         std::shared_ptr<spdlog::logger> logger, const Clock& clock)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      logger_(std::move(logger)),
      clock_(clock),
      reads_(prometheus::BuildCounter()
                 .Name("certwatcher_read_certificate_total")
                 .Help("Total number of certificate reads")
                 .Register(registry)
                 .Add({})),
      errors_(prometheus::BuildCounter()
                  .Name("certwatcher_read_certificate_errors_total")
                  .Help("Total number of certificate read errors")
                  .Register(registry)
                  .Add({})),
      expiration_(prometheus::BuildGauge()
                      .Name("certwatcher_certificate_expiration_timestamp_seconds")
                      .Help("Expiry (notAfter, Unix seconds) of the serving certificate last read successfully")
                      .Register(registry)
                      .Add({})) {}

CertWatcher::~CertWatcher() { Stop(); }

bool CertWatcher::ReadOnce() {
  reads_.Increment();
  Certificate cert;
  try {
    cert = CheckPair(ReadFile(cert_file_), ReadFile(key_file_));
  } catch (const std::exception& e) {
    errors_.Increment();
    // The reloader warns about a bad pair too; here only each new error.
    if (logger_ && last_error_ != e.what()) logger_->debug("certwatcher: {}: {}", cert_file_, e.what());
    last_error_ = e.what();
    return false;
  }
  last_error_.clear();
  expiration_.Set(
      static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(cert.not_after.time_since_epoch()).count()));
  if (auto w = warnings_.Check("serving certificate", cert, clock_.WallNow()); w && logger_) {
    if (w->expired) {
      logger_->error("{}", w->message);
    } else {
      logger_->warn("{}", w->message);
    }
  }
  return true;
}

void CertWatcher::Start(std::chrono::milliseconds interval) {
  ReadOnce();
  const Clock::TimePoint first = clock_.Now() + interval;
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
