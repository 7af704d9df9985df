#include "controller/runtime/store.h"

#include <mutex>

namespace ms::runtime {

using nlohmann::json;

namespace {

std::shared_ptr<const json> Unpack(const std::string& packed) {
  return std::make_shared<const json>(json::from_msgpack(packed));
}

}  // namespace

DeltaObject DeltaObject::Packed(std::shared_ptr<const std::string> packed) {
  DeltaObject o;
  o.packed_ = std::move(packed);
  return o;
}

std::shared_ptr<const json> DeltaObject::Get() const { return packed_ ? Unpack(*packed_) : decoded_; }

std::string Store::Pack(const json& object) {
  std::string out;
  json::to_msgpack(object, out);
  out.shrink_to_fit();
  return out;
}

std::optional<json> Store::Get(const std::string& key) const {
  std::shared_ptr<const std::string> packed;
  {
    std::shared_lock<std::shared_mutex> g(mu_);
    auto it = items_.find(key);
    if (it == items_.end()) return std::nullopt;
    packed = it->second;
  }
  return json::from_msgpack(*packed);
}

size_t Store::size() const {
  std::shared_lock<std::shared_mutex> g(mu_);
  return items_.size();
}

std::string Store::ResourceVersion() const {
  std::shared_lock<std::shared_mutex> g(mu_);
  return rv_;
}

void Store::SetResourceVersion(const std::string& rv) {
  std::unique_lock<std::shared_mutex> g(mu_);
  rv_ = rv;
}

std::vector<Delta> Store::Replace(std::map<std::string, std::string> packed, const std::string& rv) {
  // The list's objects, each moved (not copied) into the form the cache
  // and the deltas share; the keys' map nodes are reused.
  std::map<std::string, std::shared_ptr<const std::string>> items;
  while (!packed.empty()) {
    auto node = packed.extract(packed.begin());
    items.emplace_hint(items.end(), std::move(node.key()),
                       std::make_shared<const std::string>(std::move(node.mapped())));
  }
  std::vector<Delta> deltas;
  std::unique_lock<std::shared_mutex> g(mu_);
  for (const auto& [key, old_obj] : items_) {
    if (items.find(key) == items.end())
      deltas.push_back({Delta::Type::kDelete, key, DeltaObject::Packed(old_obj), DeltaObject()});
  }
  for (const auto& [key, obj] : items) {
    auto it = items_.find(key);
    if (it == items_.end()) {
      deltas.push_back({Delta::Type::kAdd, key, DeltaObject(), DeltaObject::Packed(obj)});
    } else if (*it->second != *obj) {
      deltas.push_back({Delta::Type::kUpdate, key, DeltaObject::Packed(it->second), DeltaObject::Packed(obj)});
    }
  }
  items_ = std::move(items);
  rv_ = rv;
  return deltas;
}

Delta Store::Upsert(const std::string& key, json object, const std::string& rv) {
  auto packed = std::make_shared<const std::string>(Pack(object));
  std::shared_ptr<const std::string> old_obj;
  {
    std::unique_lock<std::shared_mutex> g(mu_);
    auto [it, inserted] = items_.try_emplace(key);
    if (!inserted) old_obj = std::move(it->second);
    it->second = std::move(packed);
    if (!rv.empty()) rv_ = rv;
  }
  auto now = std::make_shared<const json>(std::move(object));
  if (old_obj) return {Delta::Type::kUpdate, key, DeltaObject(Unpack(*old_obj)), DeltaObject(std::move(now))};
  return {Delta::Type::kAdd, key, DeltaObject(), DeltaObject(std::move(now))};
}

Delta Store::Remove(const std::string& key, json object, const std::string& rv) {
  {
    std::unique_lock<std::shared_mutex> g(mu_);
    items_.erase(key);
    if (!rv.empty()) rv_ = rv;
  }
  return {Delta::Type::kDelete, key, DeltaObject(std::make_shared<const json>(std::move(object))), DeltaObject()};
}

}  // namespace ms::runtime
