#!/usr/bin/env bash
# build-external-metrics.sh - build (once) and cache the e2e suite's External
# metrics API server, test/e2e/external-metrics (Go module
# modelservice.dev/e2e-external-metrics, built on
# sigs.k8s.io/custom-metrics-apiserver), the sibling of
# build-control-plane.sh with the same conventions.
#
# Usage:  test/e2e/build-external-metrics.sh [--force]
#         eval "$(test/e2e/build-external-metrics.sh)"
#
# Cache (outside the repository):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/
#       external-metrics-<custom-metrics-apiserver version>-<source hash>/modelservice-external-metrics
# The key holds the library's version (from the module's go.mod) and a hash
# of the module's own files (go.mod, go.sum, *.go), because this program is
# ours and changes with the repository. A cached binary is not rebuilt, so a
# warm run is a no-op; on a miss the module's tests (go test) run first and
# the binary is built only if they pass; older external-metrics-* entries are
# then removed.
#
# Environment: as build-control-plane.sh (MODELSERVICE_TOOLS_CACHE, GO,
# BUILD_PARALLELISM, the Go variables; GOWORK=off, CGO_ENABLED=0,
# GOFLAGS=-mod=readonly and GOTOOLCHAIN=local are forced).
#
# Output: progress on stderr; stdout is exactly ONE line:
#   export EXTERNAL_METRICS=/abs/modelservice-external-metrics
# Exit status is non-zero if it could not be tested or built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/external-metrics"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-external-metrics.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { echo "build-external-metrics: $*" >&2; }

lib_version="$(awk '$1 == "sigs.k8s.io/custom-metrics-apiserver" && $2 ~ /^v/ { print $2; exit }' "$src/go.mod")"
[[ -n "$lib_version" ]] || { log "cannot read the sigs.k8s.io/custom-metrics-apiserver version from $src/go.mod"; exit 1; }
hash="$(cd "$src" && LC_ALL=C ls go.mod go.sum ./*.go | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
dir="$cache/external-metrics-$lib_version-$hash"
bin="$dir/modelservice-external-metrics"

print_result() { printf 'export EXTERNAL_METRICS=%q\n' "$bin"; }

if (( ! force )) && [[ -x "$bin" ]]; then
  print_result
  exit 0
fi

go_minor() {  # go_minor GO: the minor version of a Go toolchain (1.26.8 -> 26), or 0.
  local v
  v="$("$1" env GOVERSION 2>/dev/null)" || { echo 0; return; }
  v="${v#go1.}"; v="${v%%[!0-9]*}"
  echo "${v:-0}"
}
need_minor="$(awk '$1 == "go" { split($2, v, "."); print v[2]; exit }' "$src/go.mod")"
gocmd=""
for cand in "${GO:-}" "$(command -v go || true)" /usr/local/go/bin/go; do
  [[ -n "$cand" && -x "$(command -v "$cand" || true)" ]] || continue
  if (( $(go_minor "$cand") >= need_minor )); then gocmd="$cand"; break; fi
done
[[ -n "$gocmd" ]] || { log "no Go >= 1.$need_minor found (on PATH or /usr/local/go/bin/go; set GO=/path/to/go)"; exit 1; }

mkdir -p "$dir"
# The same lock as build-control-plane.sh: one Go build at a time per cache.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.build.lock"
  flock 9
fi
if (( ! force )) && [[ -x "$bin" ]]; then print_result; exit 0; fi

export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
jobs="${BUILD_PARALLELISM:-2}"
start=$SECONDS
log "testing and building modelservice-external-metrics (custom-metrics-apiserver $lib_version, source $hash) with $("$gocmd" version); a cold build downloads ~50 MB of modules (mostly the k8s.io ones test/e2e/tools also uses) and takes a few minutes on 2 cores"
if ! (cd "$src" && "$gocmd" test -p "$jobs" -trimpath -count=1 ./... >&2); then
  log "FAILED: go test in $src"
  exit 1
fi
tmp="$bin.tmp.$$"
if ! (cd "$src" && "$gocmd" build -p "$jobs" -trimpath -ldflags "-s -w" -o "$tmp" .); then
  rm -f "$tmp"
  log "FAILED to build $src"
  exit 1
fi
mv -f "$tmp" "$bin"
log "built $bin in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))"
for old in "$cache"/external-metrics-*; do
  [[ "$old" == "$dir" || ! -d "$old" ]] || rm -rf "$old"
done
print_result
