// `modelservice-controller check-admission`: whether the operator's admission
// webhooks answer, through the API server, as a user's write would go: two
// server-side dry-run creates (dryRun=All: nothing is stored) of a
// ModelService in a namespace.
//   1. {model: ...} alone is admitted, and comes back with the defaults only
//      the mutating webhook sets (spec.replicas, spec.port: the CRD has no
//      defaults of its own), so the mutating webhook answered;
//   2. a spec only the validating webhook refuses (a rolling update with
//      maxSurge 0 and maxUnavailable 0) is denied by it, by name, so the
//      validating webhook answered.
// Either check fails if no webhook replica answers, also with failurePolicy
// Ignore (the object would be admitted unchanged). The chart's `helm test`
// Pod runs it (templates/tests/), with a ServiceAccount that may only create
// ModelServices in the release namespace.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "controller/kube/client.h"

namespace ms::controller {

// The two checks with `client` in `ns`; one line per check on `out`. 0: both
// passed, 1: one failed.
int CheckAdmission(kube::Client& client, const std::string& ns, std::ostream& out);

// The subcommand: ARGS after "check-admission" ([--namespace NS]
// [--kubeconfig FILE]; the namespace defaults to $POD_NAMESPACE, then the
// service account's). Exit code 0 (both checks passed), 1 (one failed or no
// API server configuration), 2 (bad arguments).
int CheckAdmissionMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ms::controller
