#include "shared/transport/server_connection.h"

#include <spdlog/logger.h>
#include <sys/epoll.h>

#include <algorithm>

#include "shared/transport/http_server.h"

namespace ms::transport {

using Io = Stream::Io;

ServerConnection::ServerConnection(std::unique_ptr<Stream> stream, const Context& context, TimePoint now)
    : context_(context), stream_(std::move(stream)), deadline_(now + context.options.handshake_timeout) {}

bool ServerConnection::Idle() const { return lingering_ || (http_ && http_->idle() && http_->output().empty()); }

bool ServerConnection::EndIfSessionInvalid() {
  if (!http_ || lingering_ || stream_->SessionValid()) return false;
  http_->CloseAfterNextAnswer();
  return true;
}

Phase ServerConnection::phase() const {
  if (lingering_) return Phase::kClosing;
  if (!http_) return Phase::kHandshake;
  if (!http_->output().empty() || blocked()) return Phase::kOwed;
  if (http_->answered() == 0) return Phase::kFresh;
  return http_->idle() ? Phase::kIdle : Phase::kReceiving;
}

void ServerConnection::Close() {
  if (http_ && !lingering_) stream_->SendCloseNotify();
}

ServerConnection::TimePoint ServerConnection::Deadline() const {
  if (lingering_ || !http_) return deadline_;
  if (blocked()) return std::min(write_blocked_since_ + context_.options.limits.read_timeout, http_->deadline());
  return http_->deadline();
}

// Reading stops while an answer waits to be sent and the connection is
// closing, or too much output is queued (a client that sends without
// reading); EPOLLOUT then says when to go on.
std::uint32_t ServerConnection::Interest() const {
  if (lingering_) return EPOLLET | EPOLLIN | EPOLLRDHUP;
  const bool want_read = !http_ || write_wants_read_ || (!blocked() && !http_->closing() && MayRead());
  return EPOLLET | (want_read ? EPOLLIN | EPOLLRDHUP : 0u) | (want_write_ || !want_read ? EPOLLOUT : 0u);
}

bool ServerConnection::Handshake() {
  switch (stream_->Handshake()) {
    case Io::kDone:
      http_ = std::make_unique<Connection>(context_.options.limits, context_.handler, context_.on_refusal,
                                           stream_->remote(), std::chrono::steady_clock::now(), context_.clock,
                                           context_.bodies);
      return true;
    case Io::kWantRead:
      want_write_ = false;
      return false;
    case Io::kWantWrite:
      want_write_ = true;
      return false;
    case Io::kClosed:
    case Io::kFailed:
      break;
  }
  if (stream_->plain_http()) {
    context_.logger.debug("plain HTTP request from {} to the HTTPS port", stream_->remote());
  } else {
    context_.logger.debug("TLS handshake with {} failed: {}", stream_->remote(), stream_->failure());
  }
  closed_ = true;
  return false;
}

ServerConnection::Next ServerConnection::OnReady(std::uint32_t events) {
  // The peer has half-closed: its end of stream comes after what a short
  // read returns, and no edge will report it; read on until it is read.
  if ((events & EPOLLRDHUP) != 0) peer_shut_ = true;
  read_again_ = false;
  if (lingering_) return stream_->Linger(linger_budget_) ? Next::kKeep : Next::kClose;
  if (!http_ && !Handshake()) return closed_ ? Next::kClose : Next::kKeep;
  // A session past its age or of client CAs no longer current answers
  // what it sends now and closes (tls_sessions.h).
  if (http_->idle() && !stream_->SessionValid()) http_->CloseAfterNextAnswer();
  want_write_ = false;
  const bool hung_up = (events & (EPOLLHUP | EPOLLERR)) != 0;
  if (blocked()) {
    // An answer is waiting to go out: nothing more is read until it has
    // (SSL_write must be retried with the same bytes, and this is the
    // backpressure on a client that sends without reading).
    if (!Flush() || hung_up) return Next::kClose;
    if (blocked()) return Next::kKeep;
  }
  // Read until the socket is drained (epoll is edge-triggered: it reports
  // only bytes that come after), answering complete requests as they come.
  // Reading stops at max_queued_output of answers until they are sent, and
  // after options.reads_per_turn reads: then the worker drives this
  // connection again after the others (ReadAgain), so that a client that
  // never stops sending cannot hold the loop.
  bool failed = false;
  int reads_left = std::max(1, context_.options.reads_per_turn);
  for (;;) {
    const bool drained = Read(&failed, reads_left);
    if (hung_up) failed = true;
    // Answers already made are sent even when the peer has stopped sending.
    if (!Flush()) failed = true;
    if (drained || failed || blocked() || http_->closing()) break;
    if (reads_left == 0) {
      read_again_ = true;
      break;
    }
  }
  return AfterTurn(failed);
}

ServerConnection::Next ServerConnection::AfterTurn(bool failed) {
  if (failed) return Next::kClose;
  if (http_->closing() && http_->output().empty()) {
    StartLinger();
    // What the client sent and was not read is in the socket already, and
    // no edge will report it: the linger starts reading at once.
    read_again_ = true;
  }
  return Next::kKeep;
}

// Feeds what the TLS connection gives to the HTTP connection, until the
// socket is drained, max_queued_output of answers wait, or `reads_left`
// reads are spent. True when the socket must be read again first (or the
// stream ended or broke: `failed`).
bool ServerConnection::Read(bool* failed, int& reads_left) {
  char buf[16 * 1024];
  while (!http_->closing() && MayRead() && reads_left > 0) {
    --reads_left;
    size_t n = 0;
    switch (stream_->Read(buf, sizeof buf, &n)) {
      case Io::kDone:
        http_->OnData(std::string_view(buf, n), std::chrono::steady_clock::now());
        // The socket came back short and nothing is read ahead: epoll
        // reports what comes next, so reading on would only cost a read()
        // that says EAGAIN (one system call of three per request).
        if (stream_->Drained() && !stream_->HasPending() && !peer_shut_) return true;
        continue;
      case Io::kWantWrite:
        want_write_ = true;
        return true;
      case Io::kWantRead:
        return true;
      case Io::kClosed:
        http_->OnPeerClosed();
        return true;
      case Io::kFailed:
        *failed = true;  // reset, truncated stream or protocol error
        return true;
    }
  }
  return false;
}

// Whether to read further requests: not beyond max_queued_output of answers
// waiting, nor while one waits and the budget of bodies and answers is
// full (a client that sends without reading holds no more of it).
bool ServerConnection::MayRead() const {
  const size_t queued = http_->output().size();
  if (queued == 0) return true;
  if (queued >= context_.options.max_queued_output) return false;
  return !context_.bodies || !context_.bodies->Full(stream_->remote());
}

// Sends what the HTTP connection has to say. False when the connection broke.
bool ServerConnection::Flush() {
  const Io io = stream_->Write(http_->output());
  if (io == Io::kDone) {
    write_blocked_since_ = {};
    write_wants_read_ = false;
    http_->ReleaseBuffers();
    return true;
  }
  if (io != Io::kWantWrite && io != Io::kWantRead) return false;
  want_write_ = io == Io::kWantWrite;
  write_wants_read_ = io == Io::kWantRead;
  if (!blocked()) write_blocked_since_ = std::chrono::steady_clock::now();
  return true;
}

void ServerConnection::StartLinger() {
  stream_->HalfClose();
  lingering_ = true;
  linger_budget_ = context_.options.limits.max_body_bytes + (1u << 20);
  deadline_ = std::chrono::steady_clock::now() + std::min<std::chrono::steady_clock::duration>(
                                                     context_.options.limits.read_timeout, std::chrono::seconds(2));
}

ServerConnection::Next ServerConnection::OnDeadline(TimePoint now) {
  read_again_ = false;
  if (lingering_) return now >= deadline_ ? Next::kClose : Next::kKeep;
  if (!http_) {
    if (now < deadline_) return Next::kKeep;
    context_.logger.debug("TLS handshake with {} not finished within {}ms", stream_->remote(),
                          context_.options.handshake_timeout.count());
    return Next::kClose;
  }
  if (blocked() && now >= write_blocked_since_ + context_.options.limits.read_timeout) {
    context_.logger.debug("{} did not read its answer within the read timeout", stream_->remote());
    return Next::kClose;
  }
  if (now < http_->deadline()) return Next::kKeep;
  const bool was_idle = http_->idle();
  http_->OnTimer(now);
  want_write_ = false;
  if (!Flush()) return Next::kClose;
  // An idle connection that timed out has nothing to linger for; after a 408 it lingers.
  if (http_->closing() && http_->output().empty() && was_idle) return Next::kClose;
  return AfterTurn(false);
}

}  // namespace ms::transport
