#!/usr/bin/env bash
# build-control-plane.sh - build (once) and cache the e2e control-plane binaries:
# kube-apiserver, kubectl and etcd, compiled from Go modules (like envtest's
# binaries, but with nothing downloaded except from the Go module proxy).
#
# Usage:  test/e2e/build-control-plane.sh [--force]
#         eval "$(test/e2e/build-control-plane.sh)"
#
# Versions: taken from test/e2e/tools/go.mod (the single source of truth):
#   k8s.io/kubernetes      -> kube-apiserver and kubectl (e.g. v1.34.4)
#   go.etcd.io/etcd/server -> etcd                       (e.g. v3.6.4)
#
# Cache (outside the repository, keyed by version):
#   ${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/
#       k8s-<k8s version>/kube-apiserver
#       k8s-<k8s version>/kubectl
#       etcd-<etcd version>/etcd
# A binary that exists and reports the expected version is not rebuilt, so a
# warm run is a no-op (well under a second). --force rebuilds all three.
#
# Environment:
#   MODELSERVICE_TOOLS_CACHE  cache root (default $HOME/.cache/modelservice-tools)
#   GO                        go command (default: `go` on PATH, else /usr/local/go/bin/go)
#   BUILD_PARALLELISM         go build -p (default 2; keeps memory sane on small machines)
#   The usual Go variables (GOPROXY, GOMODCACHE, GOCACHE, ...) are honoured;
#   GOWORK=off, CGO_ENABLED=0 and GOFLAGS=-mod=readonly are forced, so the
#   committed go.mod/go.sum are used as-is (no checksum database needed).
#
# Output: progress goes to stderr. stdout is exactly ONE line (so it is also
# the last line), a sourceable assignment of absolute paths:
#   export KUBE_APISERVER=/abs/kube-apiserver ETCD=/abs/etcd KUBECTL=/abs/kubectl
# Exit status is non-zero if anything could not be built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/tools"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-control-plane.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { echo "build-control-plane: $*" >&2; }

# Versions from go.mod (plain text parsing: no `go` invocation on the fast path).
modversion() {
  awk -v m="$1" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$tools/go.mod"
}
k8s_version="$(modversion k8s.io/kubernetes)"
etcd_version="$(modversion go.etcd.io/etcd/server/v3)"
if [[ -z "$k8s_version" || -z "$etcd_version" ]]; then
  log "cannot read k8s.io/kubernetes / go.etcd.io/etcd/server/v3 versions from $tools/go.mod"
  exit 1
fi
k8s_minor="${k8s_version#v1.}"; k8s_minor="${k8s_minor%%.*}"

cache="${MODELSERVICE_TOOLS_CACHE:-${HOME:?HOME is not set}/.cache/modelservice-tools}"
k8s_dir="$cache/k8s-$k8s_version"
etcd_dir="$cache/etcd-$etcd_version"
apiserver_bin="$k8s_dir/kube-apiserver"
kubectl_bin="$k8s_dir/kubectl"
etcd_bin="$etcd_dir/etcd"

# version_ok NAME PATH: does the cached binary exist and report the expected version?
version_ok() {
  local out
  [[ -x "$2" ]] || return 1
  case "$1" in
    kube-apiserver) out="$("$2" --version 2>/dev/null)" || return 1
                    [[ "$out" == "Kubernetes $k8s_version" ]] ;;
    kubectl)        out="$("$2" version --client 2>/dev/null)" || return 1
                    [[ "$out" == *"Client Version: $k8s_version"* ]] ;;
    etcd)           out="$("$2" --version 2>/dev/null)" || return 1
                    [[ "$out" == *"etcd Version: ${etcd_version#v}"* ]] ;;
  esac
}

print_result() {
  printf 'export KUBE_APISERVER=%q ETCD=%q KUBECTL=%q\n' "$apiserver_bin" "$etcd_bin" "$kubectl_bin"
}

todo=()
for name in kube-apiserver kubectl etcd; do
  case "$name" in
    kube-apiserver) bin="$apiserver_bin" ;;
    kubectl) bin="$kubectl_bin" ;;
    etcd) bin="$etcd_bin" ;;
  esac
  if (( force )) || ! version_ok "$name" "$bin"; then todo+=("$name"); fi
done
if (( ${#todo[@]} == 0 )); then
  print_result
  exit 0
fi

if [[ -n "${GO:-}" ]]; then gocmd="$GO"
elif command -v go >/dev/null 2>&1; then gocmd=go
elif [[ -x /usr/local/go/bin/go ]]; then gocmd=/usr/local/go/bin/go
else log "no Go toolchain found (set GO=/path/to/go)"; exit 1
fi

mkdir -p "$k8s_dir" "$etcd_dir"
# Serialise concurrent builders (e.g. parallel CI jobs sharing a cache).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.build.lock"
  flock 9
fi

export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
jobs="${BUILD_PARALLELISM:-2}"
# Same version variables as upstream's hack/lib/version.sh: component-base for
# --version / the server's /version, client-go for the User-Agent
# ("kubectl/v1.34.4 (linux/amd64) ...") that tests may count in the audit log.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
done

log "building ${todo[*]} with $("$gocmd" version) (a cold build downloads ~90 MB of modules and takes ~5 minutes on 2 cores)"
for name in "${todo[@]}"; do
  case "$name" in
    kube-apiserver) bin="$apiserver_bin"; ldflags="$k8s_ldflags" ;;
    kubectl) bin="$kubectl_bin"; ldflags="$k8s_ldflags" ;;
    etcd) bin="$etcd_bin"; ldflags="-s -w" ;;
  esac
  # Another builder may have finished it while we waited for the lock.
  if (( ! force )) && version_ok "$name" "$bin"; then continue; fi
  log "building $name -> $bin"
  start=$SECONDS
  tmp="$bin.tmp.$$"
  if ! (cd "$tools" && "$gocmd" build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp" "./cmd/$name"); then
    rm -f "$tmp"
    log "FAILED to build $name"
    exit 1
  fi
  mv -f "$tmp" "$bin"
  if ! version_ok "$name" "$bin"; then
    log "built $bin but it does not report version ${k8s_version}/${etcd_version}"
    exit 1
  fi
  log "built $name in $((SECONDS - start))s"
done

print_result
