#include "shared/api/scheduling_validation.h"

#include <string>

#include "shared/api/k8s_names.h"

namespace ms::api {

namespace {

using Errors = std::vector<FieldError>;
using Strings = std::vector<std::string>;

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// ValidateLabelName: one "Invalid value" per problem of a qualified name.
void CheckLabelName(const std::string& name, const std::string& path, Errors& errors) {
  for (const auto& p : QualifiedNameProblems(name)) errors.push_back(FieldError::Invalid(path, name, p));
}

// The values of a requirement, by operator: In and NotIn need some, Exists
// and DoesNotExist none, Gt and Lt exactly one (nodes only).
void CheckValues(const std::string& op, const Strings& values, const std::string& path, Errors& errors) {
  const std::string at = path + ".values";
  if ((op == "In" || op == "NotIn") && values.empty())
    errors.push_back(FieldError::Required(at, "must be specified when `operator` is 'In' or 'NotIn'"));
  if ((op == "Exists" || op == "DoesNotExist") && !values.empty())
    errors.push_back(FieldError::Forbidden(at, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  if ((op == "Gt" || op == "Lt") && values.size() != 1)
    errors.push_back(FieldError::Required(at, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
}

void CheckNodeTerm(const NodeSelectorTerm& term, const std::string& path, Errors& errors) {
  const auto& expressions = term.match_expressions.value_or(std::vector<NodeSelectorRequirement>{});
  for (size_t i = 0; i < expressions.size(); ++i) {
    const NodeSelectorRequirement& r = expressions[i];
    const std::string at = Index(path + ".matchExpressions", i);
    if (r.operator_) CheckValues(ToString(*r.operator_), r.values.value_or(Strings{}), at, errors);
    if (r.key) CheckLabelName(*r.key, at + ".key", errors);
  }
}

void CheckNodeAffinity(const NodeAffinity& a, const std::string& path, Errors& errors) {
  if (const auto& required = a.required_during_scheduling_ignored_during_execution) {
    const std::string at = path + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    const auto& terms = required->node_selector_terms.value_or(std::vector<NodeSelectorTerm>{});
    if (terms.empty()) errors.push_back(FieldError::Required(at, "must have at least one node selector term"));
    for (size_t i = 0; i < terms.size(); ++i) CheckNodeTerm(terms[i], Index(at, i), errors);
  }
  const auto& preferred = a.preferred_during_scheduling_ignored_during_execution;
  for (size_t i = 0; preferred && i < preferred->size(); ++i)
    if (const auto& p = (*preferred)[i].preference)
      CheckNodeTerm(*p, Index(path + ".preferredDuringSchedulingIgnoredDuringExecution", i) + ".preference", errors);
}

// ValidateLabelSelector: matchLabels as labels, each requirement by its operator.
void CheckLabelSelector(const LabelSelector& s, const std::string& path, Errors& errors) {
  for (const auto& [k, v] : s.match_labels.value_or(std::map<std::string, std::string>{})) {
    CheckLabelName(k, path + ".matchLabels", errors);
    for (const auto& p : LabelValueProblems(v)) errors.push_back(FieldError::Invalid(path + ".matchLabels", v, p));
  }
  const auto& expressions = s.match_expressions.value_or(std::vector<LabelSelectorRequirement>{});
  for (size_t i = 0; i < expressions.size(); ++i) {
    const LabelSelectorRequirement& r = expressions[i];
    const std::string at = Index(path + ".matchExpressions", i);
    const Strings values = r.values.value_or(Strings{});
    if (r.operator_) CheckValues(ToString(*r.operator_), values, at, errors);
    if (r.key) CheckLabelName(*r.key, at + ".key", errors);
    for (size_t j = 0; j < values.size(); ++j)
      for (const auto& p : LabelValueProblems(values[j]))
        errors.push_back(FieldError::Invalid(Index(at + ".values", j), values[j], p));
  }
}

void CheckPodAffinityTerm(const PodAffinityTerm& t, const std::string& path, Errors& errors) {
  if (t.label_selector) CheckLabelSelector(*t.label_selector, path + ".labelSelector", errors);
  if (t.namespace_selector) CheckLabelSelector(*t.namespace_selector, path + ".namespaceSelector", errors);
  // The API server reports a namespace's name on ".namespace" (sic).
  for (const auto& name : t.namespaces.value_or(Strings{}))
    for (const auto& p : Dns1123LabelProblems(name))
      errors.push_back(FieldError::Invalid(path + ".namespace", name, p));
  if (!t.topology_key) return;  // reported as required by the parser
  if (t.topology_key->empty()) errors.push_back(FieldError::Required(path + ".topologyKey", "can not be empty"));
  CheckLabelName(*t.topology_key, path + ".topologyKey", errors);
}

// PodAffinity and PodAntiAffinity: the same members.
template <class Terms>
void CheckPodAffinity(const Terms& a, const std::string& path, Errors& errors) {
  const auto& required = a.required_during_scheduling_ignored_during_execution;
  for (size_t i = 0; required && i < required->size(); ++i)
    CheckPodAffinityTerm((*required)[i], Index(path + ".requiredDuringSchedulingIgnoredDuringExecution", i), errors);
  const auto& preferred = a.preferred_during_scheduling_ignored_during_execution;
  for (size_t i = 0; preferred && i < preferred->size(); ++i)
    if (const auto& term = (*preferred)[i].pod_affinity_term)
      CheckPodAffinityTerm(
          *term, Index(path + ".preferredDuringSchedulingIgnoredDuringExecution", i) + ".podAffinityTerm", errors);
}

void CheckSpread(const TopologySpreadConstraint& c, const std::string& at, Errors& errors) {
  if (c.max_skew && *c.max_skew <= 0)
    errors.push_back(FieldError::Invalid(at + ".maxSkew", *c.max_skew, "must be greater than zero"));
  if (c.topology_key && c.topology_key->empty())
    errors.push_back(FieldError::Required(at + ".topologyKey", "can not be empty"));
  if (c.min_domains) {
    if (*c.min_domains <= 0)
      errors.push_back(FieldError::Invalid(at + ".minDomains", *c.min_domains, "must be greater than zero"));
    if (c.when_unsatisfiable && *c.when_unsatisfiable != TopologySpreadConstraintWhenUnsatisfiable::kDoNotSchedule)
      errors.push_back(
          FieldError::Invalid(at + ".minDomains", *c.min_domains,
                              std::string("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ") +
                                  ToString(*c.when_unsatisfiable)));
  }
  if (c.label_selector) CheckLabelSelector(*c.label_selector, at + ".labelSelector", errors);
}

}  // namespace

void CheckAffinity(const Affinity& affinity, Errors& errors) {
  const std::string path = "spec.affinity";
  if (affinity.node_affinity) CheckNodeAffinity(*affinity.node_affinity, path + ".nodeAffinity", errors);
  if (affinity.pod_affinity) CheckPodAffinity(*affinity.pod_affinity, path + ".podAffinity", errors);
  if (affinity.pod_anti_affinity) CheckPodAffinity(*affinity.pod_anti_affinity, path + ".podAntiAffinity", errors);
}

void CheckTopologySpreadConstraints(const std::vector<TopologySpreadConstraint>& constraints, Errors& errors) {
  for (size_t i = 0; i < constraints.size(); ++i) {
    const TopologySpreadConstraint& c = constraints[i];
    const std::string at = Index("spec.topologySpreadConstraints", i);
    CheckSpread(c, at, errors);
    // {topologyKey, whenUnsatisfiable} names one kind of constraint: once.
    if (!c.topology_key || !c.when_unsatisfiable) continue;
    for (size_t j = i + 1; j < constraints.size(); ++j) {
      if (constraints[j].topology_key != c.topology_key || constraints[j].when_unsatisfiable != c.when_unsatisfiable)
        continue;
      errors.push_back(FieldError::Duplicate(at + ".{topologyKey, whenUnsatisfiable}",
                                             "{" + *c.topology_key + ", " + ToString(*c.when_unsatisfiable) + "}"));
      break;
    }
  }
}

}  // namespace ms::api
