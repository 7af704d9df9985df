// libFuzzer: the watch-stream decoder (controller/kube/watch_decoder.h) fed
// random bytes in random chunks. Every complete line is an event or an error,
// never both; splitting the stream differently gives the same events.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "controller/kube/watch_decoder.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

struct Decoded {
  std::vector<std::string> events;  // type + object, as text
  size_t errors = 0;
};

Decoded Decode(const std::vector<std::string>& chunks, size_t max_line) {
  Decoded d;
  ms::kube::WatchDecoder decoder(
      [&](const ms::kube::WatchEvent& e) {
        d.events.push_back(e.type + " " + e.object.dump());
        return true;
      },
      [&](const std::string&) { ++d.errors; }, max_line);
  for (const auto& c : chunks) decoder.Feed(c);
  decoder.Finish();
  Check(decoder.events() == d.events.size(), "events() counts the events");
  Check(decoder.errors() == d.errors, "errors() counts the errors");
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const size_t max_line = in.ConsumeIntegralInRange<size_t>(1, 4096);
  std::vector<std::string> chunks;
  std::string whole;
  while (in.remaining_bytes() > 0) {
    chunks.push_back(in.ConsumeRandomLengthString(256));
    whole += chunks.back();
  }
  const Decoded split = Decode(chunks, max_line);
  const Decoded one = Decode({whole}, max_line);
  Check(split.events == one.events, "the same events however the stream is split");
  Check(split.errors == one.errors, "the same errors however the stream is split");
  return 0;
}
