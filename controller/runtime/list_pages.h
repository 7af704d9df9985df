// How many items an informer asks for in each page of its LIST: as many as
// fit a budget of bytes per page, judged by the bytes per item of the page
// before. A page's answer is held whole while it is parsed, so the budget
// bounds the list's own memory whatever the objects' size; small objects
// come in a few large pages (10,000 ModelServices in 3 or 4), large ones
// (tenants' annotations) in pages of a few dozen. A page the client still
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
  // Bytes of one page's answer: a quarter of the client's response cap.
  std::size_t bytes = std::size_t{8} << 20;
  int max = 100'000;  // items in one page, whatever their size
};

// The limit of the page after one of `bytes` bytes holding `items` items
// asked for with `limit`: the budget over the bytes per item (rounded up),
// within [1, max]. Nothing learned (no item, or the size unknown: 0 bytes)
// keeps `limit`.
int NextPageLimit(const PageBudget& budget, int limit, std::size_t bytes, std::size_t items);

}  // namespace ms::runtime
