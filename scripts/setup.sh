#!/usr/bin/env bash
# Installs everything the project needs to build, test and run, from Debian's
# packages. A no-op (no apt call) when everything is already installed.
# Usage: scripts/setup.sh [--image | --release]
#   --image    also what scripts/build-image.sh needs to build the container
#              image without a Docker engine (debootstrap, buildah)
#   --release  also what scripts/release.sh needs: the above, qemu-user-static
#              (the arm64 image's programs run under qemu-user), skopeo (the
#              OCI layout copied to a registry with its digests), jq; and,
#              built from the Go module proxy at the pinned versions and
#              cached like the e2e suite's tools: cosign
#              (test/e2e/release-tools), the distribution registry
#              (test/e2e/registry-tools) and Helm (test/e2e/build-helm.sh)
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates openssl python3
  libcpp-httplib-dev libssl-dev libvalijson-dev nlohmann-json3-dev rapidjson-dev libspdlog-dev libjemalloc-dev
  libgtest-dev libgmock-dev libcurl4-openssl-dev libyaml-cpp-dev libbenchmark-dev prometheus-cpp-dev zlib1g-dev
  python3-prometheus-client wrk clang-format clang-tidy
  # The compiler cache every build folder shares (scripts/configure-build.sh),
  # kept in ~/.cache/ccache between runs.
  ccache
  clang-14 libclang-rt-14-dev libfuzzer-14-dev python3-h11 python3-yaml
  # e2e 65-prometheus-auth: the bcrypt hash of a Prometheus web configuration's basic_auth_users.
  python3-bcrypt
  # bench/webhook-peer.sh's reference TLS server (a configuration of its own,
  # started by the script, never as a system service).
  nginx-light
  # test/support/start-no-thread.sh: the tests left out of the TSan build start no thread.
  strace
  # The pictures of docs/ (tools/gen-docs-images.py): the architecture
  # diagram from its Graphviz source, the benchmark plots.
  graphviz python3-matplotlib
  # The local cluster's real node (test/e2e/cluster.sh up --real-node): a
  # container runtime the kubelet drives, started by the script itself (never
  # as a system service), and the pod network's CNI plugins.
  containerd runc containernetworking-plugins iptables iproute2
)
case "${1:-}" in
  "") ;;
  --image) PACKAGES+=(debootstrap buildah) ;;
  --release) PACKAGES+=(debootstrap buildah qemu-user-static skopeo jq) ;;
  *) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present" >&2
fi

# The end-to-end suite builds its cluster (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd and KWOK) from Go modules
# (test/e2e/build-control-plane.sh), and Prometheus 3 with promtool
# (test/e2e/build-prometheus.sh: the suite's Prometheus, and the promtool of
# scripts/test.sh's checks) and prometheus-adapter
# (test/e2e/build-prometheus-adapter.sh) likewise, each when first needed and
# then cached; KWOK v0.8 and Prometheus 3.16 need Go >= 1.26, which Debian
# bookworm does not package. Say so early rather than fail late.
GO=$(command -v go || echo /usr/local/go/bin/go)
if [[ -x $GO ]]; then
  ver=$("$GO" env GOVERSION 2>/dev/null | sed 's/^go//')
  major=${ver%%.*}; rest=${ver#*.}; minor=${rest%%.*}
  if ((major < 1 || (major == 1 && minor < 26))); then
    if [[ -x /usr/local/go/bin/go ]] && [[ "$(/usr/local/go/bin/go env GOVERSION 2>/dev/null)" =~ ^go1\.(2[6-9]|[3-9][0-9]) ]]; then
      :  # build-control-plane.sh falls back to /usr/local/go/bin/go
    else
      echo "setup: warning: Go $ver found; the end-to-end cluster needs Go >= 1.26 (KWOK)" >&2
    fi
  fi
else
  echo "setup: warning: Go not found; the end-to-end cluster needs Go >= 1.26" >&2
fi

# scripts/release.sh's Go tools, built once and cached (no-ops when cached).
if [[ "${1:-}" == --release ]]; then
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  "$root/test/e2e/build-go-tool.sh" "$root/test/e2e/release-tools" github.com/sigstore/cosign/v2/cmd/cosign cosign >/dev/null
  "$root/test/e2e/build-go-tool.sh" "$root/test/e2e/registry-tools" github.com/distribution/distribution/v3/cmd/registry registry >/dev/null
  "$root/test/e2e/build-helm.sh" >/dev/null
fi
