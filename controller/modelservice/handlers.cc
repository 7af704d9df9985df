#include "controller/modelservice/handlers.h"

#include "controller/kube/paths.h"
#include "controller/modelservice/ownership.h"

namespace ms::modelservice {

std::string ModelServiceKeyOf(const nlohmann::json& owned) {
  std::string key = OwnerKey(owned);
  return key.empty() ? kube::ObjectKey(owned) : key;
}

void Watch(runtime::Builder& builder, const Sources& sources, Expectations& expectations, PodIndex& pods,
           runtime::WorkQueue& queue) {
  builder
      .Observe([&expectations](const nlohmann::json& object, bool deleted) { expectations.Observe(object, deleted); })
      .For(sources.model_services)
      .Owns(sources.deployments, ModelServiceKeyOf)
      .Owns(sources.services, ModelServiceKeyOf)
      .Owns(sources.hpas, ModelServiceKeyOf)
      .Watches(sources.pods, pods.Handler([&queue](const std::string& key) { queue.Add(key); }));
}

}  // namespace ms::modelservice
