#!/usr/bin/env bash
# build-control-plane.sh - build (once) and cache the e2e cluster's binaries:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and
# KWOK, and with --real-node the kubelet, compiled from Go modules (like
# envtest's binaries, but with nothing downloaded except from the Go module
# proxy).
#
# Usage:  test/e2e/build-control-plane.sh [--force] [--light] [--real-node]
#         eval "$(test/e2e/build-control-plane.sh)"
#   --force       rebuild (the selected binaries) even when cached
#   --light       only what the light cluster needs (kube-apiserver, kubectl, etcd)
#   --real-node   the kubelet too (cluster.sh up --real-node)
#
# Versions: taken from the go.mod files (the single source of truth):
#   test/e2e/tools/go.mod       k8s.io/kubernetes -> kube-apiserver, kube-controller-manager,
#                                                    kube-scheduler, kubectl, kubelet (e.g. v1.34.4)
#                               go.etcd.io/etcd/server/v3 -> etcd   (e.g. v3.6.4)
#   test/e2e/kwok-tools/go.mod  sigs.k8s.io/kwok -> kwok            (e.g. v0.8.0; its own
#                               module: it needs Go >= 1.26 and k8s.io/* v0.36)
#
# Cache (outside the repository, keyed by version):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/
#       k8s-<k8s version>/{kube-apiserver,kube-controller-manager,kube-scheduler,kubectl,kubelet}
#       etcd-<etcd version>/etcd
#       kwok-<kwok version>/kwok
# A binary that exists and reports the expected version is not rebuilt, so a
# warm run is a no-op (well under a second).
#
# Environment:
#   MODELSERVICE_TOOLS_CACHE  cache root (default $HOME/.cache/modelservice-tools)
#   GO                        go command (default: `go` on PATH if it is new
#                             enough, else /usr/local/go/bin/go)
#   BUILD_PARALLELISM         go build -p (default 2; keeps memory sane on small machines)
#   The usual Go variables (GOPROXY, GOMODCACHE, GOCACHE, ...) are honoured;
#   GOWORK=off, CGO_ENABLED=0 and GOFLAGS=-mod=readonly are forced, so the
#   committed go.mod/go.sum are used as-is (no checksum database needed).
#
# Output: progress goes to stderr. stdout is exactly ONE line (so it is also
# the last line), a sourceable assignment of absolute paths (with --light the
# last four may not exist, KUBELET only with --real-node; one line, wrapped here):
#   export KUBE_APISERVER=/abs/kube-apiserver ETCD=/abs/etcd KUBECTL=/abs/kubectl \
#          KUBE_CONTROLLER_MANAGER=/abs/... KUBE_SCHEDULER=/abs/... KWOK=/abs/kwok \
#          KUBELET=/abs/kubelet
# Exit status is non-zero if anything could not be built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/tools"
kwok_tools="$here/kwok-tools"
force=0 light=0 real_node=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --light) light=1 ;;
    --real-node) real_node=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-control-plane.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { echo "build-control-plane: $*" >&2; }

# Versions from go.mod (plain text parsing: no `go` invocation on the fast path).
modversion() {  # modversion GO.MOD MODULE
  awk -v m="$2" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$1"
}
k8s_version="$(modversion "$tools/go.mod" k8s.io/kubernetes)"
etcd_version="$(modversion "$tools/go.mod" go.etcd.io/etcd/server/v3)"
kwok_version="$(modversion "$kwok_tools/go.mod" sigs.k8s.io/kwok)"
if [[ -z "$k8s_version" || -z "$etcd_version" || -z "$kwok_version" ]]; then
  log "cannot read the k8s.io/kubernetes / go.etcd.io/etcd/server/v3 versions from $tools/go.mod or sigs.k8s.io/kwok from $kwok_tools/go.mod"
  exit 1
fi
k8s_minor="${k8s_version#v1.}"; k8s_minor="${k8s_minor%%.*}"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
k8s_dir="$cache/k8s-$k8s_version"
etcd_dir="$cache/etcd-$etcd_version"
kwok_dir="$cache/kwok-$kwok_version"

bin_of() {  # bin_of NAME: the cache path of a binary
  case "$1" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet) echo "$k8s_dir/$1" ;;
    etcd) echo "$etcd_dir/etcd" ;;
    kwok) echo "$kwok_dir/kwok" ;;
  esac
}

