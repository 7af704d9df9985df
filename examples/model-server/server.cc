// model-server: a stand-in model server for ModelService samples. It serves
// what the operator expects of a model container (design: readiness probe
// GET /healthz on the port named http; a gauge modelservice_queue_length for
// the autoscaler) and fakes inference: POST /v1/predict waits --delay-ms and
// answers with the model's name and version (env MODEL_NAME, MODEL_VERSION,
// which the controller sets). No dependency beyond the C++ standard library
// and POSIX sockets, so it links statically into an image with nothing else.
//
//   model-server [--port N] [--delay-ms N] [--concurrency N] [--drain-seconds N]
//                [--runtime NAME] [--load-seconds N] [runtime arguments...]
//
// --concurrency N (env MODEL_SERVER_CONCURRENCY): at most N predictions run
// at once, the others wait in arrival order, as a server with N workers
// queues (0, the default: no limit). The queue gauge counts both.
// --drain-seconds N (env MODEL_SERVER_DRAIN_SECONDS): after SIGTERM the
// readiness paths answer 503 "draining" and new requests are still served
// for N seconds, so the endpoint leaves the Service before the listener
// closes (0, the default: stop accepting at once).
//
// --runtime (or env MODEL_SERVER_RUNTIME) makes it present the surface of a
// real server, as the operator's runtime presets expect it (no GPU, no real
// model): Custom (the default, as above); vLLM (GET /health, metrics on the
// HTTP port with vllm:num_requests_waiting{model_name}); TGI (GET /health,
// tgi_queue_size); Triton (GET /v2/health/ready and /v2/health/live,
// metrics on a second port, 8002 or --metrics-port, with
// nv_inference_pending_request_count{model,version}). The runtimes' own
// arguments are accepted: --port=N, --http-port=N, --model=M, --load-model=M,
// a leading "tritonserver", other --flag=value ignored; env PORT sets the
// port as TGI's launcher reads it. --load-seconds (env
// MODEL_SERVER_LOAD_SECONDS) fakes a model load: the readiness paths answer
// 503 until it is over (liveness paths 200 throughout).
//
// GET /healthz  200 "ok" (the readiness path of the runtime likewise)
// GET /metrics  Prometheus text format 0.0.4: the runtime's queue gauge
//               (predictions waiting or running), model_server_requests_total
// GET /         {"model": ..., "version": ..., "pod": ...}
// GET /statfs/PATH  {"path": ..., "bytes": N, "readOnly": B} of the file
//               system holding PATH (a mount's size and mode: /dev/shm, a
//               model cache), 404 when PATH does not exist
// POST /v1/predict  {"model": ..., "version": ..., "output": ...} after the delay
// One JSON log line per request on stdout. SIGTERM: drain (above), stop
// accepting, finish the requests in flight, exit 0.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
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

enum class Runtime { kCustom, kVLLM, kTGI, kTriton };

struct Options {
  int port = 8080;
  int metrics_port = 0;  // a second listener for /metrics only (Triton: 8002)
  int delay_ms = 200;
  int concurrency = 0;  // predictions at once; 0: no limit
  int drain_seconds = 0;
  int load_seconds = 0;
  Runtime runtime = Runtime::kCustom;
  std::string model;  // --model / --load-model, else MODEL_NAME
};

std::chrono::steady_clock::time_point g_loaded_at;

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
                       : code == 503 ? "Service Unavailable"
                                     : "Bad Request";
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  SendAll(fd, head + body);
  (code == 200 ? g_ok : code == 404 ? g_not_found : g_bad)++;
}

std::string QueueGauge(const Options& o) {
  const std::string n = std::to_string(g_queue.load());
  const std::string model = JsonEscape(o.model);
  switch (o.runtime) {
    case Runtime::kVLLM:
      return "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
             "# TYPE vllm:num_requests_waiting gauge\n"
             "vllm:num_requests_waiting{model_name=\"" +
             model + "\"} " + n + "\n";
    case Runtime::kTGI:
      return "# HELP tgi_queue_size Current queue size\n# TYPE tgi_queue_size gauge\ntgi_queue_size " + n + "\n";
    case Runtime::kTriton:
      return "# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution "
             "per-model.\n# TYPE nv_inference_pending_request_count gauge\n"
             "nv_inference_pending_request_count{model=\"" +
             model + "\",version=\"1\"} " + n + "\n";
    case Runtime::kCustom:
      break;
  }
  return "# HELP modelservice_queue_length Prediction requests waiting or running in this server.\n"
         "# TYPE modelservice_queue_length gauge\n"
         "modelservice_queue_length " +
         n + "\n";
}

std::string Metrics(const Options& o) {
  return QueueGauge(o) +
         "# HELP model_server_requests_total Requests answered, by HTTP status code.\n"
         "# TYPE model_server_requests_total counter\n"
         "model_server_requests_total{code=\"200\"} " +
         std::to_string(g_ok.load()) + "\nmodel_server_requests_total{code=\"404\"} " +
         std::to_string(g_not_found.load()) + "\nmodel_server_requests_total{code=\"400\"} " +
         std::to_string(g_bad.load()) + "\n";
}

