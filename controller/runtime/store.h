// An informer's cache (client-go's store): objects by key "ns/name", each
// kept as the MessagePack of its transformed form (small), and the
// resourceVersion the cache is at. Every change returns its Delta for the
// dispatcher to hand to the handlers: a watch event's with its objects
// decoded once, a list's with them still packed (see DeltaObject) and shared
// with the cache, not copied.
// Thread-safe: readers share the lock.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace ms::runtime {

// An object of a Delta: decoded, or still packed (MessagePack), decoded by
// Get() when a handler is handed it. A list's deltas are packed, so that a
// list of N objects waiting for the handlers holds N packed forms (about a
// kilobyte each), not N decoded trees (ten times that: at a cold start
// against thousands of objects, most of the controller's peak memory).
class DeltaObject {
 public:
  DeltaObject() = default;
  explicit DeltaObject(std::shared_ptr<const nlohmann::json> decoded) : decoded_(std::move(decoded)) {}
  static DeltaObject Packed(std::shared_ptr<const std::string> packed);

  bool empty() const { return !decoded_ && !packed_; }
  bool packed() const { return packed_ != nullptr; }
  // The object (decoded now when packed; each call decodes again).
  std::shared_ptr<const nlohmann::json> Get() const;

 private:
  std::shared_ptr<const nlohmann::json> decoded_;
  std::shared_ptr<const std::string> packed_;
};

// One change of the cache, as the handlers see it.
struct Delta {
  enum class Type { kAdd, kUpdate, kDelete };
  Type type;
  std::string key;
  DeltaObject old_object;  // kUpdate: before; kDelete: the deleted object
  DeltaObject object;      // kAdd, kUpdate: now
};

class Store {
 public:
  // The compact form kept for an object (MessagePack of it).
  static std::string Pack(const nlohmann::json& object);

  // The cached object, or nullopt when not in the cache.
  std::optional<nlohmann::json> Get(const std::string& key) const;
  size_t size() const;
  std::string ResourceVersion() const;
  void SetResourceVersion(const std::string& rv);

  // Replaces everything with a list's items (packed) at `rv`; returns the
  // deletes of the keys that vanished, then the adds and the updates (only
  // of objects that differ), their objects packed.
  std::vector<Delta> Replace(std::map<std::string, std::string> packed, const std::string& rv);
  // An object added or modified at `rv` (empty: keep the current).
  Delta Upsert(const std::string& key, nlohmann::json object, const std::string& rv);
  // An object deleted at `rv`; `object` is the deleted object as the event carries it.
  Delta Remove(const std::string& key, nlohmann::json object, const std::string& rv);

 private:
  mutable std::shared_mutex mu_;
  // key -> MessagePack of the object; shared with the deltas of a list
  // (immutable: a change replaces the pointer).
  std::map<std::string, std::shared_ptr<const std::string>> items_;
  std::string rv_;
};

}  // namespace ms::runtime
