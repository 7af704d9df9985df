// modelservice-webhook: the validating and mutating admission webhook for
// ModelService (design.md §2, §4).
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>

#include "api/schema.h"
#include "base/flags.h"
#include "base/logging.h"
#include "base/metrics.h"
#include "base/side_endpoints.h"
#include "base/signals.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/validating_handler.h"
#include "webhook/server.h"
#include "webhook/transport/tls.h"

int main(int argc, char** argv) {
  ms::BlockTerminationSignals();
  // Each API server connection holds a descriptor: take the hard limit, as
  // Go programs do at start (the soft limit is often 1024).
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }

  int port = 9443;
  std::string bind_host = "0.0.0.0";
  std::string cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  std::string cert_name = "tls.crt", key_name = "tls.key";
  std::string tls_min = "1.2";
  std::string client_ca;
  std::string metrics_addr = ":8080", probe_addr = ":8081";
  std::string log_format = "json", log_level = "info";
  int threads = 2;
  std::chrono::milliseconds cert_poll{1000};
  std::chrono::milliseconds read_timeout{10000};

  ms::FlagSet flags("modelservice-webhook",
                    "modelservice-webhook serves the validating (/validate) and mutating (/mutate) admission webhooks\n"
                    "for modelops.dev/v1 ModelService over HTTPS.");
  flags.Int("port", &port, "HTTPS port to serve admission requests on");
  flags.String("bind-address", &bind_host, "address to bind the HTTPS port on");
  flags.String("cert-dir", &cert_dir, "directory holding the serving certificate and key (reloaded when they change)");
  flags.String("cert-name", &cert_name, "certificate file name in --cert-dir");
  flags.String("key-name", &key_name, "private key file name in --cert-dir");
  flags.String("tls-min-version", &tls_min, "minimum TLS version: 1.2 or 1.3");
  flags.String("client-ca", &client_ca,
               "PEM file of CAs; when set, clients (the API server) must present a certificate signed by one");
  flags.String("metrics-bind-address", &metrics_addr, "address for /metrics (\"0\" disables)");
  flags.String("health-probe-bind-address", &probe_addr, "address for /healthz and /readyz (\"0\" disables)");
  flags.String("log-format", &log_format, "log format: json or text");
  flags.String("log-level", &log_level, "log level: debug, info, warn, error, or a verbosity number");
  flags.Alias("v", "log-level");
  flags.Int("threads", &threads, "event loops serving HTTPS connections (each serves any number of them)");
  flags.Duration("cert-poll-interval", &cert_poll, "how often the certificate files are checked for changes");
  flags.Duration("read-timeout", &read_timeout, "time allowed to read a request before the connection is closed");

  if (auto err = flags.Parse(argc, argv); !err.empty()) {
    std::cerr << "Error: " << err << "\n";
    return 2;
  }
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  auto format = ms::log::ParseFormat(log_format);
  auto level = ms::log::ParseLevel(log_level);
  if (!format || !level) {
    std::cerr << "Error: invalid --log-format or --log-level\n";
    return 2;
  }
  auto logger = ms::log::MakeLogger("webhook", *format, *level);

  int min_version = ms::tls::ParseTlsVersion(tls_min);
  if (min_version == 0) {
    logger->critical("invalid --tls-min-version {}: use 1.2 or 1.3", tls_min);
    return 2;
  }
  ms::HostPort metrics_hp, probe_hp;
  if (!ms::ParseBindAddress(metrics_addr, &metrics_hp) || !ms::ParseBindAddress(probe_addr, &probe_hp)) {
    logger->critical("invalid --metrics-bind-address or --health-probe-bind-address");
    return 2;
  }
  if (threads < 1 || port < 0 || port > 65535) {
    logger->critical("invalid --threads or --port");
    return 2;
  }

  std::unique_ptr<ms::SchemaValidator> schema;
  try {
    schema = std::make_unique<ms::SchemaValidator>();
  } catch (const std::exception& e) {
    logger->critical("{}", e.what());
    return 1;
  }

  prometheus::Registry registry;
  const ms::metrics::ProcessCollector process_metrics;
  ms::webhook::ValidatingHandler validating(*schema);
  ms::webhook::MutatingHandler mutating;

  ms::webhook::ServerOptions options;
  options.http.host = bind_host;
  options.http.port = port;
  options.cert_file = cert_dir + "/" + cert_name;
  options.key_file = cert_dir + "/" + key_name;
  options.tls.min_version = min_version;
  options.tls.client_ca_file = client_ca;
  options.http.threads = threads;
  options.cert_poll_interval = cert_poll;
  options.http.limits.read_timeout = std::max(read_timeout, std::chrono::milliseconds(100));

  ms::webhook::Server server(options, {&validating, &mutating}, registry, logger);
  std::string error;
  if (!server.Start(&error)) {
    logger->critical("cannot start the webhook server: {}", error);
    return 1;
  }
  std::atomic<bool> serving{true};

  // /metrics and the probes; on one server when both flags name the same address.
  ms::SideEndpoints side(logger);
  if (!side.Start(
          metrics_hp, probe_hp, {&process_metrics, &registry}, [] { return true; },
          [&serving](std::string* why) {
            if (serving) return true;
            *why = "shutting down";
            return false;
          },
          &error)) {
    logger->critical("{}", error);
    return 1;
  }
  logger->info("serving admission on https://{}:{} (/validate, /mutate), TLS >= {}{}", bind_host, server.port(),
               tls_min, client_ca.empty() ? "" : ", client certificates required");

  int sig = ms::WaitForTermination();
  logger->info("received signal {}: finishing requests in flight and shutting down", sig);
  serving = false;
  server.Stop();
  side.Stop();
  logger->info("stopped");
  logger->flush();
  return 0;
}
