// model-server: a stand-in model server for ModelService samples. It serves
// what the operator expects of a model container (design: readiness probe
// GET /healthz on the port named http; a gauge modelservice_queue_length for
// the autoscaler) and fakes inference: POST /v1/predict waits --delay-ms and
// answers with the model's name and version (env MODEL_NAME, MODEL_VERSION,
// which the controller sets). No dependency beyond the C++ standard library
// and POSIX sockets, so it links statically into an image with nothing else.
//
//   model-server [--port N] [--delay-ms N]     (PORT env also sets the port)
//
// GET /healthz  200 "ok"
// GET /metrics  Prometheus text format 0.0.4: modelservice_queue_length
//               (predictions waiting or running), model_server_requests_total
// GET /         {"model": ..., "version": ..., "pod": ...}
// POST /v1/predict  {"model": ..., "version": ..., "output": ...} after the delay
// One JSON log line per request on stdout. SIGTERM: stop accepting, finish
// the requests in flight, exit 0.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

namespace {

constexpr int kMaxConnections = 256;
constexpr size_t kMaxHead = 8192;
constexpr size_t kMaxBody = 1 << 20;

std::atomic<int> g_connections{0};
std::atomic<long> g_queue{0};
std::atomic<long> g_ok{0}, g_not_found{0}, g_bad{0};
volatile sig_atomic_t g_stop = 0;

struct Options {
  int port = 8080;
  int delay_ms = 200;
};

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string Identity() {
  return "\"model\":\"" + JsonEscape(Env("MODEL_NAME", "unknown")) + "\",\"version\":\"" +
         JsonEscape(Env("MODEL_VERSION", "")) + "\",\"pod\":\"" + JsonEscape(Env("HOSTNAME", "")) + "\"";
}

bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

void Respond(int fd, int code, const char* type, const std::string& body) {
  const char* reason = code == 200   ? "OK"
                       : code == 404 ? "Not Found"
                       : code == 405 ? "Method Not Allowed"
                                     : "Bad Request";
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  SendAll(fd, head + body);
  (code == 200 ? g_ok : code == 404 ? g_not_found : g_bad)++;
}

std::string Metrics() {
  return "# HELP modelservice_queue_length Prediction requests waiting or running in this server.\n"
         "# TYPE modelservice_queue_length gauge\n"
         "modelservice_queue_length " +
         std::to_string(g_queue.load()) +
         "\n"
         "# HELP model_server_requests_total Requests answered, by HTTP status code.\n"
         "# TYPE model_server_requests_total counter\n"
         "model_server_requests_total{code=\"200\"} " +
         std::to_string(g_ok.load()) + "\nmodel_server_requests_total{code=\"404\"} " +
         std::to_string(g_not_found.load()) + "\nmodel_server_requests_total{code=\"400\"} " +
         std::to_string(g_bad.load()) + "\n";
}

// ReadRequest: the request line and headers, and the body (discarded) of
// Content-Length bytes. False on a malformed or oversized request.
bool ReadRequest(int fd, std::string* method, std::string* path) {
  std::string buf;
  char chunk[4096];
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > kMaxHead) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0) return false;
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
  }
  size_t sp1 = buf.find(' '), sp2 = buf.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos || sp2 > buf.find("\r\n")) return false;
  *method = buf.substr(0, sp1);
  *path = buf.substr(sp1 + 1, sp2 - sp1 - 1);
  path->erase(std::min(path->find('?'), path->size()));  // routes ignore the query
  size_t body = 0, cl = buf.find("\r\nContent-Length:");
  if (cl == std::string::npos) cl = buf.find("\r\ncontent-length:");
  if (cl != std::string::npos && cl < end) body = std::strtoul(buf.c_str() + cl + 17, nullptr, 10);
  if (body > kMaxBody) return false;
  size_t have = buf.size() - end - 4;
  while (have < body) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    have += static_cast<size_t>(n);
  }
  return true;
}

void Log(const std::string& method, const std::string& path, int code, double ms) {
  std::printf("{\"msg\":\"request\",\"method\":\"%s\",\"path\":\"%s\",\"code\":%d,\"ms\":%.1f}\n",
              JsonEscape(method).c_str(), JsonEscape(path).c_str(), code, ms);
  std::fflush(stdout);
}

void Serve(int fd, int delay_ms) {
  auto start = std::chrono::steady_clock::now();
  std::string method, path;
  int code = 200;
  if (!ReadRequest(fd, &method, &path)) {
    code = 400;
    Respond(fd, code, "text/plain", "bad request\n");
  } else if (path == "/healthz" || path == "/metrics" || path == "/") {
    if (method != "GET" && method != "HEAD") {
      code = 405;
      Respond(fd, code, "text/plain", "method not allowed\n");
    } else if (path == "/healthz") {
      Respond(fd, code, "text/plain", "ok\n");
    } else if (path == "/metrics") {
      Respond(fd, code, "text/plain; version=0.0.4", Metrics());
    } else {
      Respond(fd, code, "application/json", "{" + Identity() + "}\n");
    }
  } else if (path == "/v1/predict" && method == "POST") {
    g_queue++;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    g_queue--;
    Respond(fd, code, "application/json", "{" + Identity() + ",\"output\":\"ok\"}\n");
  } else {
    code = 404;
    Respond(fd, code, "text/plain", "not found\n");
  }
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (path != "/healthz") Log(method, path, code, took.count());
  close(fd);
  g_connections--;
}

bool ParseOptions(int argc, char** argv, Options* o) {
  o->port = std::atoi(Env("PORT", "8080").c_str());
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if ((a == "--port" || a == "--delay-ms") && i + 1 < argc) {
      (a == "--port" ? o->port : o->delay_ms) = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: model-server [--port N] [--delay-ms N]\n");
      return false;
    }
  }
  return o->port > 0 && o->port < 65536 && o->delay_ms >= 0;
}

int Listen(int port) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 too
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_any;
  addr.sin6_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(fd, 128) < 0) {
    std::perror("model-server: listen");
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseOptions(argc, argv, &opt)) return 2;
  int lfd = Listen(opt.port);
  if (lfd < 0) return 1;
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::printf("{\"msg\":\"serving\",\"port\":%d,%s}\n", opt.port, Identity().c_str());
  std::fflush(stdout);
  while (g_stop == 0) {
    pollfd p{lfd, POLLIN, 0};
    if (poll(&p, 1, 500) <= 0) continue;
    int fd = accept(lfd, nullptr, nullptr);
    if (fd < 0) continue;
    if (g_connections.load() >= kMaxConnections) {
      close(fd);
      continue;
    }
    g_connections++;
    std::thread(Serve, fd, opt.delay_ms).detach();
  }
  close(lfd);
  while (g_connections.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::printf("{\"msg\":\"stopped\"}\n");
  return 0;
}
