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
# Usage: test/health/run.sh          check every fixture
#        test/health/run.sh --bin    build if needed, print the binary's path
#                                    (the e2e suite's health_stage runs it on
#                                    the live objects)
# Cache: ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/health-check-<sha>/health-check
# Environment: GO (else go on PATH, else /usr/local/go/bin/go: test/e2e/go-build.lib.sh's find_go).
# Registered in ctest as health_verdicts (test/CMakeLists.txt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sum="$(cd "$here" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)"
cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
bin="$cache/health-check-$sum/health-check"
log() { echo "run.sh: $*" >&2; }
# shellcheck source=../e2e/go-build.lib.sh
source "$root/test/e2e/go-build.lib.sh"
if [[ ! -x "$bin" ]]; then
  mkdir -p "$(dirname "$bin")"
  # ctest (in each of .ci/run's builds) and the e2e suite may ask at once:
  # one builds, the others wait and find it built.
  go_build_lock "$cache" "health-check.lock"
fi
if [[ ! -x "$bin" ]]; then
  find_go "$here"
  log "building health-check ($sum) with $("$gocmd" version)"
  (cd "$here" && go_build_env && "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -ldflags "-s -w" -o "$bin.tmp.$$" .)
  mv -f "$bin.tmp.$$" "$bin"
fi
if [[ "${1:-}" == --bin ]]; then
  echo "$bin"
  exit 0
fi
# docs/user/status.md shows the healthCheckExprs tested here, line for line.
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  grep -qxF -- "$line" "$root/docs/user/status.md" ||
    { echo "run.sh: docs/user/status.md does not show this line of flux-health-check-exprs.yaml: $line" >&2; exit 1; }
done <"$here/flux-health-check-exprs.yaml"
exec "$bin" "$root/charts/modelservice-operator/files/argocd-health.lua" "$here/flux-health-check-exprs.yaml" "$here"/fixtures/*.json
