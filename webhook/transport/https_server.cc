#include "webhook/transport/https_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace ms::http {

namespace {

using Clock = std::chrono::steady_clock;

// Closes a file descriptor when it goes out of scope.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct SslDeleter {
  void operator()(SSL* s) const { SSL_free(s); }
};

std::string PeerAddress(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, buf, sizeof buf);
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, buf, sizeof buf);
  }
  return buf;
}

std::string OpenSslError() {
  const unsigned long e = ERR_peek_last_error();
  if (e == 0) return std::strerror(errno);
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

constexpr std::string_view kPlainHttpAnswer =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    "Client sent an HTTP request to an HTTPS server.\n";

}  // namespace

// One event loop and the connections it owns. Only its thread touches them.
class HttpsServer::Loop {
 public:
  Loop(HttpsServer& server) : server_(server) {}

  bool Init(std::string* error) {
    epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    wake_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (epoll_.get() < 0 || wake_.get() < 0) {
      *error = std::string("epoll/eventfd: ") + std::strerror(errno);
      return false;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeTag;
    epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev);
    if (!WatchListener()) {
      *error = std::string("epoll_ctl(listener): ") + std::strerror(errno);
      return false;
    }
    return true;
  }

  void Wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
  }

  void Run() {
    std::array<epoll_event, 64> events;
    Clock::time_point next_sweep = Clock::now();
    Clock::time_point drain_deadline{};
    bool draining = false;
    for (;;) {
      if (server_.stopping_.load(std::memory_order_acquire) && !draining) {
        draining = true;
        drain_deadline = Clock::now() + server_.options_.limits.read_timeout;
        epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, server_.listen_fd_, nullptr);
      }
      if (draining) {
        AdoptInbox();  // closes connections handed over meanwhile
        // Idle connections go now; those in the middle of a request get
        // their answer first.
        for (auto it = conns_.begin(); it != conns_.end();) {
          Conn& c = *it->second;
          const bool idle = c.lingering || (c.http && c.http->idle() && c.http->output().empty());
          if (idle || Clock::now() >= drain_deadline) {
            it = Close(it);
          } else {
            ++it;
          }
        }
        if (conns_.empty()) return;
      }
      const int timeout_ms = conns_.empty() && accept_paused_until_ == Clock::time_point{} ? 1000 : 100;
      const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
      if (n < 0 && errno != EINTR) {
        server_.logger_->error("epoll_wait: {}", std::strerror(errno));
        return;
      }
      for (int i = 0; i < n; ++i) {
        const std::uint64_t tag = events[static_cast<size_t>(i)].data.u64;
        if (tag == kWakeTag) {
          std::uint64_t v;
          [[maybe_unused]] auto r = ::read(wake_.get(), &v, sizeof v);
          AdoptInbox();
        } else if (tag == kListenTag) {
          if (!draining) Accept();
        } else {
          auto it = conns_.find(tag);
          if (it != conns_.end()) Drive(it, events[static_cast<size_t>(i)].events);
        }
      }
      const auto now = Clock::now();
      if (now >= next_sweep) {
        next_sweep = now + std::chrono::milliseconds(100);
        Sweep(now);
        ResumeAcceptingIfDue(now);
      }
    }
  }

 private:
  static constexpr std::uint64_t kWakeTag = ~std::uint64_t{0};
  static constexpr std::uint64_t kListenTag = ~std::uint64_t{0} - 1;

  struct Conn {
    UniqueFd fd;
    std::unique_ptr<SSL, SslDeleter> ssl;
    std::unique_ptr<Connection> http;  // once the handshake is done
    std::string remote;
    bool lingering = false;  // answered and shut for writing; reading what the client still sends
    size_t linger_budget = 0;
    std::uint32_t interest = 0;
    Clock::time_point deadline;  // of the handshake, then of the linger
    Clock::time_point write_blocked_since{};
    bool write_wants_read = false;  // SSL_write needs to read first (a TLS 1.3 key update)
    std::uint64_t id = 0;           // the epoll tag: never reused, unlike the fd
  };
  using Conns = std::unordered_map<std::uint64_t, std::unique_ptr<Conn>>;

  // Accepts what is pending and gives each connection to the loop that owns
  // the fewest (this one on a tie): with EPOLLEXCLUSIVE one loop is woken for
  // a burst of connections, and keeping them all would leave the others idle.
  void Accept() {
    for (int i = 0; i < 64; ++i) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = accept4(server_.listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors or memory: the pending connection stays in the
          // backlog and the listener stays readable, so stop watching it for
          // a moment instead of spinning on it.
          PauseAccepting();
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED &&
                   !server_.stopping_.load()) {
          server_.logger_->warn("accept: {}", std::strerror(errno));
        }
        return;
      }
      UniqueFd owned(fd);
      if (server_.open_connections_.load() >= server_.options_.max_connections) {
        server_.logger_->warn("refused a connection from {}: {} connections are open", PeerAddress(addr),
                              server_.open_connections_.load());
        continue;
      }
      ++server_.open_connections_;
      Loop* target = this;
      for (auto& loop : server_.loops_)
        if (loop->load_.load() < target->load_.load()) target = loop.get();
      ++target->load_;
      if (target == this) {
        Adopt(std::move(owned), addr);
      } else {
        {
          std::lock_guard lock(target->inbox_mu_);
          target->inbox_.push_back({std::move(owned), addr});
        }
        target->Wake();
      }
    }
  }

  void PauseAccepting() {
    const auto now = Clock::now();
    if (now >= next_accept_warning_) {
      server_.logger_->warn("accept: {}; not accepting for 100ms ({} connections open)", std::strerror(errno),
                            server_.open_connections_.load());
      next_accept_warning_ = now + std::chrono::seconds(10);
    }
    epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, server_.listen_fd_, nullptr);
    accept_paused_until_ = now + std::chrono::milliseconds(100);
  }

  void ResumeAcceptingIfDue(Clock::time_point now) {
    if (accept_paused_until_ == Clock::time_point{} || now < accept_paused_until_ || server_.stopping_.load()) return;
    accept_paused_until_ = {};
    WatchListener();
  }

  // EPOLLEXCLUSIVE: a new connection wakes one loop, not all.
  bool WatchListener() {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.u64 = kListenTag;
    return epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, server_.listen_fd_, &ev) == 0;
  }

  // Connections other loops accepted for this one.
  void AdoptInbox() {
    std::vector<Handed> handed;
    {
      std::lock_guard lock(inbox_mu_);
      handed.swap(inbox_);
    }
    for (auto& h : handed) Adopt(std::move(h.fd), h.addr);
  }

  // Takes ownership of an accepted connection (counted in open_connections_
  // and load_ already) and starts its handshake.
  void Adopt(UniqueFd owned, const sockaddr_storage& addr) {
    const int fd = owned.get();
    auto forget = [this] {
      --server_.open_connections_;
      --load_;
    };
    if (server_.stopping_.load()) {
      forget();
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->ssl.reset(SSL_new(&server_.ctx_));
    if (!c->ssl || SSL_set_fd(c->ssl.get(), fd) != 1) {
      server_.logger_->error("SSL_new: {}", OpenSslError());
      ERR_clear_error();
      forget();
      return;
    }
    SSL_set_accept_state(c->ssl.get());
    c->remote = PeerAddress(addr);
    c->deadline = Clock::now() + server_.options_.limits.read_timeout;
    c->fd = std::move(owned);
    c->interest = EPOLLIN | EPOLLRDHUP;
    epoll_event ev{};
    ev.events = c->interest;
    c->id = next_id_++;
    ev.data.u64 = c->id;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      server_.logger_->error("epoll_ctl(add): {}", std::strerror(errno));
      forget();
      return;
    }
    const std::uint64_t id = c->id;
    auto [it, inserted] = conns_.emplace(id, std::move(c));
    Drive(it, EPOLLIN);  // the ClientHello may be there already
  }

  Conns::iterator Close(Conns::iterator it) {
    Conn& c = *it->second;
    if (c.http && !c.lingering) {
      ERR_clear_error();
      SSL_shutdown(c.ssl.get());  // close_notify, best effort
    }
    epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    --server_.open_connections_;
    --load_;
    ERR_clear_error();
    return conns_.erase(it);
  }

  // Reading stops while an answer waits to be sent and the connection is
  // closing, or too much output is queued (a client that sends without
  // reading); level-triggered EPOLLIN would otherwise spin.
  void SetInterest(Conn& c, bool want_write) {
    const bool blocked = c.write_blocked_since != Clock::time_point{};
    const bool want_read =
        !c.http || c.write_wants_read ||
        (!blocked && !c.http->closing() && c.http->output().size() < server_.options_.max_queued_output);
    Watch(c, (want_read ? EPOLLIN | EPOLLRDHUP : 0u) | (want_write || !want_read ? EPOLLOUT : 0u));
  }

  void Watch(Conn& c, std::uint32_t interest) {
    if (interest == c.interest) return;
    c.interest = interest;
    epoll_event ev{};
    ev.events = interest;
    ev.data.u64 = c.id;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
  }

  bool Handshake(Conns::iterator it) {
    Conn& c = *it->second;
    ERR_clear_error();
    const int r = SSL_do_handshake(c.ssl.get());
    if (r == 1) {
      c.http = std::make_unique<Connection>(server_.options_.limits, server_.handler_, server_.on_refusal_, c.remote,
                                            Clock::now(), server_.clock_);
      return true;
    }
    const int err = SSL_get_error(c.ssl.get(), r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      SetInterest(c, err == SSL_ERROR_WANT_WRITE);
      return false;
    }
    const unsigned long e = ERR_peek_error();
    if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
      [[maybe_unused]] auto n =
          ::send(c.fd.get(), kPlainHttpAnswer.data(), kPlainHttpAnswer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      server_.logger_->debug("plain HTTP request from {} to the HTTPS port", c.remote);
    } else {
      server_.logger_->debug("TLS handshake with {} failed: {}", c.remote, OpenSslError());
    }
    Close(it);
    return false;
  }

  // After the last answer on a connection the server closes (a refusal, or
  // Connection: close): close_notify and a TCP half-close, then what the
  // client still sends (the rest of a refused body) is read and dropped for
  // a while. Closing with unread data would reset the connection, and the
  // client could lose the answer before reading it.
  void StartLinger(Conn& c) {
    ERR_clear_error();
    SSL_shutdown(c.ssl.get());
    ::shutdown(c.fd.get(), SHUT_WR);
    c.lingering = true;
    c.linger_budget = server_.options_.limits.max_body_bytes + (1u << 20);
    c.deadline =
        Clock::now() + std::min<Clock::duration>(server_.options_.limits.read_timeout, std::chrono::seconds(2));
    Watch(c, EPOLLIN | EPOLLRDHUP);
  }

  void Linger(Conns::iterator it) {
    Conn& c = *it->second;
    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0 && static_cast<size_t>(n) < c.linger_budget) {
        c.linger_budget -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      Close(it);  // end of stream, error, or enough read
      return;
    }
  }

  void Drive(Conns::iterator it, std::uint32_t events) {
    Conn& c = *it->second;
    if (c.lingering) {
      Linger(it);
      return;
    }
    if (!c.http && !Handshake(it)) return;
    Connection& http = *c.http;
    bool want_write = false;
    bool failed = false;
    if (c.write_blocked_since != Clock::time_point{}) {
      // An answer is waiting to go out: nothing more is read until it has
      // (SSL_write must be retried with the same bytes, and this is the
      // backpressure on a client that sends without reading).
      if (!Flush(c, &want_write) || (events & (EPOLLHUP | EPOLLERR))) {
        Close(it);
        return;
      }
      if (c.write_blocked_since != Clock::time_point{}) {
        SetInterest(c, want_write);
        return;
      }
    }
    // Read what there is (OpenSSL reads ahead, so this is usually one
    // system call), answering complete requests as they come. Reading stops
    // at max_queued_output of answers; once they are sent, what OpenSSL has
    // already read from the socket (SSL_has_pending) is read on: epoll will
    // not report it again.
    for (;;) {
      const bool drained = Read(c, &want_write, &failed);
      if (events & (EPOLLHUP | EPOLLERR)) failed = true;
      // Answers already made are sent even when the peer has stopped sending.
      if (!Flush(c, &want_write)) failed = true;
      if (drained || failed || c.write_blocked_since != Clock::time_point{} || http.closing() ||
          http.output().size() >= server_.options_.max_queued_output || !SSL_has_pending(c.ssl.get()))
        break;
    }
    if (failed) {
      Close(it);
      return;
    }
    if (http.closing() && http.output().empty()) {
      StartLinger(c);
      return;
    }
    SetInterest(c, want_write);
  }

  // Feeds what SSL_read gives to the HTTP connection, until it has
  // max_queued_output of answers waiting or stops reading. True when
  // SSL_read wants more from the socket (or the stream ended or broke:
  // `failed`).
  bool Read(Conn& c, bool* want_write, bool* failed) {
    Connection& http = *c.http;
    char buf[16 * 1024];
    while (!http.closing() && http.output().size() < server_.options_.max_queued_output) {
      ERR_clear_error();
      const int n = SSL_read(c.ssl.get(), buf, sizeof buf);
      if (n > 0) {
        http.OnData(std::string_view(buf, static_cast<size_t>(n)), Clock::now());
        continue;
      }
      const int err = SSL_get_error(c.ssl.get(), n);
      if (err == SSL_ERROR_WANT_WRITE) {
        *want_write = true;
      } else if (err == SSL_ERROR_ZERO_RETURN) {
        http.OnPeerClosed();
      } else if (err != SSL_ERROR_WANT_READ) {
        *failed = true;  // reset, truncated stream or protocol error
      }
      return true;
    }
    return false;
  }

  // Sends what the connection has to say. False when the connection broke.
  bool Flush(Conn& c, bool* want_write) {
    std::string& out = c.http->output();
    while (!out.empty()) {
      ERR_clear_error();
      const int n = SSL_write(c.ssl.get(), out.data(), static_cast<int>(std::min<size_t>(out.size(), INT_MAX)));
      if (n > 0) {
        out.erase(0, static_cast<size_t>(n));
        continue;
      }
      const int err = SSL_get_error(c.ssl.get(), n);
      if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
        *want_write = err == SSL_ERROR_WANT_WRITE;
        c.write_wants_read = err == SSL_ERROR_WANT_READ;
        if (c.write_blocked_since == Clock::time_point{}) c.write_blocked_since = Clock::now();
        return true;
      }
      return false;
    }
    c.write_blocked_since = {};
    c.write_wants_read = false;
    return true;
  }

  void Sweep(Clock::time_point now) {
    const auto timeout = server_.options_.limits.read_timeout;
    for (auto it = conns_.begin(); it != conns_.end();) {
      Conn& c = *it->second;
      if (c.lingering) {
        if (now >= c.deadline) {
          it = Close(it);
          continue;
        }
      } else if (!c.http) {
        if (now >= c.deadline) {
          server_.logger_->debug("TLS handshake with {} not finished within the read timeout", c.remote);
          it = Close(it);
          continue;
        }
      } else if (c.write_blocked_since != Clock::time_point{} && now >= c.write_blocked_since + timeout) {
        server_.logger_->debug("{} did not read its answer within the read timeout", c.remote);
        it = Close(it);
        continue;
      } else if (now >= c.http->deadline()) {
        const bool was_idle = c.http->idle();
        c.http->OnTimer(now);
        bool want_write = false;
        if (!Flush(c, &want_write) || (c.http->closing() && c.http->output().empty() && was_idle)) {
          it = Close(it);  // an idle connection timed out: nothing to linger for
          continue;
        }
        if (c.http->closing() && c.http->output().empty()) {
          StartLinger(c);  // after a 408
        } else {
          SetInterest(c, want_write);
        }
      }
      ++it;
    }
  }

  struct Handed {
    UniqueFd fd;
    sockaddr_storage addr;
  };

  HttpsServer& server_;
  UniqueFd epoll_;
  UniqueFd wake_;
  Conns conns_;
  std::atomic<size_t> load_{0};  // connections owned or handed to this loop
  std::uint64_t next_id_ = 1;
  Clock::time_point accept_paused_until_{};
  Clock::time_point next_accept_warning_{};
  std::mutex inbox_mu_;
  std::vector<Handed> inbox_;  // guarded by inbox_mu_
};

