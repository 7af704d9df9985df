// A base for fake API clients: Do() calls the method of the call's verb,
// each answering 405 unless the fake overrides it; Watch() answers 405
// unless overridden.
#pragma once

#include <nlohmann/json.hpp>

#include <stop_token>
#include <string>

#include "controller/kube/client.h"

namespace ms::test {

class VerbClient : public kube::Client {
 public:
  kube::Result Do(const kube::Call& c) final {
    static const nlohmann::json kNone;
    const nlohmann::json& body = c.body != nullptr ? *c.body : kNone;
    switch (c.verb) {
      case kube::Call::Verb::kGet:
        return OnGet(c.path, c.deadline);
      case kube::Call::Verb::kList:
        return OnList(c.path);
      case kube::Call::Verb::kCreate:
        return OnCreate(c.path, body, c.deadline);
      case kube::Call::Verb::kUpdate:
        return OnUpdate(c.path, body, c.deadline);
      case kube::Call::Verb::kPatch:
        return OnPatch(c.path, body);
      case kube::Call::Verb::kDelete:
        return OnDelete(c.path, body);
    }
    return NotAllowed();
  }
  kube::Result Watch(const std::string&, const kube::WatchHandler&, std::stop_token) override { return NotAllowed(); }

 protected:
  virtual kube::Result OnGet(const std::string&, kube::Deadline) { return NotAllowed(); }
  virtual kube::Result OnList(const std::string&) { return NotAllowed(); }
  virtual kube::Result OnCreate(const std::string&, const nlohmann::json&, kube::Deadline) { return NotAllowed(); }
  virtual kube::Result OnUpdate(const std::string&, const nlohmann::json&, kube::Deadline) { return NotAllowed(); }
  virtual kube::Result OnPatch(const std::string&, const nlohmann::json&) { return NotAllowed(); }
  virtual kube::Result OnDelete(const std::string&, const nlohmann::json&) { return NotAllowed(); }

  static kube::Result NotAllowed() {
    return {405, nlohmann::json(), kube::Status{405, "MethodNotAllowed", "not in this fake"}};
  }
};

}  // namespace ms::test
