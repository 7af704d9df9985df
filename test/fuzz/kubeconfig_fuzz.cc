// libFuzzer: the kubeconfig parser (controller/kube/config.h) on random
// files. It may refuse a file (std::runtime_error with a message) but must
// not crash, hang or leak; what it accepts has a server.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "controller/kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One file per process, rewritten for each input (paths in the kubeconfig
  // resolve next to it).
  static const std::string path = [] {
    char dir[] = "/tmp/kubeconfig-fuzz-XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    return std::string(dir) + "/kubeconfig";
  }();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const ms::kube::RestConfig config = ms::kube::LoadKubeconfig(path);
    if (config.server.empty()) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
