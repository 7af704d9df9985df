#include "shared/api/pod_template.h"

#include <algorithm>

namespace ms::api {

bool IsControllerPodLabel(std::string_view key) {
  return std::any_of(kControllerPodLabels.begin(), kControllerPodLabels.end(), [&](const char* k) { return key == k; });
}

Toleration GpuToleration() {
  Toleration t;
  t.key = kGpuResource;
  t.operator_ = TolerationOperator::kExists;
  t.effect = TolerationEffect::kNoSchedule;
  return t;
}

std::vector<Toleration> PodTolerations(const ModelServiceSpec& defaulted) {
  std::vector<Toleration> out = defaulted.tolerations.value_or(std::vector<Toleration>{});
  const bool gpus = defaulted.gpus.value_or(0) > 0;
  const bool has_gpu_key =
      std::any_of(out.begin(), out.end(), [](const Toleration& t) { return t.key.value_or("") == kGpuResource; });
  if (gpus && !has_gpu_key) out.push_back(GpuToleration());
  return out;
}

}  // namespace ms::api
