#!/usr/bin/env bash
# configure-build.sh - configures a build folder with the one configuration
# the project's scripts share for build/: scripts/test.sh (which builds and
# tests everything there), scripts/run-local.sh and the end-to-end suite
# (which build the two programs there). All of them call this, so a folder
# one of them configured is never reconfigured differently (and rebuilt from
# scratch) or broken by another, in any order.
#
# Usage: scripts/configure-build.sh DIR [CMAKE_ARGS...]
#   Ninja, CMAKE_BUILD_TYPE=RelWithDebInfo (-O2), MS_WERROR=ON,
#   MS_DEBUG_INFO=lines (-g1: backtraces with lines, no local variables; pass
#   -DMS_DEBUG_INFO=full for a debugger's view of locals); every
#   value is passed on every call, so a different value cached in DIR (say a
#   Release configure from an older script, or a hand-made one) is replaced
#   rather than inherited. CMAKE_ARGS come last and win (scripts/test.sh
#   passes -DCMAKE_BUILD_TYPE=Debug -DMS_SANITIZE=ON and clang for
#   build-asan/).
#   A DIR configured with another generator is configured afresh.
#   With ccache installed (scripts/setup.sh installs it) every compile goes
#   through it (`ccache-env`: one cache, $CCACHE_DIR or ~/.cache/ccache,
#   shared by build/, build-asan/, build-tsan/, build-fuzz/, the image's
#   build stage and fresh clones at other paths); MS_CCACHE=0 turns it off.
# Output: cmake's, on stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 1 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
dir="$1"; shift

if [[ -f "$dir/CMakeCache.txt" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt"; then
  echo "configure-build: $dir was configured with another generator: configuring it afresh" >&2
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
# A compiler asked for (-DCMAKE_CXX_COMPILER=..., as scripts/test.sh does for
# the sanitizer builds) other than the one DIR was configured with: CMake
# cannot switch compilers in place, so DIR is configured afresh.
for arg in "$@"; do
  [[ $arg == -DCMAKE_CXX_COMPILER=* && -f "$dir/CMakeCache.txt" ]] || continue
  want="$(command -v "${arg#*=}" || echo "${arg#*=}")"
  have="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")"
  have="$(command -v "$have" || echo "$have")"
  if [[ "$(readlink -f "$want")" != "$(readlink -f "$have")" ]]; then
    echo "configure-build: $dir was configured with ${have:-another compiler}, not $want: configuring it afresh" >&2
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
done
launcher=()
if [[ ${MS_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$root/scripts/ccache-env")
else
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
fi
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMS_WERROR=ON -DMS_DEBUG_INFO=lines \
  "${launcher[@]}" "$@"
