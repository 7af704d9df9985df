// RAII owners for libcurl handles, for the controller's two HTTP clients
// (the API client, controller/kube/http_client, and the Prometheus client,
// controller/autoscale/prometheus_client), and libcurl's global set-up.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <stdexcept>

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

}  // namespace ms::kube::curl
