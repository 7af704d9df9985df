#include "shared/transport/worker.h"

#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "shared/transport/http_server.h"
#include "shared/transport/plain_connection.h"
#include "shared/transport/tls_connection.h"

namespace ms::transport {

namespace {

constexpr std::uint64_t kListenTag = ~std::uint64_t{0} - 1;

}  // namespace

struct Worker::Conn {
  Conn(Worker& w, ConnectionTable::SlotPtr slot_, std::unique_ptr<Stream> stream,
       const ServerConnection::Context& context)
      : id(slot_->id),
        slot(std::move(slot_)),
        connection(std::move(stream), context, EventLoop::Now()),
        timer([&w, i = id] { w.OnTimer(i); }),
        interest(connection.Interest()) {}
  std::uint64_t id;               // the epoll tag: never reused, unlike the fd
  ConnectionTable::SlotPtr slot;  // its place in the connection table
  ServerConnection connection;
  EventLoop::Timer timer;   // at the connection's next deadline
  std::uint32_t interest;   // as last given to epoll
  bool handshaking = true;  // as the table last heard
  size_t answered = 0;      // requests answered, as the table last heard
  bool evict = false;       // gave its place away: close once it is owed no answer
};

Worker::Worker(ServerShared& shared, int index)
    : shared_(shared), index_(index), accept_resume_([this] { ResumeAccepting(); }), drain_deadline_([this] {
        while (!conns_.empty()) Close(conns_.begin());
        DrainStep();
      }) {}

Worker::~Worker() {
  while (!conns_.empty()) Close(conns_.begin());
  loop_.Disarm(accept_resume_);
  loop_.Disarm(drain_deadline_);
}

bool Worker::Init(std::string* error) {
  if (!loop_.Init(error)) return false;
  // EPOLLEXCLUSIVE: a new connection wakes one worker, not all.
  if (!loop_.Add(shared_.listener.fd(), EPOLLIN | EPOLLEXCLUSIVE, kListenTag)) {
    *error = std::string("epoll_ctl(listener): ") + std::strerror(errno);
    return false;
  }
  return true;
}

void Worker::Run() {
  if (!loop_.Run([this](std::uint64_t tag, std::uint32_t events) { OnIo(tag, events); }))
    shared_.connections.logger.error("epoll_wait: {}", std::strerror(errno));
}

void Worker::OnIo(std::uint64_t tag, std::uint32_t events) {
  if (tag == kListenTag) {
    if (accepting_) Accept();
    return;
  }
  auto it = conns_.find(tag);
  if (it == conns_.end()) return;
  Drive(it, events);
  if (draining_) DrainStep();
}

// Accepts what is pending and gives each connection to the worker that owns
// the fewest (this one on a tie): with EPOLLEXCLUSIVE one worker is woken
// for a burst of connections, and keeping them all would leave the others
// idle. At a limit of the connection table another connection may give way
// to it (connection_table.h): its owner closes it.
void Worker::Accept() {
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage addr{};
    const int fd = shared_.listener.Accept(&addr);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        PauseAccepting();
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED &&
                 !shared_.stopping.load()) {
        shared_.connections.logger.warn("accept: {}", std::strerror(errno));
      }
      return;
    }
    UniqueFd owned(fd);
    const std::string peer = PeerAddress(addr);
    Worker* target = this;
    for (auto& w : shared_.workers)
      if (w->load() < target->load()) target = w.get();
    auto admission = shared_.table.Admit(peer, target->index_, shared_.next_id.fetch_add(1), EventLoop::Now());
    if (!admission.slot) {
      WarnRefused(peer, admission.why);
      continue;
    }
    if (const auto& victim = admission.victim) {
      WarnEvicted(*victim, peer, admission.why);
      if (victim->worker == index_) {
        EvictNow(victim->id);
      } else {
        shared_.workers[static_cast<size_t>(victim->worker)]->Evict(victim->id);
      }
    }
    ++target->load_;
    if (target == this) {
      Adopt(std::move(owned), std::move(admission.slot));
    } else {
      target->Hand(std::move(owned), std::move(admission.slot));
    }
  }
}

// A connection no other could give way to is closed at once; a flood of
// them is said once per 10 s, with how many.
void Worker::WarnRefused(const std::string& peer, const std::string& why) {
  ++refused_since_warning_;
  const auto now = EventLoop::Now();
  if (now < next_accept_warning_) return;
  next_accept_warning_ = now + std::chrono::seconds(10);
  shared_.connections.logger.warn(
      "refused {} connection(s) (the last from {}: {}, and every connection is owed an answer)", refused_since_warning_,
      peer, why);
  refused_since_warning_ = 0;
}

// Connections closed to make room, said once per 10 s with how many.
void Worker::WarnEvicted(const ConnectionTable::Slot& victim, const std::string& peer, const std::string& why) {
  ++evicted_since_warning_;
  const auto now = EventLoop::Now();
  if (now < next_evict_warning_) return;
  next_evict_warning_ = now + std::chrono::seconds(10);
  shared_.connections.logger.warn(
      "closed {} connection(s) owed no answer to make room for new ones (the last: one of {}, for one from {}: {})",
      evicted_since_warning_, victim.peer, peer, why);
  evicted_since_warning_ = 0;
}

