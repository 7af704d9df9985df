// gzip content coding of an answer (RFC 9110 §8.4.1.3), for /metrics: the
// exposition of 10,000 ModelServices is about 8 MB of text, which
// Prometheus asks for compressed (Accept-Encoding: gzip); written through a
// GzipWriter it is compressed as it is produced, so that the answer never
// holds the whole text, only its compressed form (about a tenth).
#pragma once

#include <zlib.h>

#include <array>
#include <functional>
#include <iosfwd>
#include <streambuf>
#include <string>
#include <string_view>

namespace ms::transport {

// Whether an Accept-Encoding value accepts gzip: "gzip" (or "x-gzip") among
// its comma-separated codings without a weight of 0, or, when neither is
// named, "*" without one. Any case; null (no header) does not.
bool AcceptsGzip(const std::string* accept_encoding);

// A stream buffer whose bytes are compressed into a gzip member: write the
// text through an std::ostream on it, then Finish() for the member.
class GzipWriter : public std::streambuf {
 public:
  // zlib's level 1: a scrape's text is repetitive enough that the fastest
  // level already takes it to about a tenth.
  explicit GzipWriter(int level = Z_BEST_SPEED);
  ~GzipWriter() override;
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // The whole member (header, compressed text, trailer); the writer is done.
  std::string Finish();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  // Compresses what the buffer holds (with `flush`: Z_NO_FLUSH or Z_FINISH).
  void Deflate(int flush);

  z_stream z_{};
  std::array<char, 64 * 1024> in_{};
  std::string out_;
  bool done_ = false;
};

// The gzip member of what `write` writes to the stream it is given,
// compressed as it is written.
std::string Gzipped(const std::function<void(std::ostream&)>& write);

}  // namespace ms::transport