bool Loaded() { return std::chrono::steady_clock::now() >= g_loaded_at; }

// The runtime's health paths: 1 ready (503 while loading), 2 live, 0 neither.
int HealthPath(const Options& o, const std::string& path) {
  switch (o.runtime) {
    case Runtime::kVLLM:
    case Runtime::kTGI:
      return path == "/health" ? 1 : 0;
    case Runtime::kTriton:
      return path == "/v2/health/ready" ? 1 : path == "/v2/health/live" ? 2 : 0;
    case Runtime::kCustom:
      break;
  }
  return path == "/healthz" ? 1 : 0;
}

std::string StatFs(const std::string& path, int* code) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) {
    *code = 404;
    return "no such path\n";
  }
  const unsigned long long bytes = static_cast<unsigned long long>(st.f_blocks) * st.f_frsize;
  return "{\"path\":\"" + JsonEscape(path) + "\",\"bytes\":" + std::to_string(bytes) +
         ",\"readOnly\":" + ((st.f_flag & ST_RDONLY) != 0 ? "true" : "false") + "}\n";
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

// At most Options::concurrency predictions at once (the server's workers),
// admitted in arrival order, as a model server's request queue is. (A
// std::counting_semaphore wakes its waiters in no order: under a long queue
// one request could wait far past its turn, beyond a client's timeout.)
class Workers {
 public:
  explicit Workers(int slots) : free_(slots) {}
  void Acquire() {
    std::unique_lock lock(mu_);
    const std::uint64_t ticket = next_++;
    turn_.wait(lock, [&] { return ticket == admitted_ && free_ > 0; });
    ++admitted_;
    --free_;
    turn_.notify_all();  // the next ticket may take another free slot
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      ++free_;
    }
    turn_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable turn_;
  std::uint64_t next_ = 0;      // the ticket of the next arrival
  std::uint64_t admitted_ = 0;  // tickets admitted so far (the next turn)
  int free_;
};

void Serve(int fd, const Options& o, bool metrics_only, Workers& workers) {
  auto start = std::chrono::steady_clock::now();
  std::string method, path;
  int code = 200;
  if (!ReadRequest(fd, &method, &path)) {
    code = 400;
    Respond(fd, code, "text/plain", "bad request\n");
  } else if (metrics_only && path != "/metrics") {
    code = 404;
    Respond(fd, code, "text/plain", "not found\n");
  } else if (HealthPath(o, path) != 0 || path == "/metrics" || path == "/" || path.rfind("/statfs/", 0) == 0) {
    if (method != "GET" && method != "HEAD") {
      code = 405;
      Respond(fd, code, "text/plain", "method not allowed\n");
    } else if (HealthPath(o, path) == 1 && !Loaded()) {
      code = 503;
      Respond(fd, code, "text/plain", "loading\n");
    } else if (HealthPath(o, path) == 1 && g_stop != 0) {
      code = 503;
      Respond(fd, code, "text/plain", "draining\n");
    } else if (HealthPath(o, path) != 0) {
      Respond(fd, code, "text/plain", "ok\n");
    } else if (path == "/metrics") {
      Respond(fd, code, "text/plain; version=0.0.4", Metrics(o));
    } else if (path == "/") {
      Respond(fd, code, "application/json", "{" + Identity() + "}\n");
    } else {
      std::string body = StatFs(path.substr(std::strlen("/statfs")), &code);
      Respond(fd, code, code == 200 ? "application/json" : "text/plain", body);
    }
  } else if (path == "/v1/predict" && method == "POST") {
    g_queue++;
    workers.Acquire();
    std::this_thread::sleep_for(std::chrono::milliseconds(o.delay_ms));
    workers.Release();
    g_queue--;
    Respond(fd, code, "application/json", "{" + Identity() + ",\"output\":\"ok\"}\n");
  } else {
    code = 404;
    Respond(fd, code, "text/plain", "not found\n");
  }
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (HealthPath(o, path) == 0) Log(method, path, code, took.count());
  close(fd);
  g_connections--;
}

bool ParseRuntime(std::string_view name, Runtime* r) {
  if (name == "Custom")
    *r = Runtime::kCustom;
  else if (name == "vLLM")
    *r = Runtime::kVLLM;
  else if (name == "TGI")
    *r = Runtime::kTGI;
  else if (name == "Triton")
    *r = Runtime::kTriton;
  else
    return false;
  return true;
}

// "--name=value" or "--name value": the value, advancing i past it.
bool Value(int argc, char** argv, int* i, std::string_view name, std::string* out) {
  std::string_view a = argv[*i];
  if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=') {
    *out = std::string(a.substr(name.size() + 1));
    return true;
  }
  if (a == name && *i + 1 < argc) {
    *out = argv[++*i];
    return true;
  }
  return false;
}

