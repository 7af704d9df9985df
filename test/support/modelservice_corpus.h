// A deterministic corpus of ModelService objects for property tests: every
// spec field absent, valid, at a boundary, or of the wrong type, in random
// (fixed-seed) combinations, plus a few without a spec or with a malformed one.
#pragma once

#include <nlohmann/json.hpp>

#include <random>
#include <vector>

namespace ms::test {

inline std::vector<nlohmann::json> ModelServiceCorpus(size_t count = 3000) {
  using nlohmann::json;
  const json absent = json::value_t::discarded;  // marks "leave the field out"
  const std::vector<json> rolling = {json::object(),
                                     {{"maxSurge", 0}},
                                     {{"maxSurge", "0%"}},
                                     {{"maxSurge", 2}},
                                     {{"maxUnavailable", 0}},
                                     {{"maxSurge", 0}, {"maxUnavailable", 0}},
                                     {{"maxSurge", "abc"}},
                                     {{"maxSurge", "25%"}, {"maxUnavailable", "10%"}, {"colour", 1}},
                                     json("x")};
  std::vector<json> strategies = {
      absent,       json::object(), json(7), {{"type", "RollingUpdate"}}, {{"type", "Recreate"}}, {{"type", "Rolling"}},
      {{"type", 3}}};
  for (const json& ru : rolling) {
    strategies.push_back({{"rollingUpdate", ru}});
    strategies.push_back({{"type", "RollingUpdate"}, {"rollingUpdate", ru}});
    strategies.push_back({{"type", "Recreate"}, {"rollingUpdate", ru}});
  }
  const std::vector<std::pair<const char*, std::vector<json>>> fields = {
      {"model", {absent, "bert", "", "a b", 5}},
      {"version", {absent, "3", "", 7}},
      {"image", {absent, "registry.local/serve:1.4", "", 9}},
      {"replicas", {absent, 1, 2, 0, 101, 20, "3", 2.5, json::parse("18446744073709551615")}},
      {"port", {absent, 8080, 0, 65536, "80"}},
      {"gpus", {absent, 0, 1, 17, -1}},
      {"strategy", strategies},
      {"autoscaling",
       {absent,
        json::object(),
        json(5),
        {{"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"minReplicas", 3}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"minReplicas", 6}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"minReplicas", 0}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"minReplicas", "2"}, {"maxReplicas", 5}, {"targetQueueLength", 0}},
        {{"maxReplicas", "9"}, {"targetQueueLength", 1}, {"x", 1}},
        {{"mode", "HPA"}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"mode", "Controller"}, {"minReplicas", 2}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"mode", "hpa"}, {"maxReplicas", 5}, {"targetQueueLength", 2}},
        {{"mode", 1}, {"maxReplicas", 5}, {"targetQueueLength", 2}}}},
      {"rollout",
       {absent,
        json::object(),
        json("x"),
        {{"timeoutSeconds", 30}},
        {{"timeoutSeconds", 29}, {"rollback", "Automatic"}},
        {{"rollback", "Manual"}},
        {{"rollback", "Sometimes"}, {"y", 1}}}},
      {"extra", {absent, absent, true}},
  };
  std::mt19937 rng(20261130);
  std::vector<json> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    json obj = {{"apiVersion", "modelops.dev/v1"}, {"kind", "ModelService"}, {"metadata", {{"name", "c"}}}};
    const auto shape = rng() % 40;
    if (shape == 0) {  // no spec
      out.push_back(obj);
      continue;
    }
    if (shape == 1) {
      obj["spec"] = "x";
      out.push_back(obj);
      continue;
    }
    json spec = json::object();
    for (const auto& [name, values] : fields) {
      const json& v = values[rng() % values.size()];
      if (!v.is_discarded()) spec[name] = v;
    }
    obj["spec"] = spec;
    out.push_back(obj);
  }
  return out;
}

}  // namespace ms::test
