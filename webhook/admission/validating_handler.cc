#include "webhook/admission/validating_handler.h"

#include "shared/api/ratchet.h"
#include "shared/api/validation.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

namespace ms::admission {

namespace {

// The members of an object that validation reads (the object's apiVersion,
// kind, metadata.name and .generateName, spec) as nlohmann's tree, for
// ratcheting: what is compared with oldObject's.
nlohmann::json ReadMembers(const RequestObject& o, bool metadata) {
  nlohmann::json out = nlohmann::json::object();
  const std::pair<const char*, const std::optional<std::string_view>*> members[] = {
      {"apiVersion", &o.api_version}, {"kind", &o.kind}, {"spec", &o.spec}};
  for (const auto& [name, text] : members)
    if (*text) out[name] = nlohmann::json::parse(**text, nullptr, false);
  if (metadata) {
    const auto whole = nlohmann::json::parse(o.json, nullptr, false);
    if (auto md = whole.find("metadata"); md != whole.end()) {
      nlohmann::json kept = md->is_object() ? nlohmann::json::object() : *md;
      for (const char* k : {"name", "generateName"})
        if (md->is_object() && md->contains(k)) kept[k] = (*md)[k];
      out["metadata"] = std::move(kept);
    }
  }
  return out;
}

}  // namespace

AdmissionResponse ValidatingHandler::Handle(const AdmissionRequest& request) const {
  if (auto early = Preflight(request)) return *early;
  const auto& obj = request.object;

  const bool scale = IsScaleRequest(request);
  api::ValidationOutcome outcome =
      scale ? api::ValidateScale(text::JsonText{obj->json}) : api::ValidateModelService(*request.model_service);
  // An UPDATE reports only the errors about values it changed (ratchet.h);
  // a Scale has one value, whose unchanged form Preflight already allows.
  if (!outcome.ok() && !scale && IsUpdateOf(request))
    api::RatchetErrors(outcome.errors, ReadMembers(*obj, true), ReadMembers(*request.old_object, false));
  AdmissionResponse response = outcome.ok() ? Allowed() : Denied(422, "Invalid", api::JoinErrors(outcome.errors));
  response.warnings = std::move(outcome.warnings);
  LimitWarnings(response.warnings);
  return response;
}

}  // namespace ms::admission
