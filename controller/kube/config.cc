#include "controller/kube/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "shared/process/files.h"
#include "shared/text/base64.h"
#include "shared/text/strings.h"

namespace ms::kube {

namespace fs = std::filesystem;

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read-only use
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

namespace {

// ReadFile with what the file is for in front of its error.
std::string ReadFileFor(const std::string& path, const std::string& what) {
  try {
    return process::ReadFile(path);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

[[noreturn]] void Fail(const std::string& file, const std::string& what) {
  throw std::runtime_error("kubeconfig " + file + ": " + what);
}

// The entry named `name` of a kubeconfig list (clusters/users/contexts), or an
// undefined node.
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* inner) {
  if (!list || !list.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& entry : list) {
    if (entry.IsMap() && entry["name"] && entry["name"].as<std::string>("") == name) {
      YAML::Node body = entry[inner];
      return body ? body : YAML::Node(YAML::NodeType::Map);
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Str(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return {};
  YAML::Node v = map[key];
  if (!v || !v.IsScalar()) return {};
  return v.as<std::string>("");
}

bool Bool(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return false;
  YAML::Node v = map[key];
  if (!v || !v.IsScalar()) return false;
  return v.as<bool>(false);
}

std::string Resolve(const fs::path& dir, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = dir / path;
  return path.string();
}

// "<key>-data" (base64) wins over "<key>" (a file path), as in client-go.
std::string DataOrFile(const YAML::Node& map, const std::string& key, const fs::path& dir, const std::string& file,
                       const std::string& where) {
  std::string data = Str(map, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = text::Base64Decode(data);
    if (!decoded) Fail(file, where + " " + key + "-data is not valid base64");
    return *decoded;
  }
  std::string path = Str(map, key.c_str());
  if (path.empty()) return {};
  try {
    return ReadFileFor(Resolve(dir, path), where + " " + key);
  } catch (const std::runtime_error& e) {
    Fail(file, e.what());
  }
}

}  // namespace

RestConfig LoadKubeconfig(const std::string& path, const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw std::runtime_error("kubeconfig " + path + ": cannot open file");
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("kubeconfig " + path + ": invalid YAML: " + e.what());
  }
  if (!root.IsMap()) Fail(path, "not a kubeconfig (expected a mapping)");
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();

  std::string context_name = context;
  if (context_name.empty()) {
    context_name = Str(root, "current-context");
    if (context_name.empty()) Fail(path, "no current-context set and no context given");
  }
  YAML::Node ctx = FindNamed(root["contexts"], context_name, "context");
  if (!ctx) Fail(path, "context \"" + context_name + "\" not found");
  const std::string cluster_name = Str(ctx, "cluster");
  if (cluster_name.empty()) Fail(path, "context \"" + context_name + "\" has no cluster");
  YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
  if (!cluster) Fail(path, "cluster \"" + cluster_name + "\" (of context \"" + context_name + "\") not found");

  RestConfig cfg;
  cfg.server = Str(cluster, "server");
  if (cfg.server.empty()) Fail(path, "cluster \"" + cluster_name + "\" has no server");
  while (cfg.server.size() > 1 && cfg.server.back() == '/') cfg.server.pop_back();
  cfg.insecure_skip_tls_verify = Bool(cluster, "insecure-skip-tls-verify");
  cfg.ca_pem = DataOrFile(cluster, "certificate-authority", dir, path, "cluster \"" + cluster_name + "\"");

  const std::string user_name = Str(ctx, "user");
  if (!user_name.empty()) {
    YAML::Node user = FindNamed(root["users"], user_name, "user");
    if (!user) Fail(path, "user \"" + user_name + "\" (of context \"" + context_name + "\") not found");
    const std::string where = "user \"" + user_name + "\"";
    if (user["exec"] || user["auth-provider"])
      Fail(path, where + ": exec and auth-provider credential plugins are not supported");
    cfg.client_cert_pem = DataOrFile(user, "client-certificate", dir, path, where);
    cfg.client_key_pem = DataOrFile(user, "client-key", dir, path, where);
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty())
      Fail(path, where + " has a client certificate without a key, or a key without a certificate");
    cfg.bearer_token = Str(user, "token");
    const std::string token_file = Str(user, "tokenFile");
    if (!token_file.empty()) {
      cfg.token_file = Resolve(dir, token_file);
      if (cfg.bearer_token.empty()) {
        try {
          cfg.bearer_token = text::Trim(ReadFileFor(cfg.token_file, where + " tokenFile"));
        } catch (const std::runtime_error& e) {
          Fail(path, e.what());
        }
      }
    }
  }
  return cfg;
}

bool InCluster(const EnvLookup& env) {
  auto host = env("KUBERNETES_SERVICE_HOST");
  auto port = env("KUBERNETES_SERVICE_PORT");
  return host && !host->empty() && port && !port->empty();
}

RestConfig LoadInClusterConfig(const EnvLookup& env, const std::string& sa_dir) {
  auto host = env("KUBERNETES_SERVICE_HOST");
  auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty())
    throw std::runtime_error("in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  RestConfig cfg;
  const bool ipv6 = host->find(':') != std::string::npos;
  cfg.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  const fs::path dir(sa_dir);
  cfg.token_file = (dir / "token").string();
  cfg.bearer_token = text::Trim(ReadFileFor(cfg.token_file, "in-cluster config: service account token"));
  if (cfg.bearer_token.empty())
    throw std::runtime_error("in-cluster config: service account token " + cfg.token_file + " is empty");
  cfg.ca_pem = ReadFileFor((dir / "ca.crt").string(), "in-cluster config: service account CA");
  return cfg;
}

RestConfig ResolveConfig(const std::string& flag_kubeconfig, const EnvLookup& env, const std::string& sa_dir) {
  if (!flag_kubeconfig.empty()) return LoadKubeconfig(flag_kubeconfig);
  if (InCluster(env)) return LoadInClusterConfig(env, sa_dir);
  if (auto kc = env("KUBECONFIG"); kc && !kc->empty()) {
    std::string first = kc->substr(0, kc->find(':'));
    if (!first.empty()) return LoadKubeconfig(first);
  }
  auto home = env("HOME");
  if (!home || home->empty())
    throw std::runtime_error(
        "no Kubernetes config: no --kubeconfig, not in a cluster, no $KUBECONFIG and no $HOME for ~/.kube/config");
  const std::string path = (fs::path(*home) / ".kube" / "config").string();
  if (!fs::exists(path))
    throw std::runtime_error("no Kubernetes config: no --kubeconfig, not in a cluster, no $KUBECONFIG, and " + path +
                             " does not exist");
  return LoadKubeconfig(path);
}

}  // namespace ms::kube
