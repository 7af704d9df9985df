#!/usr/bin/env bash
# build-helm.sh - build (once) and cache Helm v3, compiled from the Go module
# proxy (helm.sh/helm/v3, cmd/helm) like build-control-plane.sh builds the
# cluster's binaries. Used by tools/gen-manifests.py (helm template),
# scripts/test.sh (helm lint --strict) and the e2e case 16-helm-install.
#
# Usage:  test/e2e/build-helm.sh [--force]
#         eval "$(test/e2e/build-helm.sh)"
#   --force   rebuild even when cached
#
# Version: from test/e2e/helm-tools/go.mod (its own module: Helm v3.22 needs
# Go >= 1.26 and k8s.io/* v0.37, apart from the control plane's v0.34).
#
# Cache (outside the repository, keyed by version):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/helm-<version>/helm
# A binary that exists and reports the expected version is not rebuilt, so a
# warm run is a no-op.
#
# The default Kubernetes version that `helm template` and `helm lint` assume
# (.Capabilities.KubeVersion, checked against the chart's kubeVersion) is set
# from the k8s.io/client-go version in go.mod, as Helm's own Makefile does
# (client-go v0.37 -> Kubernetes 1.37).
#
# Environment: MODELSERVICE_TOOLS_CACHE, GO, BUILD_PARALLELISM and the Go
# variables as in build-control-plane.sh (GOWORK=off, CGO_ENABLED=0,
# GOFLAGS=-mod=readonly and GOTOOLCHAIN=local are forced).
#
# Output: progress on stderr; stdout is exactly one line, `export HELM=/abs/helm`.
# Exit status is non-zero if Helm could not be built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="$here/helm-tools"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-helm.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done
log() { echo "build-helm: $*" >&2; }
source "$here/go-build.lib.sh"

helm_version="$(gomod_version "$mod" helm.sh/helm/v3)"
client_go="$(gomod_version "$mod" k8s.io/client-go)"
[[ -n "$helm_version" && -n "$client_go" ]] || { log "cannot read helm.sh/helm/v3 and k8s.io/client-go from $mod/go.mod"; exit 1; }
kube_minor="${client_go#v0.}"; kube_minor="${kube_minor%%.*}"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
bin="$cache/helm-$helm_version/helm"
version_ok() { [[ -x "$bin" && "$("$bin" version --template '{{.Version}}' 2>/dev/null)" == "$helm_version" ]]; }
if (( ! force )) && version_ok; then
  printf 'export HELM=%q\n' "$bin"
  exit 0
fi

find_go "$mod"  # Helm v3.22 needs Go >= 1.26 (helm-tools/go.mod says so)

mkdir -p "$(dirname "$bin")"
go_build_lock "$cache" .build-helm.lock  # one builder at a time per cache
if (( ! force )) && version_ok; then printf 'export HELM=%q\n' "$bin"; exit 0; fi
go_build_env
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kube_minor"
done
log "building helm $helm_version with $("$gocmd" version) (cold: a few minutes on 2 cores)"
start=$SECONDS
tmp="$bin.tmp.$$"
if ! (cd "$mod" && "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -ldflags "$ldflags" -o "$tmp" helm.sh/helm/v3/cmd/helm); then
  rm -f "$tmp"; log "FAILED to build helm"; exit 1
fi
mv -f "$tmp" "$bin"
version_ok || { log "built $bin but it reports $("$bin" version 2>&1)"; exit 1; }
log "built helm in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))"
printf 'export HELM=%q\n' "$bin"
