#include "webhook/admission/request.h"

namespace ms::admission {

AdmissionRequest::AdmissionRequest(text::JsonRef request) {
  request.every_member([this](std::string_view key, text::JsonRef value) {
    std::optional<text::JsonRef>* slot = nullptr;
    switch (key.size()) {  // the length tells most of the names apart
      case 3:
        slot = key == "uid" ? &uid : nullptr;
        break;
      case 4:
        slot = key == "kind" ? &kind : key == "name" ? &name : nullptr;
        break;
      case 6:
        slot = key == "object" ? &object : nullptr;
        break;
      case 8:
        slot = key == "resource" ? &resource : nullptr;
        break;
      case 9:
        slot = key == "namespace"   ? &namespace_
               : key == "operation" ? &operation
               : key == "oldObject" ? &old_object
                                    : nullptr;
        break;
      case 11:
        slot = key == "subResource" ? &sub_resource : nullptr;
        break;
      default:
        break;
    }
    if (slot) *slot = value;
    return true;
  });
}

}  // namespace ms::admission
