// An event source (runtime::EventSource) whose events a test delivers by
// hand, in place of an informer: what runtime::Builder wires to it is
// called at once on the test's thread.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "controller/runtime/informer.h"

namespace ms::test {

class FakeSource final : public runtime::EventSource {
 public:
  void AddEventHandler(runtime::EventHandler handler) override { handlers_.push_back(std::move(handler)); }

  void Add(const nlohmann::json& object) {
    for (auto& h : handlers_)
      if (h.on_add) h.on_add(object);
  }
  void Update(const nlohmann::json& old_object, const nlohmann::json& object) {
    for (auto& h : handlers_)
      if (h.on_update) h.on_update(old_object, object);
  }
  void Delete(const nlohmann::json& object) {
    for (auto& h : handlers_)
      if (h.on_delete) h.on_delete(object);
  }
  size_t handlers() const { return handlers_.size(); }

 private:
  std::vector<runtime::EventHandler> handlers_;
};

}  // namespace ms::test
