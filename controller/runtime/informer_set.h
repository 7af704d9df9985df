// One kind's informers over the namespaces a controller watches, as
// controller-runtime's cache with cache.Options.DefaultNamespaces: one
// Informer (a LIST and a WATCH) per namespace, since rights granted by Roles
// in those namespaces do not allow a cluster-wide LIST; or one Informer over
// all namespaces when none is named. To the rest of the controller it is one
// source: handlers see every namespace's events, Get() finds an object in
// the informer of its namespace, and it has synced once every informer has.
//
//   InformerSet deployments(client, clock, logger, "/apis/apps/v1/deployments", selector, {"team-a", "team-b"});
//   deployments.AddEventHandler(...);
//   for (Informer* inf : deployments.Informers()) threads.emplace_back([inf](std::stop_token s) { inf->Run(s); });
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/runtime/informer.h"

namespace ms::runtime {

class InformerSet final : public EventSource {
 public:
  // `namespaces` empty: one informer over all namespaces. Each informer gets
  // its own copy of `options`.
  InformerSet(kube::Client& client, const clock::Clock& clock, const std::shared_ptr<spdlog::logger>& logger,
              const std::string& collection_path, const std::string& label_selector,
              const std::vector<std::string>& namespaces, const InformerOptions& options = {});
  InformerSet(const InformerSet&) = delete;
  InformerSet& operator=(const InformerSet&) = delete;

  // To every informer (before they run): a handler is called on as many
  // threads as there are namespaces, so it must be thread-safe.
  void AddEventHandler(EventHandler handler) override;
  // Called once, when every informer has synced. Set before they run.
  void OnSynced(std::function<void()> synced);
  bool HasSynced() const;

  // The cached object "ns/name", from the informer of its namespace (nullopt:
  // not in the cache, or a namespace not watched).
  std::optional<nlohmann::json> Get(const std::string& key) const;
  // The informers, for the caller to Run() each on a thread of its own.
  std::vector<Informer*> Informers() const;
  void Stop();

 private:
  std::vector<std::string> namespaces_;  // empty: all, in informers_[0]
  std::vector<std::unique_ptr<Informer>> informers_;
  std::function<void()> on_synced_;
  std::atomic<size_t> synced_{0};
};

}  // namespace ms::runtime
