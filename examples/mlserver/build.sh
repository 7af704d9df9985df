#!/usr/bin/env bash
# build.sh - builds the MLServer example image (examples/mlserver/Dockerfile:
# MLServer 1.7.1 + mlserver-sklearn serving an iris classifier; ports 8080
# HTTP, 8081 gRPC, 8082 metrics) with buildah, in scripts/build-image.sh's
# container storage and layer cache, and writes it as an OCI archive that
# `ctr -n k8s.io images import`, `podman load` and `kind load image-archive`
# read.
#
# Usage: examples/mlserver/build.sh [--out DIR] [--tag NAME]
#   --out DIR    where the archive goes (default build/mlserver)
#   --tag NAME   the image's name, in the storage and in the archive
#                (default localhost/mlserver-iris:dev)
# stdout: the archive's path, DIR/mlserver-iris.tar (one line); progress on
# stderr.
#
# Nothing is built twice: the stamp (sha256 of this folder's inputs and the
# tag) is kept next to the archive (DIR/mlserver-iris.stamp), and the
# archive itself, by stamp, in MODELSERVICE_IMAGE_CACHE/mlserver-archives
# (the three newest are kept), so another --out or another checkout on this
# machine with the same inputs gets a copy without running buildah. Else
# `buildah bud --pull=never --isolation chroot --layers` (unchanged steps
# come from the layer cache; pip reaches PyPI, apt Debian's mirror), a smoke
# test in the image as uid 1000, and `buildah push TAG oci-archive:FILE:TAG`.
#
# Needs root (chroot isolation) and the storage that scripts/build-image.sh
# makes, with its base image docker.io/library/debian:bookworm-slim: run
# scripts/build-image.sh once first. Holds that script's lock while building.
# Environment: MODELSERVICE_IMAGE_CACHE (default ~/.cache/modelservice-image);
# PIP_CERT, SSL_CERT_FILE or REQUESTS_CA_BUNDLE (the first that is set; else
# /etc/ssl/certs/ca-certificates.crt if present): the CA bundle pip in the
# build trusts (the build secret pip-ca; not stored in the image).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/build/mlserver" tag="localhost/mlserver-iris:dev"
while (( $# )); do
  case "$1" in
    --out) [[ $# -ge 2 ]] || { echo "build.sh: --out needs a folder" >&2; exit 2; }; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    --tag) [[ $# -ge 2 ]] || { echo "build.sh: --tag needs a name" >&2; exit 2; }; tag="$2"; shift 2 ;;
    --tag=*) tag="${1#--tag=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "mlserver/build.sh: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"
archive="$out/mlserver-iris.tar"
inputs=(Dockerfile requirements.txt train.py model-settings.json build.sh)
stamp="$( { (cd "$here" && sha256sum "${inputs[@]}"); echo "tag $tag"; } | sha256sum | cut -c1-16)"

# 1. This --out already has it.
if [[ -s "$archive" && "$(cat "$out/mlserver-iris.stamp" 2>/dev/null)" == "$stamp" ]]; then
  say "unchanged ($stamp): $archive"
  echo "$archive"
  exit 0
fi

cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
kept="$cache/mlserver-archives/mlserver-$stamp.tar"
container=""
cleanup() {
  rm -f "$archive.tmp.$$" "$kept.tmp.$$"
  [[ -z "$container" ]] || buildah rm "$container" >/dev/null 2>&1 || true
}
trap cleanup EXIT
publish() {  # the kept archive to --out (a hard link where it can be)
  ln -f "$kept" "$archive.tmp.$$" 2>/dev/null || cp -f "$kept" "$archive.tmp.$$"
  mv -f "$archive.tmp.$$" "$archive"
  echo "$stamp" >"$out/mlserver-iris.stamp"
  touch "$kept"
  echo "$archive"
}

# 2. Another --out or checkout on this machine made it.
if [[ -s "$kept" ]]; then
  say "archive $stamp cached in $cache/mlserver-archives; no build"
  publish
  exit 0
fi

# 3. Build.
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || die "needs root (buildah --isolation chroot)"
  exec sudo --preserve-env=MODELSERVICE_IMAGE_CACHE,XDG_CACHE_HOME,PIP_CERT,SSL_CERT_FILE,REQUESTS_CA_BUNDLE \
    "$0" --out "$out" --tag "$tag"
fi
command -v buildah >/dev/null || die "buildah is not installed: run scripts/build-image.sh first (scripts/setup.sh --image installs it)"
export CONTAINERS_STORAGE_CONF="$cache/storage.conf"
[[ -s "$CONTAINERS_STORAGE_CONF" ]] \
  || die "no container storage at $cache: run scripts/build-image.sh first (it makes the storage and the base images this build uses)"
base=docker.io/library/debian:bookworm-slim
buildah inspect --type image "$base" >/dev/null 2>&1 \
  || die "no base image $base in $cache: run scripts/build-image.sh first (it makes it with debootstrap; --refresh-base to make it again)"

# scripts/build-image.sh removes working containers and prunes images of
# this storage: never both at once.
exec 9>"$cache/lock"
flock -n 9 || { say "waiting for another build using $cache (scripts/build-image.sh?)"; flock 9; }

ca=""
for f in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}" "${REQUESTS_CA_BUNDLE:-}" /etc/ssl/certs/ca-certificates.crt; do
  [[ -n "$f" && -s "$f" ]] && { ca="$f"; break; }
done
secret=()
[[ -n "$ca" ]] && secret=(--secret "id=pip-ca,src=$ca")

t0=$SECONDS
say "buildah bud of $here/Dockerfile as $tag (stamp $stamp)"
buildah bud --pull=never --isolation chroot --layers --force-rm -f "$here/Dockerfile" -t "$tag" "${secret[@]}" "$here" >&2 \
  || die "buildah bud failed"
say "image built ($(( SECONDS - t0 ))s)"

# Smoke test: the server's command, run as uid 1000 with HOME unset.
user="$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$tag")"
container="$(buildah from --pull-never "$tag")"
version="$(buildah run --isolation chroot --user 1000:1000 "$container" -- /usr/bin/env -u HOME mlserver --version 2>&1)" \
  || die "mlserver --version failed in the image as uid 1000: $version"
buildah rm "$container" >/dev/null
container=""
say "$version (as uid 1000; image user '$user', size $(buildah images --format '{{.Size}}' "$tag" | head -n 1))"

t1=$SECONDS
mkdir -p "$cache/mlserver-archives"
buildah push --quiet "$tag" "oci-archive:$kept.tmp.$$:$tag" >/dev/null || die "buildah push $tag"
mv -f "$kept.tmp.$$" "$kept"
# Only the three newest archives stay.
find "$cache/mlserver-archives" -maxdepth 1 -name 'mlserver-*.tar' -printf '%T@ %p\n' | sort -rn \
  | tail -n +4 | cut -d' ' -f2- | while read -r old; do rm -f "$old"; done
say "archive $(du -h "$kept" | cut -f1) ($(( SECONDS - t1 ))s): $archive"
publish
