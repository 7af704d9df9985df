// The modelservice-webhook program run by a test: started with its flags
// (stdout and stderr kept in log.txt and awaited line by line), its
// certificates made by certs-scripts/gen-certs.sh, fetched with libcurl.
#pragma once

#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/test_support.h"

extern char** environ;

namespace ms::webhook::test {

inline size_t Collect(char* p, size_t s, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, s * n);
  return s * n;
}

// GET or POST with curl; returns the status (0 on transport failure).
inline long Fetch(const std::string& url, std::string* body, const std::string& ca = {}, const std::string& post = {}) {
  CURL* h = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  if (!ca.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca.c_str());
  if (!post.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, post.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  }
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return status;
}

inline int FreePort() {
  auto r = ::ms::test::Run(
      "python3 -c 'import socket;s=socket.socket();s.bind((\"127.0.0.1\",0));print(s.getsockname()[1])'");
  return std::stoi(r.output);
}

class WebhookBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    auto res = ::ms::test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " +
                               dir_.path() + " --ip 127.0.0.1");
    ASSERT_EQ(res.exit_code, 0) << res.output;
    port_ = FreePort();
    metrics_ = FreePort();
    probes_ = FreePort();
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
  }
  // Starts the program with stdout+stderr into a pipe, which a thread copies
  // into log.txt and keeps for AwaitLog().
  void Spawn(std::vector<std::string> args) {
    if (reader_.joinable()) reader_.join();  // the previous run's output has ended (WaitExit)
    {
      std::lock_guard<std::mutex> g(mu_);
      log_.clear();
      eof_ = false;
    }
    std::vector<std::string> all = {MS_WEBHOOK_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);  // dup2 clears close-on-exec on 1 and 2
    posix_spawn_file_actions_adddup2(&fa, out[1], 2);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    reader_ = std::thread([this, fd = out[0]] {
      std::ofstream file(dir_.File("log.txt"));
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) {
        file.write(buf, n).flush();
        std::lock_guard<std::mutex> g(mu_);
        log_.append(buf, static_cast<size_t>(n));
        cv_.notify_all();
      }
      close(fd);
      std::lock_guard<std::mutex> g(mu_);
      eof_ = true;
      cv_.notify_all();
    });
  }
  std::vector<std::string> StandardArgs() {
    return {"--port",
            std::to_string(port_),
            "--bind-address",
            "127.0.0.1",
            "--cert-dir",
            dir_.path(),
            "--metrics-bind-address",
            "127.0.0.1:" + std::to_string(metrics_),
            "--health-probe-bind-address",
            "127.0.0.1:" + std::to_string(probes_),
            "--log-format",
            "json"};
  }
  // Until the program has logged `part` (false if it exits first or 30 s pass).
  bool AwaitLog(const std::string& part) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return eof_ || log_.find(part) != std::string::npos; });
    return log_.find(part) != std::string::npos;
  }
  // The program says when it serves (after its probes listen).
  bool WaitReady() {
    std::string body;
    return AwaitLog("serving admission on") &&
           Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/readyz", &body) == 200;
  }
  // Waits for the process to exit (its output ends); returns its exit code
  // or -1 when it has not within `limit`.
  int WaitExit(std::chrono::seconds limit) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, limit, [this] { return eof_; })) return -1;
    }
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  ::ms::test::TempDir dir_;
  int port_ = 0, metrics_ = 0, probes_ = 0;
  pid_t pid_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string log_;  // what the program wrote so far
  bool eof_ = false;
};

}  // namespace ms::webhook::test
