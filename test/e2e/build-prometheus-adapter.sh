#!/usr/bin/env bash
# build-prometheus-adapter.sh - build (once) and cache prometheus-adapter's
# `adapter` (sigs.k8s.io/prometheus-adapter, cmd/adapter), the External (and
# custom) metrics API server of kubernetes-sigs that
# docs/user/autoscaling.md tells users to install, from the Go module proxy;
# the sibling of build-prometheus.sh and build-control-plane.sh with the same
# conventions. The end-to-end suite serves external.metrics.k8s.io with it
# (test/e2e/lib.sh's start_prometheus_adapter), configured with the rule file
# docs/user/prometheus-adapter-rules.yaml.
#
# Usage:  test/e2e/build-prometheus-adapter.sh [--force]
#         eval "$(test/e2e/build-prometheus-adapter.sh)"
#   --force   rebuild even when cached
#
# Version: from test/e2e/prometheus-adapter-tools/go.mod (a module of its own
# whose `tool` line names cmd/adapter; go.sum pins every dependency, at the
# versions the adapter's own go.mod asks for). The module proxy refuses the
# version list of sigs.k8s.io/prometheus-adapter (403) but serves v0.12.0
# itself, so go.mod names that exact version.
#
# Cache (outside the repository):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/
#       prometheus-adapter-<version>-<hash of go.mod and go.sum>/adapter
# The adapter has no --version flag, so the key holds the version and a hash
# of the pinned module files: a cached binary is not rebuilt (a warm run is a
# no-op); older prometheus-adapter-* entries are removed after a build.
#
# Environment: MODELSERVICE_TOOLS_CACHE, GO, BUILD_PARALLELISM and the Go
# variables as in build-control-plane.sh (GOWORK=off, CGO_ENABLED=0,
# GOFLAGS=-mod=readonly and GOTOOLCHAIN=local are forced).
#
# Output: progress on stderr; stdout is exactly ONE line:
#   export PROMETHEUS_ADAPTER=/abs/adapter
# Exit status is non-zero if it could not be built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="$here/prometheus-adapter-tools"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-prometheus-adapter.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done
log() { echo "build-prometheus-adapter: $*" >&2; }
source "$here/go-build.lib.sh"

version="$(gomod_version "$mod" sigs.k8s.io/prometheus-adapter)"
[[ -n "$version" ]] || { log "cannot read the sigs.k8s.io/prometheus-adapter version from $mod/go.mod"; exit 1; }
hash="$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
dir="$cache/prometheus-adapter-$version-$hash"
bin="$dir/adapter"
print_result() { printf 'export PROMETHEUS_ADAPTER=%q\n' "$bin"; }
if (( ! force )) && [[ -x "$bin" ]]; then
  print_result
  exit 0
fi

find_go "$mod"

mkdir -p "$dir"
# The same lock as build-control-plane.sh: one Go build at a time per cache.
go_build_lock "$cache" .build.lock
if (( ! force )) && [[ -x "$bin" ]]; then print_result; exit 0; fi

go_build_env
log "building prometheus-adapter $version ($hash) with $("$gocmd" version) (cold: about 1.5 minutes on 2 idle cores, plus ~300 MB of module sources the first time)"
start=$SECONDS
tmp="$bin.tmp.$$"
if ! (cd "$mod" && "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -ldflags "-s -w" -o "$tmp" sigs.k8s.io/prometheus-adapter/cmd/adapter); then
  rm -f "$tmp"
  log "FAILED to build sigs.k8s.io/prometheus-adapter/cmd/adapter $version"
  exit 1
fi
mv -f "$tmp" "$bin"
log "built $bin in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))"
for old in "$cache"/prometheus-adapter-*; do
  [[ "$old" == "$dir" || ! -d "$old" ]] || rm -rf "$old"
done
print_result
