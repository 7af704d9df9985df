// modelservice-webhook: the validating and mutating admission webhook for
// ModelService (design.md §2, §4).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/certs/cert_watcher.h"
#include "shared/flags/flags.h"
#include "shared/log/logging.h"
#include "shared/metrics/metrics.h"
#include "shared/process/cpus.h"
#include "shared/process/open_files.h"
#include "shared/process/signals.h"
#include "shared/text/strings.h"
#include "shared/transport/side_endpoints.h"
#include "shared/transport/tls.h"
#include "shared/version/version.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/validating_handler.h"
#include "webhook/server.h"
#include "webhook/validate/validate.h"

// jemalloc (linked unless under the sanitizers) reads this at start: its
// background thread returns freed pages to the kernel on the decay schedule
// even when the process is idle, so RSS falls back after a burst of load
// (without it, pages were only purged on later allocations).
extern "C" const char* const malloc_conf = "background_thread:true";

namespace {

using ms::flags::FlagSet;

// The command line, with its defaults (and those both programs have).
struct Flags : ms::flags::CommonFlags {
  int port = 9443;
  std::string bind_host = "0.0.0.0";
  std::string cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  std::string cert_name = "tls.crt", key_name = "tls.key";
  std::string tls_min = "1.2";
  std::string client_ca;
  std::string client_names = "kube-apiserver";
  std::chrono::milliseconds ticket_key_rotation{3600 * 1000};
  std::chrono::milliseconds session_max_age{3600 * 1000};
  bool metrics_secure = false;
  int threads = 0;  // 0: ms::process::UsableCpus()
  std::chrono::milliseconds cert_poll{1000};
  std::chrono::milliseconds shutdown_delay{0};
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds body_timeout{2000};
  std::chrono::milliseconds idle_timeout{120000};
  std::chrono::milliseconds handshake_timeout{5000};
  int max_connections = 1000;
  int max_connections_per_peer = 250;
  int max_handshakes = 250;
  int max_body_bytes_in_flight = 32 << 20;
  int max_body_bytes_per_peer = 8 << 20;
};

FlagSet Definitions(Flags& f) {
  FlagSet flags("modelservice-webhook",
                "modelservice-webhook serves the validating (/validate) and mutating (/mutate) admission webhooks\n"
                "for modelops.dev/v1 ModelService over HTTPS.\n"
                "'modelservice-webhook validate --help': the same rules over manifest files, offline.");
  flags.Int("port", &f.port, "HTTPS port to serve admission requests on");
  flags.String("bind-address", &f.bind_host, "address to bind the HTTPS port on");
  flags.String("cert-dir", &f.cert_dir,
               "directory holding the serving certificate and key (reloaded when they change)");
  flags.String("cert-name", &f.cert_name, "certificate file name in --cert-dir");
  flags.String("key-name", &f.key_name, "private key file name in --cert-dir");
  flags.String("tls-min-version", &f.tls_min, "minimum TLS version: 1.2 or 1.3");
  flags.String("client-ca", &f.client_ca,
               "PEM file of CAs; when set, clients (the API server) must present a certificate signed by one");
  flags.String("client-allowed-names", &f.client_names,
               "with --client-ca: comma-separated names (subject CN or DNS SAN) a client certificate must carry;\n"
               "'*' accepts any certificate the CAs signed");
  flags.Duration("tls-session-max-age", &f.session_max_age,
                 "how long after its full handshake a TLS session may be resumed and its connection kept; with\n"
                 "--client-ca, new client CAs also end the sessions the old ones verified");
  flags.Bool("metrics-secure", &f.metrics_secure,
             "serve /metrics over HTTPS with the --cert-dir certificate (the probes stay plain HTTP, elsewhere)");
  flags.Duration("tls-ticket-key-rotation", &f.ticket_key_rotation,
                 "how often a new TLS session-ticket key is made (tickets of the previous key resume until the next)");
  flags.Int("threads", &f.threads,
            "event loops serving HTTPS connections (each serves any number of them); 0: one per usable CPU (the CPUs "
            "the process may run on, at most its cgroup CPU limit rounded up)");
  flags.Duration("cert-poll-interval", &f.cert_poll, "how often the certificate files are checked for changes");
  flags.Duration("shutdown-delay", &f.shutdown_delay,
                 "after SIGTERM, how long to go on serving admission (with /readyz failing and each answer closing\n"
                 "its connection) before stopping, so that the Pod leaves the Service's endpoints before it stops\n"
                 "listening; a second SIGTERM or SIGINT stops at once");
  flags.Duration("read-timeout", &f.read_timeout, "time allowed to read a request before the connection is closed");
  flags.Duration("body-timeout", &f.body_timeout,
                 "time allowed for a request's body to arrive after its head (its reservation in\n"
                 "--max-body-bytes-in-flight is held this long at most); 0: --read-timeout only");
  flags.Duration("handshake-timeout", &f.handshake_timeout,
                 "time allowed for a TLS handshake after the connection is accepted");
  flags.Duration("idle-timeout", &f.idle_timeout,
                 "how long a kept-alive connection may wait for its next request (longer than the API server's 90s,\n"
                 "so that it is the client that closes)");
  flags.Int("max-connections", &f.max_connections,
            "open connections at most (each costs a file descriptor and buffers); at the limit a connection owed\n"
            "no answer, of the address holding the most, is closed to make room for a new one");
  flags.Int("max-connections-per-peer", &f.max_connections_per_peer,
            "open connections from one client address at most; beyond, its new connection takes the place of\n"
            "one of its own owed no answer (0: only --max-connections)");
  flags.Int("max-handshakes", &f.max_handshakes,
            "TLS handshakes in progress at most; beyond, a new connection takes the place of a handshake of the\n"
            "address with the most (0: only --max-connections)");
  flags.Int("max-body-bytes-in-flight", &f.max_body_bytes_in_flight,
            "bytes of request bodies being received (their Content-Length) and of answers waiting to be sent,\n"
            "at once; beyond, a request is answered 503 with Retry-After: 1 (0: no budget; else at least\n"
            "6291456, two bodies of the 3 MiB limit)");
  flags.Int("max-body-bytes-per-peer", &f.max_body_bytes_per_peer,
            "of --max-body-bytes-in-flight, what one client address may hold (0: all of it; else at least\n"
            "3145728, one body of the limit)");
  ms::flags::DefineCommonFlags(flags, f);
  flags.Version(ms::version::VersionText("modelservice-webhook"));
  return flags;
}

// What the flags mean once checked.
struct Settings {
  std::shared_ptr<spdlog::logger> logger;
  ms::webhook::ServerOptions server;
};

// The HTTP server's settings (threads, timeouts, limits); false after
// saying what is wrong.
bool CheckServing(const Flags& f, Settings& s) {
  if (f.threads < 0 || f.port < 0 || f.port > 65535 || f.max_connections < 1 || f.max_connections_per_peer < 0 ||
      f.max_handshakes < 0) {
    s.logger->critical("invalid --threads, --port, --max-connections, --max-connections-per-peer or --max-handshakes");
    return false;
  }
  const int max_body = static_cast<int>(ms::admission::kMaxBodyBytes);
  if (f.max_body_bytes_in_flight != 0 && f.max_body_bytes_in_flight < 2 * max_body) {
    s.logger->critical("invalid --max-body-bytes-in-flight: 0, or at least {} (two bodies of the limit)", 2 * max_body);
    return false;
  }
  if (f.max_body_bytes_per_peer != 0 && f.max_body_bytes_per_peer < max_body) {
    s.logger->critical("invalid --max-body-bytes-per-peer: 0, or at least {} (one body of the limit)", max_body);
    return false;
  }
  s.server.http.host = f.bind_host;
  s.server.http.port = f.port;
  s.server.http.threads = f.threads > 0 ? f.threads : ms::process::UsableCpus();
  s.server.http.limits.read_timeout = std::max(f.read_timeout, std::chrono::milliseconds(100));
  s.server.http.limits.idle_timeout = std::max(f.idle_timeout, std::chrono::milliseconds(100));
  s.server.http.limits.body_timeout = std::max(f.body_timeout, std::chrono::milliseconds(0));
  s.server.http.handshake_timeout = std::max(f.handshake_timeout, std::chrono::milliseconds(100));
  s.server.http.max_connections = static_cast<size_t>(f.max_connections);
  s.server.http.max_connections_per_peer = static_cast<size_t>(f.max_connections_per_peer);
  s.server.http.max_handshakes = static_cast<size_t>(f.max_handshakes);
  s.server.http.max_body_bytes_in_flight = static_cast<size_t>(f.max_body_bytes_in_flight);
  s.server.http.max_body_bytes_per_peer = static_cast<size_t>(f.max_body_bytes_per_peer);
  return true;
}

// The settings, or nothing after saying what is wrong with the flags.
std::optional<Settings> Check(const Flags& f) {
  Settings s;
  s.logger = f.MakeLogger("webhook");
  const int min_version = ms::transport::ParseTlsVersion(f.tls_min);
  if (min_version == 0) {
    s.logger->critical("invalid --tls-min-version {}: use 1.2 or 1.3", f.tls_min);
    return std::nullopt;
  }
  if (!CheckServing(f, s)) return std::nullopt;
  s.server.cert_file = f.cert_dir + "/" + f.cert_name;
  s.server.key_file = f.cert_dir + "/" + f.key_name;
  s.server.tls.min_version = min_version;
  s.server.tls.client_ca_file = f.client_ca;
  if (!f.client_ca.empty()) {
    for (std::string_view rest = f.client_names; !rest.empty();) {
      const size_t comma = rest.find(',');
      const std::string name(ms::text::Trim(rest.substr(0, comma)));
      if (!name.empty()) s.server.tls.client_names.push_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (s.server.tls.client_names.empty()) {
      s.logger->critical("--client-allowed-names is empty: name the client (e.g. kube-apiserver), or '*' for any");
      return std::nullopt;
    }
  }
  if (f.ticket_key_rotation < std::chrono::seconds(1)) {
    s.logger->critical("invalid --tls-ticket-key-rotation: at least 1s");
    return std::nullopt;
  }
  s.server.tls.ticket_key_rotation = std::chrono::duration_cast<std::chrono::seconds>(f.ticket_key_rotation);
  if (f.session_max_age < std::chrono::seconds(1)) {
    s.logger->critical("invalid --tls-session-max-age: at least 1s");
    return std::nullopt;
  }
  s.server.tls.session_max_age = std::chrono::duration_cast<std::chrono::seconds>(f.session_max_age);
  s.server.cert_poll_interval = f.cert_poll;
  if (f.metrics_secure && f.MetricsAddress().port >= 0 && f.metrics_bind_address == f.health_probe_bind_address) {
    s.logger->critical("--metrics-secure: --metrics-bind-address must differ from --health-probe-bind-address");
    return std::nullopt;
  }
  return s;
}

// /metrics over HTTPS (--metrics-secure), with the serving certificate the
// admission server reloads, no client certificate asked: Prometheus is let
// in by the NetworkPolicy, not by mTLS.
class SecureMetrics {
 public:
  explicit SecureMetrics(std::shared_ptr<spdlog::logger> logger) : logger_(logger), server_(std::move(logger)) {}
  ~SecureMetrics() { server_.Stop(); }
  // False after saying why it cannot.
  bool Start(const Flags& f, ms::webhook::Server& admission, const ms::metrics::Registry& registry) {
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    ms::transport::ServerTlsOptions tls;
    tls.min_version = ms::transport::ParseTlsVersion(f.tls_min);
    std::string error = "out of memory";
    if (!ctx_ || !ms::transport::ConfigureServerContext(*ctx_, tls, *admission.certificates(), &error)) {
      logger_->critical("/metrics over HTTPS: {}", error);
      return false;
    }
    server_.ServeMetrics(registry.Collectables());
    const ms::flags::HostPort at = f.MetricsAddress();
    if (at.port >= 0 && !server_.Start(at.host, at.port, &error, ctx_.get())) {
      logger_->critical("metrics endpoint: {}", error);
      return false;
    }
    return true;
  }
  void Stop() { server_.Stop(); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_{nullptr, SSL_CTX_free};
  ms::transport::EndpointServer server_;
};

// Waits until the certificate and key files exist in a --cert-dir that does
// exist: in a Pod whose Secret the controller makes (--cert-mode self, first
// install), the (optional) Secret volume is an empty directory until the
// kubelet syncs it. Returns 0 then (or at once when the directory itself is
// missing: the server's start says so), or the signal that ended the wait.
int AwaitCertificate(const Settings& s, std::chrono::milliseconds poll, spdlog::logger& logger) {
  auto present = [&] {
    return access(s.server.cert_file.c_str(), R_OK) == 0 && access(s.server.key_file.c_str(), R_OK) == 0;
  };
  const std::string dir = std::filesystem::path(s.server.cert_file).parent_path().string();
  if (present() || access(dir.empty() ? "." : dir.c_str(), F_OK) != 0) return 0;
  logger.info("waiting for the serving certificate {} and key {}", s.server.cert_file, s.server.key_file);
  while (!present())
    if (int sig = ms::process::WaitForTerminationFor(std::max(poll, std::chrono::milliseconds(100))); sig != 0)
      return sig;
  return 0;
}

// After the SIGTERM `sig` (readiness already failing): the API server still
// sends admissions here until the endpoint controller has taken this Pod
// out of the Service and the API server has seen it, and a port closed now
// would fail them (failurePolicy Fail: the user's write refused). So it
// serves on for `delay`, each answer closing its connection, unless a second
// signal comes first.
void ShutdownDelay(int sig, std::chrono::milliseconds delay, ms::webhook::Server& server, spdlog::logger& logger) {
  if (delay.count() <= 0) {
    logger.info("received signal {}: finishing requests in flight and shutting down", sig);
    return;
  }
  server.Quiesce();
  logger.info("received signal {}: not ready; serving admission for {} more (--shutdown-delay)", sig,
              ms::flags::FormatDuration(delay));
  const int again = ms::process::WaitForTerminationFor(delay);
  logger.info("{}: finishing requests in flight and shutting down",
              again != 0 ? "received signal " + std::to_string(again) + " again" : "shutdown delay over");
}

// Serves admission, /metrics and the probes until SIGTERM or SIGINT, then
// finishes the requests in flight. Returns the exit status.
int Serve(const Flags& f, const Settings& s) {
  const auto& logger = s.logger;
  ms::metrics::Registry registry;
  ms::webhook::WebhookMetrics metrics(registry);
  ms::certs::CertWatcherMetrics cert_metrics(registry);
  ms::version::RegisterBuildInfo(registry);
  ms::admission::ValidatingHandler validating;
  ms::admission::MutatingHandler mutating;
  ms::webhook::Server server(s.server, {&validating, &mutating}, metrics, logger);
  std::string error;
  // /metrics and the probes (first: alive, not ready, while the certificate
  // is awaited); on one server when both flags name the same address.
  // With --metrics-secure, /metrics starts once the certificate is there.
  std::atomic<bool> serving{false}, stopping{false};
  ms::transport::SideEndpoints side(logger);
  if (!side.Start(
          f.metrics_secure ? ms::flags::HostPort{} : f.MetricsAddress(), f.ProbeAddress(), registry,
          [] { return true; },
          [&serving, &stopping](std::string* why) {
            if (serving && !stopping) return true;
            *why = stopping ? "shutting down" : "waiting for the serving certificate";
            return false;
          },
          &error)) {
    logger->critical("{}", error);
    return 1;
  }
  if (int sig = AwaitCertificate(s, f.cert_poll, *logger); sig != 0) {
    logger->info("received signal {} while waiting for the serving certificate: stopped", sig);
    side.Stop();
    return 0;
  }
  if (!server.Start(&error)) {
    logger->critical("cannot start the webhook server: {}", error);
    return 1;
  }
  SecureMetrics secure_metrics(logger);
  if (f.metrics_secure && !secure_metrics.Start(f, server, registry)) return 1;
  serving = true;
  // certwatcher_*, the certificates' expiry and its warnings (certs/cert_watcher.h).
  const ms::clock::SystemClock clock;
  ms::certs::CertWatcher cert_watcher(s.server.cert_file, s.server.key_file, cert_metrics, logger, clock, f.client_ca);
  cert_watcher.Start(f.cert_poll);
  logger->info("serving admission on https://{}:{} (/validate, /mutate), TLS >= {}{}, {} event loop{}", f.bind_host,
               server.port(), f.tls_min, f.client_ca.empty() ? "" : ", client certificates required",
               s.server.http.threads, s.server.http.threads == 1 ? "" : "s");

  const int sig = ms::process::WaitForTermination();
  stopping = true;
  ShutdownDelay(sig, f.shutdown_delay, server, *logger);
  server.Stop();
  secure_metrics.Stop();
  side.Stop();
  logger->info("stopped");
  logger->flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // `modelservice-webhook validate ...`: the same rules over files, offline.
  if (argc >= 2 && std::string_view(argv[1]) == "validate")
    return ms::validate::Main(std::vector<std::string>(argv + 2, argv + argc), std::cin, std::cout, std::cerr);
  ms::process::BlockTerminationSignals();
  ms::process::RaiseOpenFileLimit();
  Flags f;
  FlagSet flags = Definitions(f);
  if (auto done = flags.ParseCommandLine(argc, argv, std::cout, std::cerr)) return *done;
  auto settings = Check(f);
  if (!settings) return 2;
  return Serve(f, *settings);
}
