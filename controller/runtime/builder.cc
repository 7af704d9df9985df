#include "controller/runtime/builder.h"

#include "controller/kube/paths.h"

namespace ms::runtime {

using nlohmann::json;

Builder& Builder::For(EventSource& source) {
  watches_.push_back({&source, [](const json& object) { return kube::ObjectKey(object); }, {}});
  return *this;
}

Builder& Builder::Owns(EventSource& source, KeyOf owner) {
  watches_.push_back({&source, std::move(owner), {}});
  return *this;
}

Builder& Builder::Watches(EventSource& source, EventHandler handler) {
  watches_.push_back({&source, nullptr, std::move(handler)});
  return *this;
}

Builder& Builder::Observe(Observer observer) {
  observer_ = std::move(observer);
  return *this;
}

EventHandler Builder::Enqueuer(KeyOf key) const {
  auto enqueue = [&queue = queue_, key](const json& object) {
    if (std::string k = key(object); !k.empty()) queue.Add(k);
  };
  auto observe = [observer = observer_](const json& object, bool deleted) {
    if (observer) observer(object, deleted);
  };
  return {[=](const json& object) {
            observe(object, false);
            enqueue(object);
          },
          [=](const json& old_object, const json& object) {
            observe(object, false);
            enqueue(object);
            if (key(old_object) != key(object)) enqueue(old_object);
          },
          [=](const json& object) {
            observe(object, true);
            enqueue(object);
          }};
}

void Builder::Complete() {
  for (auto& w : watches_) w.source->AddEventHandler(w.key ? Enqueuer(w.key) : std::move(w.handler));
  watches_.clear();
}

}  // namespace ms::runtime
