#!/usr/bin/env bash
# build-go-tool.sh - build (once) and cache one program of a tools module of
# the suite (a Go module under test/e2e/ whose go.mod names the program with a
# `tool` line and pins every dependency in go.sum), from the Go module proxy.
#
# Usage:  test/e2e/build-go-tool.sh [--force] MODULE_DIR PACKAGE [NAME]
#   e.g.  VEGETA="$(test/e2e/build-go-tool.sh test/e2e/load-tools github.com/tsenart/vegeta/v12 vegeta)"
#   MODULE_DIR  the tools module (its go.mod and go.sum)
#   PACKAGE     the main package to build (a `tool` of go.mod)
#   NAME        the binary's name (default: PACKAGE's last element)
#   --force     rebuild even when cached
#
# Cache (outside the repository, keyed by the version go.mod requires of the
# module that holds PACKAGE):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/NAME-<version>/NAME
# A binary that exists is not rebuilt, so a warm run is a no-op.
#
# Environment: MODELSERVICE_TOOLS_CACHE, GO, BUILD_PARALLELISM and the Go
# variables as in build-control-plane.sh (GOWORK=off, CGO_ENABLED=0,
# GOFLAGS=-mod=readonly and GOTOOLCHAIN=local are forced).
#
# Output: progress on stderr; stdout is exactly one line, the binary's
# absolute path. Exit status non-zero if it could not be built.
set -euo pipefail

force=0
[[ "${1:-}" == --force ]] && { force=1; shift; }
if (( $# < 2 )) || [[ "$1" == -h || "$1" == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
mod="$(cd "$1" && pwd)" pkg="$2" name="${3:-${2##*/}}"
log() { echo "build-go-tool: $*" >&2; }
source "$(dirname "${BASH_SOURCE[0]}")/go-build.lib.sh"
[[ -s "$mod/go.mod" && -s "$mod/go.sum" ]] || { log "$mod has no go.mod and go.sum"; exit 1; }

# The module of PACKAGE: the longest module path in go.mod that prefixes it.
version="$(awk -v p="$pkg" '
  $1 == "require" && NF >= 3 { m = $2; v = $3 } $1 != "require" && NF >= 2 { m = $1; v = $2 }
  v ~ /^v/ && (p == m || index(p, m "/") == 1) && length(m) > best { best = length(m); found = v }
  END { print found }' "$mod/go.mod")"
[[ -n "$version" ]] || { log "go.mod in $mod requires no module holding $pkg"; exit 1; }

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
bin="$cache/$name-$version/$name"
if (( ! force )) && [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi

find_go "$mod"

mkdir -p "$(dirname "$bin")"
go_build_lock "$cache" ".build-$name.lock"  # one builder at a time per binary
if (( ! force )) && [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi
go_build_env
log "building $name $version ($pkg) with $("$gocmd" version)"
start=$SECONDS
tmp="$bin.tmp.$$"
if ! (cd "$mod" && "$gocmd" build -p "${BUILD_PARALLELISM:-2}" -trimpath -ldflags "-s -w" -o "$tmp" "$pkg"); then
  rm -f "$tmp"; log "FAILED to build $name"; exit 1
fi
mv -f "$tmp" "$bin"
log "built $name $version in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))"
echo "$bin"