HttpsServer::HttpsServer(HttpsServerOptions options, SSL_CTX& ctx, Connection::Handler handler,
                         Connection::RefusalHook on_refusal, std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      ctx_(ctx),
      handler_(std::move(handler)),
      on_refusal_(std::move(on_refusal)),
      logger_(std::move(logger)) {}

HttpsServer::~HttpsServer() { Stop(); }

bool HttpsServer::Start(std::string* error) {
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    return false;
  };
  // One TLS record per answer needs partial writes off; reading ahead saves
  // a system call per record.
  SSL_CTX_set_mode(&ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_read_ahead(&ctx_, 1);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  const int rc = getaddrinfo(options_.host.empty() ? nullptr : options_.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) return fail("cannot resolve " + options_.host + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addrs(found, freeaddrinfo);
  std::string last_error = "no address";
  for (addrinfo* a = addrs.get(); a; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
      listen_fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  if (listen_fd_ < 0)
    return fail("cannot listen on " + (options_.host.empty() ? std::string("*") : options_.host) + ":" + port + ": " +
                last_error);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);

  const int threads = std::max(1, options_.threads);
  for (int i = 0; i < threads; ++i) {
    auto loop = std::make_unique<Loop>(*this);
    std::string loop_error;
    if (!loop->Init(&loop_error)) {
      loops_.clear();
      return fail(loop_error);
    }
    loops_.push_back(std::move(loop));
  }
  for (auto& loop : loops_) threads_.emplace_back([l = loop.get()] { l->Run(); });
  return true;
}

void HttpsServer::Stop() {
  if (threads_.empty() && listen_fd_ < 0) return;
  stopping_.store(true, std::memory_order_release);
  // Stop listening at once: new connections are refused, not left queued
  // until the loops finish draining.
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  for (auto& loop : loops_) loop->Wake();
  for (auto& t : threads_) t.join();
  threads_.clear();
  loops_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

}  // namespace ms::http
