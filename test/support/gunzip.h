// The text of one gzip member, read with zlib as a client would; throws
// when the bytes are not exactly one whole member.
#pragma once

#include <zlib.h>

#include <stdexcept>
#include <string>

namespace ms {

inline std::string Gunzip(const std::string& member) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(member.data()));
  z.avail_in = static_cast<uInt>(member.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[16384];
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!whole) throw std::runtime_error("not one whole gzip member");
  return out;
}

}  // namespace ms