// Out of descriptors or memory: the pending connection stays in the backlog
// and the listener stays readable, so it is not watched for a moment
// instead of spinning on it.
void Worker::PauseAccepting() {
  const auto now = EventLoop::Now();
  const bool warn = now >= next_accept_warning_;  // at most every 10 s
  if (warn) next_accept_warning_ = now + std::chrono::seconds(10);
  shared_.connections.logger.log(warn ? spdlog::level::warn : spdlog::level::debug,
                                 "accept: {}; not accepting for 100ms ({} connections open)", std::strerror(errno),
                                 shared_.table.open());
  loop_.Remove(shared_.listener.fd());
  accepting_ = false;
  loop_.Arm(accept_resume_, now + std::chrono::milliseconds(100));
}

void Worker::ResumeAccepting() {
  if (draining_ || accepting_) return;
  accepting_ = loop_.Add(shared_.listener.fd(), EPOLLIN | EPOLLEXCLUSIVE, kListenTag);
}

void Worker::Hand(UniqueFd fd, ConnectionTable::SlotPtr slot) {
  auto owned = std::make_shared<UniqueFd>(std::move(fd));
  loop_.Post([this, owned, slot = std::move(slot)] { Adopt(std::move(*owned), slot); });
}

void Worker::Evict(std::uint64_t id) {
  loop_.Post([this, id] { EvictNow(id); });
}

void Worker::EndInvalidSessions() {
  loop_.Post([this] {
    for (auto it = conns_.begin(); it != conns_.end();) {
      const bool ended = it->second->connection.EndIfSessionInvalid();
      if (ended && it->second->connection.Idle()) {
        Close(it++);
      } else {
        ++it;
      }
    }
    if (draining_) DrainStep();
  });
}

void Worker::EvictNow(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;  // closed already, or not adopted yet (Adopt sees it)
  if (it->second->connection.phase() == Phase::kOwed) {
    it->second->evict = true;  // Settle() closes it once the answer is sent
  } else {
    Close(it);
  }
}

// Takes an accepted connection (in the connection table and load_
// already) and starts its handshake.
void Worker::Adopt(UniqueFd fd, ConnectionTable::SlotPtr slot) {
  auto forget = [this, &slot] {
    shared_.table.Release(slot);
    --load_;
  };
  // Chosen to give way before it was adopted: it goes at once.
  if (draining_ || shared_.stopping.load() || shared_.table.Evicted(*slot)) return forget();
  const std::string& peer = slot->peer;
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int raw_fd = fd.get();
  std::string error;
  std::unique_ptr<Stream> stream;
  if (shared_.ctx) {
    stream = TlsConnection::Accept(std::move(fd), *shared_.ctx, peer, &error);
  } else {
    stream = std::make_unique<PlainConnection>(std::move(fd), peer);
  }
  if (!stream) {
    shared_.connections.logger.error("{}", error);
    return forget();
  }
  auto c = std::make_unique<Conn>(*this, slot, std::move(stream), shared_.connections);
  if (!loop_.Add(raw_fd, c->interest, c->id)) {
    shared_.connections.logger.error("epoll_ctl(add): {}", std::strerror(errno));
    return forget();
  }
  auto [it, inserted] = conns_.emplace(c->id, std::move(c));
  Drive(it, EPOLLIN);  // the ClientHello may be there already
}

void Worker::Close(Conns::iterator it) {
  Conn& c = *it->second;
  c.connection.Close();
  loop_.Remove(c.connection.fd());
  loop_.Disarm(c.timer);
  shared_.table.Release(c.slot);
  --load_;
  conns_.erase(it);
}

void Worker::Drain() {
  loop_.Post([this] { BeginDrain(); });
}

void Worker::BeginDrain() {
  if (draining_) return;
  draining_ = true;
  if (accepting_) loop_.Remove(shared_.listener.fd());
  accepting_ = false;
  loop_.Disarm(accept_resume_);
  loop_.Arm(drain_deadline_, EventLoop::Now() + shared_.connections.options.limits.read_timeout);
  DrainStep();
}

// Idle connections go now; those in the middle of a request get their answer first.
void Worker::DrainStep() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (it->second->connection.Idle()) {
      Close(it++);
    } else {
      ++it;
    }
  }
  if (conns_.empty()) loop_.Exit();
}

void Worker::Drive(Conns::iterator it, std::uint32_t events) { Settle(it, it->second->connection.OnReady(events)); }

void Worker::OnTimer(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Settle(it, it->second->connection.OnDeadline(EventLoop::Now()));
  if (draining_) DrainStep();
}

void Worker::Settle(Conns::iterator it, ServerConnection::Next next) {
  Conn& c = *it->second;
  if (next == ServerConnection::Next::kClose) {
    Close(it);
    return;
  }
  // What the connection table reads when a new connection needs a place.
  const Phase phase = c.connection.phase();
  if (c.handshaking && phase != Phase::kHandshake) {
    c.handshaking = false;
    shared_.table.HandshakeOver(*c.slot);
  }
  if (c.evict && phase != Phase::kOwed) {
    Close(it);
    return;
  }
  const size_t answered = c.connection.answered();
  if (phase != c.slot->phase.load(std::memory_order_relaxed) || answered != c.answered) {
    c.answered = answered;
    ConnectionTable::Set(*c.slot, phase, EventLoop::Now());
  }
  if (const std::uint32_t interest = c.connection.Interest(); interest != c.interest) {
    c.interest = interest;
    loop_.Modify(c.connection.fd(), interest, c.id);
  }
  if (c.connection.ReadAgain()) loop_.Activate(c.id);
  loop_.Arm(c.timer, c.connection.Deadline());
}

}  // namespace ms::transport
