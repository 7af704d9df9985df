// Parsing what the API server answers, leaving out while parsing what no
// reader needs, so that memory follows what is kept, not what was sent:
// every metadata.managedFields (often the bulk of an object), and for the
// informers' lists and watches (whose objects are cached through a
// projection) each object's metadata.annotations but the keys kept.
// RapidJSON's SAX reader builds nlohmann's tree directly (a left-out value is
// never built); a text it refuses is parsed again by nlohmann, whose verdict
// stands (the same tree, or discarded).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ms::kube {

// The metadata.annotations keys kept of each object of a LIST or WATCH
// answer (the object of a watch event, each item of a list, or the
// answer itself); the annotations of pod templates and other nested
// metadata are never touched.
using KeptAnnotations = std::vector<std::string>;

// Parses a JSON text from the API server without any metadata.managedFields
// and, when `annotations` is not null, without the object-level annotations
// it does not list. A discarded value when the text is not JSON.
nlohmann::json ParseApiJson(std::string_view text, const KeptAnnotations* annotations = nullptr);

}  // namespace ms::kube