# version_ok NAME PATH: does the cached binary exist and report the expected version?
version_ok() {
  local out
  [[ -x "$2" ]] || return 1
  case "$1" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubelet)
            out="$("$2" --version 2>/dev/null)" || return 1
            [[ "$out" == "Kubernetes $k8s_version" ]] ;;
    kubectl) out="$("$2" version --client 2>/dev/null)" || return 1
            [[ "$out" == *"Client Version: $k8s_version"* ]] ;;
    etcd)   out="$("$2" --version 2>/dev/null)" || return 1
            [[ "$out" == *"etcd Version: ${etcd_version#v}"* ]] ;;
    kwok)   out="$("$2" --version 2>/dev/null)" || return 1
            [[ "$out" == *"kwok version $kwok_version "* ]] ;;
  esac
}

print_result() {
  printf 'export KUBE_APISERVER=%q ETCD=%q KUBECTL=%q KUBE_CONTROLLER_MANAGER=%q KUBE_SCHEDULER=%q KWOK=%q KUBELET=%q\n' \
    "$(bin_of kube-apiserver)" "$(bin_of etcd)" "$(bin_of kubectl)" \
    "$(bin_of kube-controller-manager)" "$(bin_of kube-scheduler)" "$(bin_of kwok)" "$(bin_of kubelet)"
}

wanted=(kube-apiserver kubectl etcd)
(( light )) || wanted+=(kube-controller-manager kube-scheduler kwok)
if (( real_node )); then wanted+=(kubelet); fi
todo=()
for name in "${wanted[@]}"; do
  if (( force )) || ! version_ok "$name" "$(bin_of "$name")"; then todo+=("$name"); fi
done
if (( ${#todo[@]} == 0 )); then
  print_result
  exit 0
fi

# go_minor GO: the minor version of a Go toolchain (1.26.8 -> 26), or 0.
go_minor() {
  local v
  v="$("$1" env GOVERSION 2>/dev/null)" || { echo 0; return; }
  v="${v#go1.}"; v="${v%%[!0-9]*}"
  echo "${v:-0}"
}
# KWOK v0.8 needs Go >= 1.26; the Kubernetes and etcd binaries need >= 1.24.
need_minor=24
for name in "${todo[@]}"; do [[ "$name" == kwok ]] && need_minor=26; done
if [[ -n "${GO:-}" ]]; then gocmd="$GO"
else
  gocmd=""
  for cand in "$(command -v go || true)" /usr/local/go/bin/go; do
    [[ -n "$cand" && -x "$cand" ]] || continue
    if (( $(go_minor "$cand") >= need_minor )); then gocmd="$cand"; break; fi
  done
  if [[ -z "$gocmd" ]]; then
    log "no Go >= 1.$need_minor found (on PATH or /usr/local/go/bin/go; set GO=/path/to/go)"
    exit 1
  fi
fi
if (( $(go_minor "$gocmd") < need_minor )); then
  log "$gocmd is $("$gocmd" env GOVERSION 2>/dev/null); building ${todo[*]} needs Go >= 1.$need_minor"
  exit 1
fi

mkdir -p "$k8s_dir" "$etcd_dir" "$kwok_dir"
# Serialise concurrent builders (e.g. parallel CI jobs sharing a cache).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.build.lock"
  flock 9
fi

export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
# Never fetch another toolchain because of a go.mod's `go` line.
export GOTOOLCHAIN=local
jobs="${BUILD_PARALLELISM:-2}"
# Same version variables as upstream's hack/lib/version.sh: component-base for
# --version / the server's /version, client-go for the User-Agent
# ("kubectl/v1.34.4 (linux/amd64) ...") that tests may count in the audit log.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
done

log "building ${todo[*]} with $("$gocmd" version) (a cold build of everything fetches ~750 MB of module sources and takes about 10 minutes on 2 idle cores)"
for name in "${todo[@]}"; do
  bin="$(bin_of "$name")"
  case "$name" in
    kube-*|kubectl|kubelet) dir="$tools"; ldflags="$k8s_ldflags" ;;
    etcd) dir="$tools"; ldflags="-s -w" ;;
    kwok) dir="$kwok_tools"; ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}" ;;
  esac
  # Another builder may have finished it while we waited for the lock.
  if (( ! force )) && version_ok "$name" "$bin"; then continue; fi
  log "building $name -> $bin"
  start=$SECONDS
  tmp="$bin.tmp.$$"
  if ! (cd "$dir" && "$gocmd" build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp" "./cmd/$name"); then
    rm -f "$tmp"
    log "FAILED to build $name"
    exit 1
  fi
  mv -f "$tmp" "$bin"
  if ! version_ok "$name" "$bin"; then
    log "built $bin but it does not report the expected version ($name: $("$bin" --version 2>&1 | head -n 1))"
    exit 1
  fi
  log "built $name in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))"
done

print_result
