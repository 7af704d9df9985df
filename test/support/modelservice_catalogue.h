// The ModelService objects the API's tests check their readers on: every
// sample (manifests/samples, valid and invalid), every object and old
// object of the fuzz corpora's reviews and the benchmark's fixtures, the
// property tests' generated objects, and random mutations of them with
// values that break or meet each constraint of the schema.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "shared/process/files.h"
#include "test/support/modelservice_corpus.h"
#include "webhook/validate/yaml_reader.h"

namespace ms::test {

using nlohmann::json;

// Every ModelService in the samples (manifests/samples, valid, invalid and
// the model servers' runtimes/),
// every object and old object of the fuzz corpora's reviews, and the
// property tests' generated objects.
inline std::vector<json> Catalogue() {
  namespace fs = std::filesystem;
  std::vector<json> out = ModelServiceCorpus();
  const fs::path root(MS_SOURCE_DIR);
  for (const char* dir : {"manifests/samples", "manifests/samples/invalid", "manifests/samples/runtimes"})
    for (const auto& entry : fs::directory_iterator(root / dir))
      if (entry.path().extension() == ".yaml")
        for (auto& doc : validate::ReadYaml(process::ReadFile(entry.path().string())).documents)
          if (doc.value.is_object()) out.push_back(std::move(doc.value));
  for (const char* dir : {"test/fuzz/corpus/review", "test/fuzz/corpus/review_parser", "bench/fixtures"})
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      const json review = json::parse(process::ReadFile(entry.path().string()), nullptr, false);
      if (!review.is_object() || !review.contains("request")) continue;
      for (const char* key : {"object", "oldObject"})
        if (auto it = review["request"].find(key); it != review["request"].end() && it->is_object()) out.push_back(*it);
    }
  return out;
}

// Values that break or meet the schema's constraints in every way it has.
// An array of n strings, and an object of n string members.
inline json Strings(size_t n) { return json(std::vector<std::string>(n, "v")); }
inline json Entries(size_t n) {
  json o = json::object();
  for (size_t i = 0; i < n; ++i) o["k" + std::to_string(i)] = "v";
  return o;
}

inline std::vector<json> Values() {
  return {json(nullptr), json(true), json(false), json(0), json(1), json(-1), json(16), json(17), json(29), json(30),
          json(100), json(101), json(3600), json(3601), json(65535), json(65536), json(2.5), json(1.0), json(-0.5),
          json(18446744073709551615ull), json(-9223372036854775807ll - 1), json::parse("1e2"), json(""), json("x"),
          json("a b"), json("a\tb"), json(std::string("a\0b", 3)), json("\u00e9t\u00e9"), json("25%"), json("0%"),
          json("100%"), json("101%"), json("05%"), json("5"), json("1Gi"), json("500m"), json("1e3"), json("1E"),
          json("1e"), json(".5"), json("+1.5Ki"), json("-"), json(std::string(63, 'v')), json(std::string(64, 'v')),
          json(std::string(253, 'a')), json(std::string(254, 'a')), json::object(), json::array(),
          json({{"name", "n"}}), json({{"name", 5}}), json::array({"a", 1}), json::array({json::object()}),
          json({{"name", "s"}, {"key", "k"}}), json({{"123", "x"}}), json({{"a", 5}}), json("Recreate"),
          json("RollingUpdate"), json("Controller"), json("HPA"), json("hpa"), json("Manual"), json("Automatic"),
          json("Equal"), json("NoSchedule"), json("Ready"), json("True"),
          // Just over the bounds of the definition's lists (16, 64, 256
          // items) and maps (8, 64, 256 entries).
          Strings(17), Strings(65), Strings(257), Entries(9), Entries(65), Entries(257)};
}

// Every JSON pointer to a value inside `doc` (the root included).
inline void Pointers(const json& doc, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object())
    for (const auto& [k, v] : doc.items()) Pointers(v, at / k, out);
  if (doc.is_array())
    for (size_t i = 0; i < doc.size(); ++i) Pointers(doc[i], at / i, out);
}

// The schema's property names, so mutations also add known fields.
inline const std::vector<std::string> kNames = {"spec",
                                                "status",
                                                "metadata",
                                                "model",
                                                "version",
                                                "image",
                                                "replicas",
                                                "port",
                                                "gpus",
                                                "strategy",
                                                "type",
                                                "rollingUpdate",
                                                "maxSurge",
                                                "maxUnavailable",
                                                "autoscaling",
                                                "mode",
                                                "minReplicas",
                                                "maxReplicas",
                                                "targetQueueLength",
                                                "rollout",
                                                "timeoutSeconds",
                                                "rollback",
                                                "resources",
                                                "requests",
                                                "limits",
                                                "cpu",
                                                "env",
                                                "name",
                                                "value",
                                                "valueFrom",
                                                "secretKeyRef",
                                                "configMapKeyRef",
                                                "key",
                                                "optional",
                                                "args",
                                                "nodeSelector",
                                                "tolerations",
                                                "operator",
                                                "effect",
                                                "tolerationSeconds",
                                                "imagePullSecrets",
                                                "serviceAccountName",
                                                "podAnnotations",
                                                "podLabels",
                                                "phase",
                                                "conditions",
                                                "reason",
                                                "observedGeneration",
                                                "unknownField",
                                                "7"};

// One of `docs` with 1 to 3 values replaced, added to an object (under a
// schema name) or appended to an array, at random places.
inline json Mutated(const std::vector<json>& docs, const std::vector<json>& values, std::mt19937& rng) {
  json doc = docs[rng() % docs.size()];
  for (int m = 0, n = 1 + rng() % 3; m < n; ++m) {
    std::vector<json::json_pointer> at;
    Pointers(doc, json::json_pointer(), at);
    const auto& p = at[rng() % at.size()];
    json& target = doc[p];
    const json& v = values[rng() % values.size()];
    if (target.is_object() && rng() % 2)
      target[kNames[rng() % kNames.size()]] = v;
    else if (target.is_array() && rng() % 2)
      target.push_back(v);
    else
      target = v;
  }
  return doc;
}

}  // namespace ms::test