bool ParseOptions(int argc, char** argv, Options* o) {
  o->port = std::atoi(Env("PORT", "8080").c_str());
  o->load_seconds = std::atoi(Env("MODEL_SERVER_LOAD_SECONDS", "0").c_str());
  o->concurrency = std::atoi(Env("MODEL_SERVER_CONCURRENCY", "0").c_str());
  o->drain_seconds = std::atoi(Env("MODEL_SERVER_DRAIN_SECONDS", "0").c_str());
  o->model = Env("MODEL_NAME", "unknown");
  if (!ParseRuntime(Env("MODEL_SERVER_RUNTIME", "Custom"), &o->runtime)) {
    std::fprintf(stderr, "model-server: MODEL_SERVER_RUNTIME: not Custom, vLLM, TGI or Triton\n");
    return false;
  }
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (i == 1 && std::string_view(argv[i]) == "tritonserver") continue;
    if (Value(argc, argv, &i, "--port", &v) || Value(argc, argv, &i, "--http-port", &v)) {
      o->port = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--metrics-port", &v)) {
      o->metrics_port = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--delay-ms", &v)) {
      o->delay_ms = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--concurrency", &v)) {
      o->concurrency = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--drain-seconds", &v)) {
      o->drain_seconds = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--load-seconds", &v)) {
      o->load_seconds = std::atoi(v.c_str());
    } else if (Value(argc, argv, &i, "--model", &v) || Value(argc, argv, &i, "--load-model", &v)) {
      o->model = v;
    } else if (Value(argc, argv, &i, "--runtime", &v)) {
      if (!ParseRuntime(v, &o->runtime)) {
        std::fprintf(stderr, "model-server: --runtime: not Custom, vLLM, TGI or Triton\n");
        return false;
      }
    } else if (std::string_view a = argv[i]; a.rfind("--", 0) == 0 && a.find('=') != std::string_view::npos) {
      // another runtime flag (--model-repository=..., --max-model-len=...): accepted, ignored
    } else {
      std::fprintf(stderr,
                   "usage: model-server [--port N] [--delay-ms N] [--concurrency N] [--drain-seconds N] "
                   "[--runtime Custom|vLLM|TGI|Triton] [--load-seconds N] [--metrics-port N] [--model M]\n");
      return false;
    }
  }
  if (o->runtime == Runtime::kTriton && o->metrics_port == 0) o->metrics_port = 8002;
  auto port_ok = [](int p) { return p > 0 && p < 65536; };
  return port_ok(o->port) && (o->metrics_port == 0 || port_ok(o->metrics_port)) && o->delay_ms >= 0 &&
         o->load_seconds >= 0 && o->concurrency >= 0 && o->concurrency <= kMaxConnections && o->drain_seconds >= 0;
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

// Accepts on `lfd`, one thread per connection, until SIGTERM and the drain
// after it are over.
void AcceptLoop(int lfd, const Options& opt, bool metrics_only, Workers& workers) {
  std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
  while (std::chrono::steady_clock::now() < stop_at) {
    if (g_stop != 0 && stop_at == std::chrono::steady_clock::time_point::max())
      stop_at = std::chrono::steady_clock::now() + std::chrono::seconds(opt.drain_seconds);
    pollfd p{lfd, POLLIN, 0};
    if (poll(&p, 1, 500) <= 0) continue;
    int fd = accept(lfd, nullptr, nullptr);
    if (fd < 0) continue;
    if (g_connections.load() >= kMaxConnections) {
      close(fd);
      continue;
    }
    g_connections++;
    std::thread(Serve, fd, std::cref(opt), metrics_only, std::ref(workers)).detach();
  }
  close(lfd);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseOptions(argc, argv, &opt)) return 2;
  g_loaded_at = std::chrono::steady_clock::now() + std::chrono::seconds(opt.load_seconds);
  int lfd = Listen(opt.port);
  if (lfd < 0) return 1;
  int mfd = opt.metrics_port != 0 ? Listen(opt.metrics_port) : -1;
  if (opt.metrics_port != 0 && mfd < 0) return 1;
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  static constexpr const char* kNames[] = {"Custom", "vLLM", "TGI", "Triton"};
  std::printf(
      "{\"msg\":\"serving\",\"port\":%d,\"metricsPort\":%d,\"runtime\":\"%s\",\"loadSeconds\":%d,"
      "\"concurrency\":%d,\"drainSeconds\":%d,%s}\n",
      opt.port, opt.metrics_port, kNames[static_cast<int>(opt.runtime)], opt.load_seconds, opt.concurrency,
      opt.drain_seconds, Identity().c_str());
  std::fflush(stdout);
  Workers workers(opt.concurrency > 0 ? opt.concurrency : kMaxConnections);
  std::thread metrics;
  if (mfd >= 0) metrics = std::thread(AcceptLoop, mfd, std::cref(opt), true, std::ref(workers));
  AcceptLoop(lfd, opt, false, workers);
  if (metrics.joinable()) metrics.join();
  while (g_connections.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::printf("{\"msg\":\"stopped\"}\n");
  return 0;
}
