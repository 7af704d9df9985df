// HTTP/1.1 to one API server over libcurl (client-go's transport): the
// connection settings of a RestConfig (URL, CA, client certificate and key
// from memory, TCP keep-alive, no Nagle), a pool of easy handles (each keeps
// its keep-alive connection), one request per handle with a time limit and a
// check that may stop it right before it is sent or while it is in flight,
// and streamed GETs for watches (a multi handle each, woken at once by a stop
// request or Close(): nothing polls). What may be sent, when, and what an
// answer means is the request policy's and the client's business.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "controller/kube/config.h"
#include "controller/kube/curl_handles.h"
#include "shared/clock/clock.h"

namespace ms::kube {

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  // A watch receiving less than 1 byte/s for this long is dropped (the API
  // server sends a bookmark about once a minute).
  std::chrono::seconds watch_low_speed_time{90};
  // An answer larger than this fails (kReasonTooLarge): well under the
  // container's memory limit (256 Mi), so that what tenants store cannot
  // make the controller hold more; an informer's LIST then asks for
  // smaller pages.
  size_t max_response_bytes = 32u << 20;
  size_t max_idle_handles = 32;
};

// One request as it leaves.
struct Exchange {
  const char* method;  // GET, POST, ...
  const std::string& path;
  const std::string* body = nullptr;  // null: none
  const char* content_type = nullptr;
  const std::string& token;        // bearer token ("" : none)
  clock::Clock::Duration limit{};  // the whole request
  // Asked right before the request is sent (after the connection is ready)
  // and about once a second while it is in flight: a reason to stop it, or
  // null to go on.
  std::function<const char*()> check;
};

// What a request gave.
struct Answer {
  CURLcode curl = CURLE_OK;
  long http = 0;
  std::string body;
  std::string error;                 // curl's, when curl != CURLE_OK
  const char* stopped_by = nullptr;  // the check's reason, when it stopped the request
  bool sent = false;                 // the check let it go
  bool too_large = false;            // the body passed max_response_bytes
  // The Retry-After of a 429 or 5xx answer (seconds or an HTTP date), when
  // it has one.
  std::optional<clock::Clock::Duration> retry_after;
};

// What a streamed GET gave.
struct StreamEnd {
  std::optional<CURLcode> done;  // nullopt: stopped (a stop request, Close(), the consumer or its exception)
  long http = 0;
  std::string error_body;  // of a non-2xx answer (at most 1 MiB)
  std::string error;       // curl's
  std::string exception;   // what escaped the consumer, if anything
};

class Transport {
 public:
  Transport(RestConfig config, TransportOptions options);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  Answer Send(const Exchange& exchange);
  // GET `path`, handing the body of a 2xx answer to `consume` as it arrives
  // (false: stop), until the stream ends or fails, `stop` is requested, or
  // Close().
  StreamEnd Stream(const std::string& path, const std::string& token,
                   const std::function<bool(std::string_view)>& consume, std::stop_token stop);
  // Ends the streams in flight and every later one at once.
  void Close();
  bool closed() const { return closed_.load(); }

  // host:port of the server, as in the metrics' `host` label.
  const std::string& host() const { return host_; }

 private:
  curl::EasyPtr Acquire();
  void Release(curl::EasyPtr h);
  // Options every request shares. `headers` and `errbuf` must outlive the transfer.
  void Prepare(CURL* h, const std::string& path, const std::string& token, curl::SlistPtr& headers,
               const char* content_type, char* errbuf);
  std::optional<CURLcode> Drive(CURLM* multi, std::stop_token stop, char* errbuf);

  RestConfig config_;
  const TransportOptions options_;
  const std::string host_;

  std::mutex mu_;
  std::vector<curl::EasyPtr> pool_;  // idle handles
  std::set<CURLM*> streams_;         // to wake at Close()
  std::atomic<bool> closed_{false};
};

// host:port of a server URL ("https://h:6443/x" -> "h:6443"; the scheme's
// default port when absent).
std::string HostPort(const std::string& server);

}  // namespace ms::kube
