// A logger whose lines a test can read and wait for: what the code under
// test logs is an event the test can synchronise on ("stopped", "serving
// on ..."), without sleeping.
//
//   test::LogCapture log;
//   Thing thing(..., log.logger());
//   ASSERT_TRUE(log.AwaitLine("dropping"));
#pragma once

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ms::test {

class LogCapture {
 public:
  static constexpr std::chrono::milliseconds kCap{30'000};

  LogCapture() : sink_(std::make_shared<Sink>()), logger_(std::make_shared<spdlog::logger>("test", sink_)) {
    logger_->set_level(spdlog::level::trace);
  }

  const std::shared_ptr<spdlog::logger>& logger() const { return logger_; }

  // Every line logged so far (the message only).
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> g(sink_->lines_mu);
    return sink_->lines;
  }
  // Blocks until `n` lines containing `part` have been logged; false after `cap`.
  bool AwaitLine(const std::string& part, size_t n = 1, std::chrono::milliseconds cap = kCap) const {
    std::unique_lock<std::mutex> lock(sink_->lines_mu);
    return sink_->cv.wait_for(lock, cap, [&] {
      size_t found = 0;
      for (const auto& l : sink_->lines) found += l.find(part) != std::string::npos;
      return found >= n;
    });
  }

 private:
  struct Sink final : spdlog::sinks::base_sink<std::mutex> {
    std::mutex lines_mu;
    std::condition_variable cv;
    std::vector<std::string> lines;

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      std::lock_guard<std::mutex> g(lines_mu);
      lines.emplace_back(msg.payload.data(), msg.payload.size());
      cv.notify_all();
    }
    void flush_() override {}
  };

  std::shared_ptr<Sink> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace ms::test
