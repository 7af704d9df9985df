// How many items an informer asks for in each page of its LIST: as many as
// fit a budget of bytes per page, judged by the bytes per item of the page
// before. A page's answer is held whole while it is parsed, so the budget
// bounds the list's own memory whatever the objects' size; small objects
// come in large pages (10,000 ModelServices in about 25), large ones
// (tenants' annotations) in pages of a few. A page the client still
// refuses as too large (kube::kReasonTooLarge) is asked for again with half
// as many items (Reflector::ListPage).
#pragma once

#include <cstddef>

namespace ms::runtime {

struct PageBudget {
  // Items in the first page, when nothing is known of the objects' size
  // (client-go's reflector asks for 500; 100 keeps a first page of large
  // objects well under the client's 32 MiB response cap).
  int first = 100;
  // Bytes of one page's answer. The informers list at once and a page's
  // tree costs about twice its bytes, so the lists hold about nine times
  // this at their peak: at 8 MiB a cold start against 10,000 ModelServices
  // peaked at 132.5 MiB during its LISTs (59.5 at 100 items a page) and
  // synced no sooner (4.5 s against 4.7: parsing, not round trips, takes
  // the time; bench/results/controller.md, 2026-12-06).
  std::size_t bytes = std::size_t{1} << 20;
  int max = 100'000;  // items in one page, whatever their size
};

// The limit of the page after one of `bytes` bytes holding `items` items
// asked for with `limit`: the budget over the bytes per item (rounded up),
// within [1, max]. Nothing learned (no item, or the size unknown: 0 bytes)
// keeps `limit`.
int NextPageLimit(const PageBudget& budget, int limit, std::size_t bytes, std::size_t items);

}  // namespace ms::runtime
