#include "controller/kube/watch_decoder.h"

#include <utility>

namespace ms::kube {

bool ParseWatchEvent(std::string_view line, WatchEvent& event, std::string& error, const KeptAnnotations* annotations) {
  auto parsed = ParseApiJson(line, annotations);
  if (parsed.is_discarded()) {
    error = "malformed watch event: not JSON";
    return false;
  }
  if (!parsed.is_object()) {
    error = "malformed watch event: not an object";
    return false;
  }
  auto type = parsed.find("type");
  if (type == parsed.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    error = "malformed watch event: no type";
    return false;
  }
  auto object = parsed.find("object");
  if (object == parsed.end() || !object->is_object()) {
    error = "malformed watch event: no object";
    return false;
  }
  event.type = type->get<std::string>();
  event.object = std::move(*object);
  return true;
}

WatchDecoder::WatchDecoder(EventFn on_event, ErrorFn on_error, size_t max_line, const KeptAnnotations* annotations)
    : on_event_(std::move(on_event)), on_error_(std::move(on_error)), max_line_(max_line), annotations_(annotations) {}

void WatchDecoder::Error(const std::string& message) {
  ++errors_;
  if (on_error_) on_error_(message);
}

void WatchDecoder::Line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  WatchEvent event;
  std::string error;
  if (!ParseWatchEvent(line, event, error, annotations_)) {
    Error(error);
    return;
  }
  ++events_;
  if (!on_event_(event)) stopped_ = true;
}

bool WatchDecoder::Feed(std::string_view chunk) {
  while (!chunk.empty() && !stopped_) {
    const auto nl = chunk.find('\n');
    const std::string_view part = chunk.substr(0, nl);
    if (discarding_) {
      if (nl != std::string_view::npos) discarding_ = false;
    } else if (buffer_.size() + part.size() > max_line_) {
      Error("watch event line longer than " + std::to_string(max_line_) + " bytes");
      buffer_.clear();
      discarding_ = nl == std::string_view::npos;
    } else if (nl == std::string_view::npos) {
      buffer_.append(part);
    } else if (buffer_.empty()) {
      Line(part);  // the common case: a whole line in one chunk, no copy
    } else {
      buffer_.append(part);
      std::string line = std::move(buffer_);
      buffer_.clear();
      Line(line);
    }
    if (nl == std::string_view::npos) break;
    chunk.remove_prefix(nl + 1);
  }
  return !stopped_;
}

bool WatchDecoder::Finish() {
  if (!stopped_ && !discarding_ && !buffer_.empty()) {
    std::string line = std::move(buffer_);
    buffer_.clear();
    Line(line);
  }
  buffer_.clear();
  discarding_ = false;
  return !stopped_;
}

}  // namespace ms::kube
