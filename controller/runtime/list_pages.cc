#include "controller/runtime/list_pages.h"

#include <algorithm>

namespace ms::runtime {

int NextPageLimit(const PageBudget& budget, int limit, std::size_t bytes, std::size_t items) {
  const std::size_t max = static_cast<std::size_t>(std::max(1, budget.max));
  if (items == 0 || bytes == 0) return static_cast<int>(std::clamp<std::size_t>(std::max(1, limit), 1, max));
  const std::size_t per_item = (bytes + items - 1) / items;
  return static_cast<int>(std::clamp<std::size_t>(budget.bytes / per_item, 1, max));
}

}  // namespace ms::runtime
