// What the ModelService controller watches, and how each event reaches the
// work queue (wired in one place with runtime::Builder):
//   - ModelServices: an event queues the object itself;
//   - Deployments, Services and HorizontalPodAutoscalers (selected by our
//     managed-by label): an event queues the ModelService controlling the
//     object, or, without one, the ModelService of its own name (which may
//     be waiting for that name: NameConflict);
//   - pods of our Deployments: the PodIndex queues a ModelService only when
//     what its status says about its pods changes (pods.h);
//   - every event of the first two is shown to the write Expectations first.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "controller/modelservice/expectations.h"
#include "controller/modelservice/pods.h"
#include "controller/runtime/builder.h"

namespace ms::modelservice {

// The sources of the watched kinds (informers; fakes in tests).
struct Sources {
  runtime::EventSource& model_services;
  runtime::EventSource& deployments;
  runtime::EventSource& services;
  runtime::EventSource& hpas;
  runtime::EventSource& pods;
};

// The work queue key of the ModelService an owned object's event concerns.
std::string ModelServiceKeyOf(const nlohmann::json& owned);

// Adds the ModelService controller's watches to `builder` (then Complete() it).
void Watch(runtime::Builder& builder, const Sources& sources, Expectations& expectations, PodIndex& pods,
           runtime::WorkQueue& queue);

}  // namespace ms::modelservice
