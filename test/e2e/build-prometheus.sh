#!/usr/bin/env bash
# build-prometheus.sh - build (once) and cache Prometheus 3 (`prometheus` and
# `promtool`) from the Go module github.com/prometheus/prometheus, the
# sibling of build-control-plane.sh and build-helm.sh with the same
# conventions. The end-to-end suite runs this Prometheus (test/e2e/run.sh);
# the repository's monitoring checks run this promtool (test/monitoring/run.sh,
# ctest's monitoring_rules and the metrics tests, through scripts/test.sh).
#
# Usage:  test/e2e/build-prometheus.sh [--force]
#         eval "$(test/e2e/build-prometheus.sh)"
#   --force   rebuild even when cached
#
# Version: from test/e2e/prometheus-tools/go.mod (a module of its own whose
# `tool` lines name cmd/prometheus and cmd/promtool; its go.sum pins every
# dependency). The module's tag v0.3MM.P is Prometheus 3.MM.P (v0.316.0 is
# 3.16.0), which the build sets as the binaries' version (-ldflags -X, as
# upstream's .promu.yml does), so `prometheus --version` reads as upstream's.
#
# What is built: both binaries with Kubernetes service discovery
# (kubernetes_sd_configs) and, of the other discovery plugins, none: the
# module's tags `remove_all_sd,enable_kubernetes_sd` (plus `netgo`, as
# upstream's release builds). Static, file and HTTP discovery are always in.
# Measured on the idle 2-core machine with the module sources downloaded and
# an empty Go build cache: 196 s and 76 + 54 MB against 267 s and 105 + 88 MB
# with every plugin (AWS, Azure, GCE, Consul, ...). Not the `builtinassets`
# tag: the web UI's compiled assets are not in the module (they are built
# with npm), so the UI pages are empty; the HTTP API, which is all the suite
# and the checks use, is whole.
#
# Cache (outside the repository, keyed by version):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/prometheus-<module version>/{prometheus,promtool}
# Binaries that exist and report the expected version and build tags are not
# rebuilt, so a warm run is a no-op.
#
# Environment: MODELSERVICE_TOOLS_CACHE, GO, BUILD_PARALLELISM and the Go
# variables as in build-control-plane.sh (GOWORK=off, CGO_ENABLED=0,
# GOFLAGS=-mod=readonly and GOTOOLCHAIN=local are forced). The module needs
# Go >= 1.26.
#
# Output: progress on stderr; stdout is exactly ONE line:
#   export PROMETHEUS_BIN=/abs/prometheus PROMTOOL_BIN=/abs/promtool
# Exit status is non-zero if they could not be built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="$here/prometheus-tools"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-prometheus.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done
log() { echo "build-prometheus: $*" >&2; }
source "$here/go-build.lib.sh"
mod_version="$(gomod_version "$mod" github.com/prometheus/prometheus)"
[[ "$mod_version" =~ ^v0\.([1-9][0-9]*)([0-9][0-9])\.([0-9]+)$ ]] \
  || { log "cannot read github.com/prometheus/prometheus v0.MNN.P from $mod/go.mod (got '${mod_version}')"; exit 1; }
# v0.316.0 -> 3.16.0 (the module's tags are v0.<major><minor, two digits>.<patch>).
prom_version="${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
dir="$cache/prometheus-$mod_version"
prom="$dir/prometheus" tool="$dir/promtool"

tags=netgo,remove_all_sd,enable_kubernetes_sd
version_ok() {  # version_ok NAME PATH: "NAME, version X.Y.Z (...)", built with $tags
  local out
  [[ -x "$2" ]] || return 1
  out="$("$2" --version 2>/dev/null)" || return 1
  [[ "$out" == "$1, version $prom_version "* && "$out" =~ $'\n'\ *tags:\ *"$tags"($'\n'|$) ]]
}
print_result() { printf 'export PROMETHEUS_BIN=%q PROMTOOL_BIN=%q\n' "$prom" "$tool"; }
if (( ! force )) && version_ok prometheus "$prom" && version_ok promtool "$tool"; then
  print_result
  exit 0
fi

find_go "$mod"

mkdir -p "$dir"
# The same lock as build-control-plane.sh: one Go build at a time per cache.
go_build_lock "$cache" .build.lock
if (( ! force )) && version_ok prometheus "$prom" && version_ok promtool "$tool"; then print_result; exit 0; fi

go_build_env
v=github.com/prometheus/common/version
ldflags="-s -w -X $v.Version=$prom_version -X $v.Revision=$mod_version -X $v.Branch=HEAD -X $v.BuildUser=modelservice-e2e"
log "building prometheus and promtool $prom_version ($mod_version) with $("$gocmd" version) (cold: about 4 minutes on 2 idle cores, plus up to 1.9 GB of module sources to download the first time)"
start=$SECONDS
tmp="$(mktemp -d "$dir/.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$mod" && "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp/" \
        github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool); then
  log "FAILED to build prometheus and promtool"
  exit 1
fi
mv -f "$tmp/prometheus" "$prom"
mv -f "$tmp/promtool" "$tool"
for name in prometheus promtool; do
  version_ok "$name" "$dir/$name" || { log "built $dir/$name but it reports: $("$dir/$name" --version 2>&1 | head -n 1)"; exit 1; }
done
log "built prometheus ($(du -h "$prom" | cut -f1)) and promtool ($(du -h "$tool" | cut -f1)) in $((SECONDS - start))s"
print_result
