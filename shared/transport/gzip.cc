#include "shared/transport/gzip.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "shared/text/strings.h"
#include "shared/transport/http1_text.h"

namespace ms::transport {

namespace {

// A weight of 0 ("q=0", "q=0.0", "q=0.000"; `params` in lower case): the
// coding is refused.
bool ZeroWeight(std::string_view params) {
  while (!params.empty()) {
    const auto semi = params.find(';');
    std::string_view p = text::Trim(params.substr(0, semi), kOws);
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (p.size() < 2 || p[0] != 'q' || p[1] != '=') continue;
    p.remove_prefix(2);
    if (p.empty() || p[0] != '0') return false;
    p.remove_prefix(1);
    if (!p.empty() && p[0] == '.') p.remove_prefix(1);
    return std::all_of(p.begin(), p.end(), [](char c) { return c == '0'; });
  }
  return false;
}

}  // namespace

bool AcceptsGzip(const std::string* accept_encoding) {
  if (accept_encoding == nullptr) return false;
  // gzip's own weight when it is named; else that of "*" (RFC 9110 §12.5.3).
  std::optional<bool> named, any;
  const std::string lower = Lower(*accept_encoding);
  std::string_view rest = lower;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto semi = item.find(';');
    const std::string_view coding = text::Trim(item.substr(0, semi), kOws);
    const bool accepted = !ZeroWeight(semi == std::string_view::npos ? std::string_view() : item.substr(semi + 1));
    if (coding == "gzip" || coding == "x-gzip")
      named = named.value_or(false) || accepted;
    else if (coding == "*")
      any = any.value_or(false) || accepted;
  }
  return named.value_or(any.value_or(false));
}

GzipWriter::GzipWriter(int level) {
  // 15 + 16: the largest window, with a gzip header and trailer.
  if (deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  setp(in_.data(), in_.data() + in_.size());
}

GzipWriter::~GzipWriter() { deflateEnd(&z_); }

void GzipWriter::Deflate(int flush) {
  z_.next_in = reinterpret_cast<Bytef*>(pbase());
  z_.avail_in = static_cast<uInt>(pptr() - pbase());
  int rc = Z_OK;
  do {
    // Room for what deflate may write now (it says how much at most).
    const std::size_t room = std::max<std::size_t>(deflateBound(&z_, z_.avail_in), 4096);
    const std::size_t used = out_.size();
    out_.resize(used + room);
    z_.next_out = reinterpret_cast<Bytef*>(out_.data() + used);
    z_.avail_out = static_cast<uInt>(room);
    rc = deflate(&z_, flush);
    out_.resize(used + room - z_.avail_out);
    if (rc == Z_STREAM_ERROR) throw std::runtime_error("gzip: deflate failed");
  } while (z_.avail_in > 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  setp(in_.data(), in_.data() + in_.size());
}

GzipWriter::int_type GzipWriter::overflow(int_type c) {
  if (done_) return traits_type::eof();
  Deflate(Z_NO_FLUSH);
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize GzipWriter::xsputn(const char* s, std::streamsize n) {
  if (done_) return 0;
  std::streamsize left = n;
  while (left > 0) {
    if (pptr() == epptr()) Deflate(Z_NO_FLUSH);
    const auto take = std::min<std::streamsize>(left, epptr() - pptr());
    std::memcpy(pptr(), s, static_cast<std::size_t>(take));
    pbump(static_cast<int>(take));
    s += take;
    left -= take;
  }
  return n;
}

std::string GzipWriter::Finish() {
  if (!done_) {
    Deflate(Z_FINISH);
    done_ = true;
  }
  return std::move(out_);
}

std::string Gzipped(const std::function<void(std::ostream&)>& write) {
  GzipWriter gzip;
  std::ostream out(&gzip);
  write(out);
  return gzip.Finish();
}

}  // namespace ms::transport
