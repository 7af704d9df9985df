// The API server's checks of the names and values a pod template carries
// (k8s.io/apimachinery/pkg/util/validation, Kubernetes v1.34), with its
// messages word for word: each returns the list of what is wrong with
// `value` (empty when it is valid), which the caller turns into one
// "Invalid value" error per message, as the API server does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ms::api {

using Problems = std::vector<std::string>;

// A label key or annotation key: an optional DNS subdomain prefix and '/',
// then a name of at most 63 alphanumerics, '-', '_', '.' (IsQualifiedName).
Problems QualifiedNameProblems(std::string_view value);
// A label value: empty, or at most 63 alphanumerics, '-', '_', '.' that start
// and end alphanumeric (IsValidLabelValue).
Problems LabelValueProblems(std::string_view value);
// A lowercase RFC 1123 subdomain of at most 253 characters: the name of a
// Secret, a ConfigMap, a ServiceAccount (IsDNS1123Subdomain).
Problems Dns1123SubdomainProblems(std::string_view value);
// A lowercase RFC 1123 label of at most 63 characters: a namespace's name
// (IsDNS1123Label).
Problems Dns1123LabelProblems(std::string_view value);
// A container port's name, an IANA service name: at most 15 lowercase
// alphanumerics and '-', at least one letter, no "--", no '-' at either end
// (IsValidPortName).
Problems PortNameProblems(std::string_view value);
// A key of a ConfigMap or Secret (IsConfigMapKey).
Problems ConfigMapKeyProblems(std::string_view value);
// An environment variable name: printable ASCII but '=' (IsRelaxedEnvVarName,
// the only rule from v1.34, where RelaxedEnvironmentVariableValidation is GA).
Problems EnvVarNameProblems(std::string_view value);

}  // namespace ms::api
