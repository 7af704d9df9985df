#include "controller/runtime/dispatcher.h"

namespace ms::runtime {

Dispatcher::Dispatcher(std::string name, std::shared_ptr<spdlog::logger> logger)
    : name_(std::move(name)), logger_(std::move(logger)) {}

void Dispatcher::AddHandler(EventHandler handler) { handlers_.push_back(std::move(handler)); }

void Dispatcher::Distribute(const std::vector<Delta>& deltas) const {
  for (const Delta& d : deltas) {
    // A list's objects are decoded here, one delta at a time (store.h),
    // once for every handler.
    std::shared_ptr<const nlohmann::json> old_object, object;
    try {
      if (d.type != Delta::Type::kAdd) old_object = d.old_object.Get();
      if (d.type != Delta::Type::kDelete) object = d.object.Get();
    } catch (const std::exception& e) {
      Skipped(d, e);
      continue;
    }
    for (const EventHandler& h : handlers_) {
      try {
        switch (d.type) {
          case Delta::Type::kAdd:
            if (h.on_add) h.on_add(*object);
            break;
          case Delta::Type::kUpdate:
            if (h.on_update) h.on_update(*old_object, *object);
            break;
          case Delta::Type::kDelete:
            if (h.on_delete) h.on_delete(*old_object);
            break;
        }
      } catch (const std::exception& e) {
        Skipped(d, e);
      }
    }
  }
}

void Dispatcher::Skipped(const Delta& d, const std::exception& e) const {
  const char* what = d.type == Delta::Type::kAdd ? "add" : d.type == Delta::Type::kUpdate ? "update" : "delete";
  if (logger_)
    logger_->error("informer {}: {} handler for {} failed (event skipped): {}", name_, what, d.key, e.what());
}

}  // namespace ms::runtime
