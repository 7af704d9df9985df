// RAII owners for libcurl handles, for the controller's two HTTP clients
// (the API client, controller/kube/http_client, and the Prometheus client,
// controller/autoscale/prometheus_client), libcurl's global set-up, the
// exception barrier of write callbacks and the bounded response body.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace ms::kube::curl {

// libcurl's process-wide set-up and tear-down: one in main, before any
// thread starts (curl_global_init is not thread-safe in general).
class GlobalInit {
 public:
  GlobalInit() {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("curl_global_init failed");
  }
  ~GlobalInit() { curl_global_cleanup(); }
  GlobalInit(const GlobalInit&) = delete;
  GlobalInit& operator=(const GlobalInit&) = delete;
};

struct EasyDeleter {
  void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const noexcept { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};

using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

// Appends a header line; the list takes a copy of `line`.
inline void Append(SlistPtr& list, const char* line) {
  curl_slist* grown = curl_slist_append(list.get(), line);
  if (grown != nullptr) {
    (void)list.release();
    list.reset(grown);
  }
}

// An easy handle attached to a multi handle for the guard's lifetime.
class MultiAttachment {
 public:
  MultiAttachment(CURLM* multi, CURL* easy) : multi_(multi), easy_(easy) {
    ok_ = curl_multi_add_handle(multi_, easy_) == CURLM_OK;
  }
  ~MultiAttachment() {
    if (ok_) curl_multi_remove_handle(multi_, easy_);
  }
  MultiAttachment(const MultiAttachment&) = delete;
  MultiAttachment& operator=(const MultiAttachment&) = delete;
  bool ok() const { return ok_; }

 private:
  CURLM* multi_;
  CURL* easy_;
  bool ok_ = false;
};

// libcurl's write callbacks are C callbacks: no exception may cross them.
// Each runs its work behind this barrier; an exception is kept in
// `sink->exception`, the transfer is aborted (returning 0 makes curl fail
// with CURLE_WRITE_ERROR), and the request reports the error afterwards.
template <typename Sink, typename Fn>
std::size_t Barrier(Sink* sink, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    sink->exception = e.what();
  } catch (...) {
    sink->exception = "unknown exception";
  }
  if (sink->exception.empty()) sink->exception = "exception";
  return 0;
}

// A response body read into memory, at most `max` bytes: past them the
// transfer is aborted (CURLE_WRITE_ERROR) and Failure() says why.
struct BoundedBody {
  explicit BoundedBody(std::size_t max_bytes) : max(max_bytes) {}

  std::string data;
  std::size_t max;
  bool overflow = false;
  std::string exception;  // what escaped the callback, if anything

  // Makes `easy` write its response body here.
  void AttachTo(CURL* easy) {
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &BoundedBody::Write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
  }
  // Why the body stopped the transfer, or "" when it did not.
  std::string Failure() const {
    if (overflow) return "response larger than " + std::to_string(max) + " bytes";
    if (!exception.empty()) return "reading the response: " + exception;
    return {};
  }

 private:
  static std::size_t Write(char* ptr, std::size_t size, std::size_t nmemb, void* userdata) {
    auto* sink = static_cast<BoundedBody*>(userdata);
    return Barrier(sink, [&]() -> std::size_t {
      const std::size_t n = size * nmemb;
      if (sink->data.size() + n > sink->max) {
        sink->overflow = true;
        return 0;  // aborts the transfer with CURLE_WRITE_ERROR
      }
      sink->data.append(ptr, n);
      return n;
    });
  }
};

}  // namespace ms::kube::curl
