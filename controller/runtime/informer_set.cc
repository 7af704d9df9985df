#include "controller/runtime/informer_set.h"

#include <algorithm>
#include <utility>

namespace ms::runtime {

InformerSet::InformerSet(kube::Client& client, const clock::Clock& clock, const std::shared_ptr<spdlog::logger>& logger,
                         const std::string& collection_path, const std::string& label_selector,
                         const std::vector<std::string>& namespaces, const InformerOptions& options)
    : namespaces_(namespaces) {
  const std::vector<std::string> each = namespaces_.empty() ? std::vector<std::string>{""} : namespaces_;
  for (const std::string& ns : each) {
    informers_.push_back(
        std::make_unique<Informer>(client, clock, logger, collection_path, label_selector, ns, options));
    informers_.back()->OnSynced([this] {
      if (synced_.fetch_add(1) + 1 == informers_.size() && on_synced_) on_synced_();
    });
  }
}

void InformerSet::AddEventHandler(EventHandler handler) {
  for (auto& inf : informers_) inf->AddEventHandler(handler);
}

void InformerSet::OnSynced(std::function<void()> synced) { on_synced_ = std::move(synced); }

bool InformerSet::HasSynced() const {
  return std::all_of(informers_.begin(), informers_.end(), [](const auto& inf) { return inf->HasSynced(); });
}

std::optional<nlohmann::json> InformerSet::Get(const std::string& key) const {
  if (namespaces_.empty()) return informers_.front()->Get(key);
  const std::string ns = key.substr(0, key.find('/'));
  const auto it = std::find(namespaces_.begin(), namespaces_.end(), ns);
  if (it == namespaces_.end()) return std::nullopt;
  return informers_[static_cast<size_t>(it - namespaces_.begin())]->Get(key);
}

std::vector<Informer*> InformerSet::Informers() const {
  std::vector<Informer*> out;
  for (const auto& inf : informers_) out.push_back(inf.get());
  return out;
}

void InformerSet::Stop() {
  for (auto& inf : informers_) inf->Stop();
}

}  // namespace ms::runtime
