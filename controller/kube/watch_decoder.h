// Splits a watch stream (newline-delimited JSON watch events) into
// WatchEvents. Chunks may split a line or hold several; blank lines are
// skipped; a malformed or oversized line is reported and skipped.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "controller/kube/api_json.h"
#include "controller/kube/client.h"

namespace ms::kube {

class WatchDecoder {
 public:
  // Returns false to stop decoding (further input is ignored).
  using EventFn = std::function<bool(const WatchEvent&)>;
  using ErrorFn = std::function<void(const std::string& message)>;

  static constexpr size_t kDefaultMaxLine = 16u << 20;  // 16 MiB

  // `annotations`: what is kept of each object's annotations (null: all); it
  // must outlive the decoder.
  explicit WatchDecoder(EventFn on_event, ErrorFn on_error = {}, size_t max_line = kDefaultMaxLine,
                        const KeptAnnotations* annotations = nullptr);

  // Feeds bytes. Returns false once on_event has returned false.
  bool Feed(std::string_view chunk);
  // Ends the stream: a final line without '\n' is decoded too.
  bool Finish();

  size_t events() const { return events_; }
  size_t errors() const { return errors_; }
  bool stopped() const { return stopped_; }

 private:
  void Line(std::string_view line);
  void Error(const std::string& message);

  EventFn on_event_;
  ErrorFn on_error_;
  size_t max_line_;
  const KeptAnnotations* annotations_;
  std::string buffer_;
  bool discarding_ = false;  // inside an oversized line: drop bytes until '\n'
  bool stopped_ = false;
  size_t events_ = 0;
  size_t errors_ = 0;
};

// Parses one watch event line ({"type":..,"object":{..}}) with ParseApiJson
// (api_json.h: no managedFields; with `annotations`, only those of the
// object's annotations). Returns false and sets `error` when the line is
// not a valid event.
bool ParseWatchEvent(std::string_view line, WatchEvent& event, std::string& error,
                     const KeptAnnotations* annotations = nullptr);

}  // namespace ms::kube
