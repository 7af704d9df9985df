#include "controller/runtime/informer.h"

#include <utility>

#include "controller/kube/paths.h"

namespace ms::runtime {

Informer::Informer(kube::Client& client, const clock::Clock& clock, std::shared_ptr<spdlog::logger> logger,
                   std::string collection_path, std::string label_selector, std::string ns, InformerOptions options)
    : path_(kube::NamespacedCollectionPath(collection_path, ns)),
      dispatcher_(path_, logger),
      reflector_(client, clock, logger, path_, std::move(label_selector), options, store_,
                 [this](std::vector<Delta> deltas, bool listed) { Changed(std::move(deltas), listed); }) {}

Informer::~Informer() = default;

void Informer::AddEventHandler(EventHandler handler) { dispatcher_.AddHandler(std::move(handler)); }

void Informer::OnSynced(std::function<void()> synced) { on_synced_ = std::move(synced); }

void Informer::Run(std::stop_token stop) { reflector_.Run(stop); }

void Informer::Stop() { reflector_.Stop(); }

bool Informer::HasSynced() const { return synced_.load(); }

void Informer::Changed(std::vector<Delta> deltas, bool listed) {
  dispatcher_.Distribute(deltas);
  // The first list: synced once every handler has handled its adds.
  if (listed && !synced_.load()) Synced();
}

void Informer::Synced() {
  synced_.store(true);
  if (on_synced_) on_synced_();
}

}  // namespace ms::runtime
