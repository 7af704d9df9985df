// Where the controller finds the API server and its credentials: a
// kubeconfig file, or the in-cluster service account.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ms::kube {

struct RestConfig {
  std::string server;  // https://host:port[/prefix]
  std::string ca_pem;  // PEM bundle to verify the server; empty: system CAs
  std::string client_cert_pem, client_key_pem;
  std::string bearer_token;
  std::string token_file;  // re-read when it changes (service account token rotation)
  bool insecure_skip_tls_verify = false;
  double qps = 20;  // per API group-version; <= 0: no client-side limit
  int burst = 30;
  std::string user_agent = "modelservice-controller";
};

// Reads an environment variable; nullopt when unset. Injected for tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (std::getenv).
EnvLookup ProcessEnv();

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Loads a kubeconfig file. `context` empty: the file's current-context.
// Relative file paths in the file are resolved against the file's directory.
// Throws std::runtime_error naming the file and what is missing or wrong.
RestConfig LoadKubeconfig(const std::string& path, const std::string& context = "");

// True when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set.
bool InCluster(const EnvLookup& env);

// The in-cluster config: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
// `sa_dir`/ca.crt and `sa_dir`/token (token_file set so that rotation is seen).
// Throws std::runtime_error when a variable or file is missing.
RestConfig LoadInClusterConfig(const EnvLookup& env, const std::string& sa_dir = kServiceAccountDir);

// The order: `flag_kubeconfig` when non-empty, else in-cluster when its
// variables are set, else the first path of $KUBECONFIG, else $HOME/.kube/config.
RestConfig ResolveConfig(const std::string& flag_kubeconfig, const EnvLookup& env = ProcessEnv(),
                         const std::string& sa_dir = kServiceAccountDir);

}  // namespace ms::kube
