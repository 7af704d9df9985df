// The fakes the ModelService executor's tests share: an in-memory API
// server and an Event recorder that keeps what it is given.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/modelservice/events.h"
#include "test/support/verb_client.h"

namespace ms::modelservice::fakes {

using nlohmann::json;

inline std::string StripQuery(const std::string& p) { return p.substr(0, p.find('?')); }

// An in-memory API server: objects by path, resourceVersion preconditions on
// PUT and merge patch, the /status subresource, finalizer-gated deletion.
// Hooks let a test inject answers or concurrent writes.
class FakeApi final : public test::VerbClient {
 public:
  struct Call {
    std::string method, path;
  };
  // Return a Result to answer the call instead of the store.
  std::function<std::optional<kube::Result>(const std::string& method, const std::string& path, const json& body)> hook;

  kube::Result OnGet(const std::string& path, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    calls.push_back({"GET", path});
    if (auto r = Hooked("GET", path, json())) return *r;
    auto it = objects.find(StripQuery(path));
    if (it == objects.end()) return Err(404, "NotFound");
    return {200, it->second, std::nullopt};
  }
  kube::Result OnCreate(const std::string& path, const json& body, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    calls.push_back({"POST", path});
    if (auto r = Hooked("POST", path, body)) return *r;
    const std::string p = path + "/" + body["metadata"]["name"].get<std::string>();
    if (objects.count(p)) return Err(409, "AlreadyExists");
    json obj = body;
    obj["metadata"]["uid"] = "uid-" + std::to_string(++seq_);
    obj["metadata"]["generation"] = 1;
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    objects[p] = obj;
    return {201, obj, std::nullopt};
  }
  kube::Result OnUpdate(const std::string& path, const json& body, kube::Deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    calls.push_back({"PUT", path});
    if (auto r = Hooked("PUT", path, body)) return *r;
    const bool status = path.size() > 7 && path.substr(path.size() - 7) == "/status";
    const std::string p = status ? path.substr(0, path.size() - 7) : path;
    auto it = objects.find(p);
    if (it == objects.end()) return Err(404, "NotFound");
    if (body["metadata"].value("resourceVersion", "") != it->second["metadata"]["resourceVersion"]) {
      return Err(409, "Conflict");
    }
    if (status) {
      it->second["status"] = body["status"];
    } else {
      json keep_status = it->second.value("status", json());
      json meta = it->second["metadata"];
      it->second = body;
      if (!keep_status.is_null()) it->second["status"] = keep_status;
      it->second["metadata"]["uid"] = meta["uid"];
      it->second["metadata"]["generation"] = meta["generation"].get<int>() + 1;
    }
    it->second["metadata"]["resourceVersion"] = std::to_string(++rv_);
    return {200, it->second, std::nullopt};
  }
  kube::Result OnPatch(const std::string& path, const json& patch) override {
    std::lock_guard<std::mutex> g(mu_);
    calls.push_back({"PATCH", path});
    if (auto r = Hooked("PATCH", path, patch)) return *r;
    auto it = objects.find(path);
    if (it == objects.end()) return Err(404, "NotFound");
    if (patch.contains("metadata") && patch["metadata"].contains("resourceVersion") &&
        patch["metadata"]["resourceVersion"] != it->second["metadata"]["resourceVersion"]) {
      return Err(409, "Conflict");
    }
    it->second.merge_patch(patch);
    it->second["metadata"]["resourceVersion"] = std::to_string(++rv_);
    json out = it->second;
    if (out["metadata"].contains("deletionTimestamp") &&
        (!out["metadata"].contains("finalizers") || out["metadata"]["finalizers"].empty())) {
      objects.erase(it);
    }
    return {200, out, std::nullopt};
  }
  kube::Result OnDelete(const std::string& path, const json& options) override {
    std::lock_guard<std::mutex> g(mu_);
    calls.push_back({"DELETE", path});
    deletes.push_back(options);
    if (auto r = Hooked("DELETE", path, options)) return *r;
    auto it = objects.find(StripQuery(path));
    if (it == objects.end()) return Err(404, "NotFound");
    // The API server's preconditions: 409 when the object is not the one named.
    const json pre = options.is_object() ? options.value("preconditions", json::object()) : json::object();
    for (const char* field : {"uid", "resourceVersion"}) {
      if (pre.contains(field) && pre[field] != it->second["metadata"][field]) return Err(409, "Conflict");
    }
    objects.erase(it);
    return {200, json::object(), std::nullopt};
  }

  int Writes() const {
    int n = 0;
    for (const auto& c : calls) n += c.method != "GET";
    return n;
  }
  std::vector<Call> WritesList() const {
    std::vector<Call> out;
    for (const auto& c : calls) {
      if (c.method != "GET") out.push_back(c);
    }
    return out;
  }
  // A write by someone else (bumps resourceVersion); call from a hook only.
  void ExternalEdit(const std::string& path, const std::function<void(json&)>& edit) {
    edit(objects[path]);
    objects[path]["metadata"]["resourceVersion"] = std::to_string(++rv_);
  }
  void Put(const std::string& path, json obj) {
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    objects[path] = std::move(obj);
  }

  std::map<std::string, json> objects;
  std::vector<Call> calls;
  std::vector<json> deletes;  // the DeleteOptions of each DELETE
  std::mutex& mu() { return mu_; }

 private:
  std::optional<kube::Result> Hooked(const std::string& m, const std::string& p, const json& b) {
    if (!hook) return std::nullopt;
    return hook(m, p, b);
  }
  static kube::Result Err(int code, const std::string& reason) {
    return {code, json(), kube::Status{code, reason, reason + " (fake)"}};
  }
  std::mutex mu_;
  int rv_ = 0, seq_ = 0;
};

class FakeRecorder final : public EventRecorder {
 public:
  void Record(const json&, const Event& e) override {
    std::lock_guard<std::mutex> g(mu_);
    events.push_back(e);
  }
  bool Has(const std::string& reason) const {
    for (const auto& e : events) {
      if (e.reason == reason) return true;
    }
    return false;
  }
  std::vector<Event> events;

 private:
  std::mutex mu_;
};

}  // namespace ms::modelservice::fakes
