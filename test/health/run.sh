#!/usr/bin/env bash
# run.sh - what kstatus, Argo CD, Flux and `kubectl wait` say of each
# ModelService stage (docs/user/status.md, "Health"): builds health-check
# (main.go: sigs.k8s.io/cli-utils' status.Compute, the chart's Argo CD Lua
# (charts/modelservice-operator/files/argocd-health.lua) with
# gopher-lua, the Flux healthCheckExprs with cel-go, kubectl's wait rule),
# from the Go modules pinned in go.mod and go.sum, once, cached by the hash
# of its sources, and runs it over fixtures/*.json, each the object of one
# stage and the verdicts expected of each tool.
#
# Usage: test/health/run.sh
# Cache: ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/health-check-<sha>/health-check
# Environment: GO (else go on PATH, else /usr/local/go/bin/go).
# Registered in ctest as health_verdicts (test/CMakeLists.txt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sum="$(cd "$here" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)"
cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
bin="$cache/health-check-$sum/health-check"
if [[ ! -x "$bin" ]]; then
  gocmd="${GO:-}"
  if [[ -z "$gocmd" ]]; then
    for cand in "$(command -v go || true)" /usr/local/go/bin/go; do
      [[ -n "$cand" && -x "$cand" ]] && { gocmd="$cand"; break; }
    done
  fi
  [[ -n "$gocmd" ]] || { echo "run.sh: no Go found (on PATH or /usr/local/go/bin/go; set GO=/path/to/go)" >&2; exit 1; }
  mkdir -p "$(dirname "$bin")"
  echo "run.sh: building health-check ($sum) with $("$gocmd" version)" >&2
  (cd "$here" && GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local \
    "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -ldflags "-s -w" -o "$bin.tmp.$$" .)
  mv -f "$bin.tmp.$$" "$bin"
fi
# docs/user/status.md shows the healthCheckExprs tested here, line for line.
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  grep -qxF -- "$line" "$root/docs/user/status.md" ||
    { echo "run.sh: docs/user/status.md does not show this line of flux-health-check-exprs.yaml: $line" >&2; exit 1; }
done <"$here/flux-health-check-exprs.yaml"
exec "$bin" "$root/charts/modelservice-operator/files/argocd-health.lua" "$here/flux-health-check-exprs.yaml" "$here"/fixtures/*.json
