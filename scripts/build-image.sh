#!/usr/bin/env bash
# build-image.sh - builds the repository's Dockerfile for real and runs the
# image, without a Docker engine and without a registry: Debian's buildah
# builds it, and the base image of the Dockerfile's build stage
# (debian:bookworm) is made locally with debootstrap, so `FROM` needs no pull
# (the runtime stage is `scratch` plus the files the programs load). The
# Dockerfile is the one a Docker user builds with `docker build .`.
#
# Usage: scripts/build-image.sh [--tag NAME] [--platform linux/ARCH]
#                               [--version V] [--source URL] [--refresh-base]
#   --tag NAME       name of the built image (default localhost/modelservice:dev)
#   --platform P     linux/amd64 or linux/arm64 (default: this machine's);
#                    another architecture than this machine's is
#                    cross-compiled (the Dockerfile's builder stage) and run
#                    under qemu-user in step 4 (scripts/setup.sh --release
#                    installs qemu-user-static)
#   --version V      the image's org.opencontainers.image.version (default dev)
#   --source URL     its org.opencontainers.image.source (default: the git
#                    remote origin's URL, if any)
#   --refresh-base   make the base images again even if they are cached
#
# What it does:
#   1. scripts/setup.sh --image (installs debootstrap and buildah if missing).
#   2. Base images, unless cached (made again after 30 days): `debootstrap
#      --variant=minbase bookworm` (the variant Debian's official images are
#      made from) with the official images' apt sources (bookworm,
#      bookworm-updates, bookworm-security), imported with `buildah from
#      scratch` + `buildah copy` + `buildah commit` as
#      docker.io/library/debian:bookworm; the same tree without
#      documentation, manual pages and translations (and a dpkg filter that
#      keeps them out, as the official slim images have) as
#      docker.io/library/debian:bookworm-slim (examples/mlserver's base).
#   3. `buildah bud --pull=never --isolation chroot --layers` of the
#      Dockerfile, its build stage's base pinned by digest
#      (BUILD_BASE=docker.io/library/debian@sha256:... of step 2's image;
#      its RUN apt-get steps reach Debian's mirrors); unchanged
#      steps come from the layer cache; the host's compiler cache
#      ($CCACHE_DIR or ~/.cache/ccache) is mounted at /ccache for the
#      compile, which uses the flags of build/ and so reuses its objects. The git revision and its commit date
#      go in as build arguments (MS_GIT_REVISION, MS_BUILD_DATE) for --version
#      and the image's labels.
#   4. Runs both programs' --help and --version inside the image, which has
#      no shell: `buildah run` of the program itself (as the image's user) on
#      this machine's architecture, else the image's tree mounted and the
#      program run by qemu-user with that tree as its root (-L; as root,
#      since the storage is not readable by the image's user). Fails unless
#      they run and report that revision, the image's user is non-root and
#      named in its /etc/passwd, and the image holds no shell; prints the
#      image's size.
#
# Needs root (debootstrap; chroot isolation). Everything lives in one
# container storage (the overlay driver where the kernel mounts overlays,
# else vfs, which works on any file system and inside a container) in
# MODELSERVICE_IMAGE_CACHE (default
# ~/.cache/modelservice-image): the base images, the layer cache and the
# image. To use the image there with buildah or podman:
#   export CONTAINERS_STORAGE_CONF=~/.cache/modelservice-image/storage.conf
#
# Environment: BUILD_PARALLELISM (the compile's jobs; default ninja's),
# MODELSERVICE_IMAGE_CACHE, MODELSERVICE_IMAGE_DRIVER (overlay or
# vfs; default: overlay if it mounts), DEBIAN_MIRROR (default
# http://deb.debian.org/debian; the security suite comes from the official
# images' mirror, http://deb.debian.org/debian-security).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="localhost/modelservice:dev"
refresh=0
platform="" version=dev source=""
while (( $# )); do
  case "$1" in
    --tag) [[ $# -ge 2 ]] || { echo "--tag needs a name" >&2; exit 2; }; tag="$2"; shift 2 ;;
    --tag=*) tag="${1#--tag=}"; shift ;;
    --refresh-base) refresh=1; shift ;;
    --platform|--version|--source)
      [[ $# -ge 2 ]] || { echo "$1 needs a value" >&2; exit 2; }
      case "$1" in --platform) platform="$2" ;; --version) version="$2" ;; --source) source="$2" ;; esac
      shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "build-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || die "needs root (debootstrap, chroot isolation)"
  exec sudo --preserve-env=BUILD_PARALLELISM,MODELSERVICE_IMAGE_CACHE,MODELSERVICE_IMAGE_DRIVER,DEBIAN_MIRROR,CCACHE_DIR "$0" "$@"
fi

start=$SECONDS
bash "$root/scripts/setup.sh" --image
host_arch="$(dpkg --print-architecture)"
[[ -n $platform ]] || platform="linux/$host_arch"
arch="${platform#linux/}"
case "$arch" in amd64|arm64) ;; *) die "--platform must be linux/amd64 or linux/arm64, not $platform" ;; esac
[[ -n $source ]] || source="$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)"

cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
exec 9>"$cache/lock"
flock -n 9 || { say "waiting for another build-image.sh using $cache"; flock 9; }

# The storage driver: overlay where the kernel mounts it here (a layer holds
# what its step changed, and a step starts from its parent without a copy),
# else vfs (every layer a full copy of its tree: slow and large, but it works
# on any file system and inside a container). MODELSERVICE_IMAGE_DRIVER=vfs
# or overlay chooses. Each driver has its own storage folder.
driver="${MODELSERVICE_IMAGE_DRIVER:-}"
if [[ -z $driver ]]; then
  driver=vfs
  probe="$(mktemp -d "$cache/overlay-probe.XXXXXX")"
  mkdir -p "$probe"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    umount "$probe/merged"
    driver=overlay
  fi
  rm -rf "$probe"
fi
case "$driver" in
  vfs) graphroot="$cache/storage" ;;
  overlay) graphroot="$cache/storage-overlay" ;;
  *) die "MODELSERVICE_IMAGE_DRIVER must be vfs or overlay, not $driver" ;;
esac
cat >"$cache/storage.conf" <<EOF
# written by scripts/build-image.sh
[storage]
driver = "$driver"
graphroot = "$graphroot"
runroot = "$cache/run-$driver"
EOF
export CONTAINERS_STORAGE_CONF="$cache/storage.conf"

work_containers=()
cleanup() {
  local c
  for c in "${work_containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$cache/rootfs.tmp" "$cache/rootfs-slim.tmp"
}
trap cleanup EXIT

# ------------------------------------------------------------ base images
base=docker.io/library/debian:bookworm
slim=docker.io/library/debian:bookworm-slim

import_rootfs() {  # import_rootfs DIR NAME: an image of DIR's tree, as Debian's images are configured
  local c
  c="$(buildah from scratch)"; work_containers+=("$c")
  buildah copy --quiet "$c" "$1" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["bash"]' \
    --created-by "scripts/build-image.sh: debootstrap --variant=minbase bookworm" "$c"
  buildah commit --quiet --rm "$c" "$2" >/dev/null
  unset 'work_containers[-1]'
}

make_bases() {
  local t0=$SECONDS fs="$cache/rootfs.tmp" slimfs="$cache/rootfs-slim.tmp"
  rm -rf "$fs" "$slimfs"
  say "debootstrap --variant=minbase bookworm ($mirror)"
  debootstrap --variant=minbase bookworm "$fs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -n 20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
  # The official images' apt sources, and no package lists or archives.
  rm -f "$fs/etc/apt/sources.list"
  cat >"$fs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$fs"/var/lib/apt/lists/* "$fs"/var/cache/apt/*.bin "$fs"/var/cache/apt/archives/*.deb "$fs"/var/log/*.log
  import_rootfs "$fs" "$base"

  # slim: what Debian's -slim images leave out, and a dpkg filter that keeps
  # it out of packages installed later.
  cp -a "$fs" "$slimfs"
  rm -rf "$fs"
  find "$slimfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$slimfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$slimfs"/usr/share/{man,info,groff,lintian,linda}/*
  find "$slimfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  cat >"$slimfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  import_rootfs "$slimfs" "$slim"
  rm -rf "$slimfs"
  touch "$cache/base.stamp"
  say "base images $base and $slim made ($(( SECONDS - t0 ))s)"
}

have_image() { buildah inspect --type image "$1" >/dev/null 2>&1; }
if (( refresh )) || ! have_image "$base" || ! have_image "$slim" \
   || [[ -z "$(find "$cache/base.stamp" -mtime -30 2>/dev/null)" ]]; then
  make_bases
else
  say "base images cached ($base, $slim; made $(date -r "$cache/base.stamp" +%F); --refresh-base to make them again)"
fi

# ------------------------------------------------------------ the image
# Working containers an interrupted build left behind (this storage is the
# script's own) hold their images against the pruning below: remove them,
# and the images nothing uses any more, before building.
buildah rm --all >/dev/null 2>&1 || true
for (( i = 0; i < 50; i++ )); do
  [[ -n "$(buildah rmi --prune 2>/dev/null)" ]] || break
done
# With vfs every changed step is a full copy of the build stage's tree (about
# 1.3 GB): fail early and clearly rather than in the middle of a commit.
need_gb=3
[[ $driver == vfs ]] && need_gb=8
free_gb=$(( $(df --output=avail -k "$cache" | tail -1) / 1024 / 1024 ))
(( free_gb >= need_gb )) || die "only ${free_gb} GB free in $cache (a build needs about ${need_gb} GB: the build stage's changed layers are full copies); free some space"
t0=$SECONDS
say "buildah bud of $root/Dockerfile as $tag"
# --version of the programs: the revision and its commit date (the build
# context has no .git).
revision="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[[ $revision == unknown ]] || git -C "$root" diff --quiet HEAD -- 2>/dev/null || revision+="-dirty"
build_date="$(date -u -d "@$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)" +%Y-%m-%dT%H:%M:%SZ)"
# The host's compiler cache, mounted where the build stage's ccache looks
# (not part of any layer): the build stage compiles with the flags of
# scripts/configure-build.sh, so what build/ compiled for the same sources
# is reused.
ccache_dir="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}"
mkdir -p "$ccache_dir"
# The build stage's base pinned by the digest of the image step 2 made.
base_digest="$(buildah inspect --type image --format '{{.FromImageDigest}}' "$base")"
[[ $base_digest == sha256:* ]] || die "cannot read the digest of $base"
build_base="docker.io/library/debian@$base_digest"
say "build stage base: $build_base ($base); platform $platform"
buildah bud --pull=never --isolation chroot --layers -f "$root/Dockerfile" -t "$tag" -v "$ccache_dir:/ccache" \
  --platform "$platform" --build-arg "BUILD_BASE=$build_base" \
  --build-arg "MS_GIT_REVISION=$revision" --build-arg "MS_BUILD_DATE=$build_date" \
  --build-arg "MS_BUILD_JOBS=${BUILD_PARALLELISM:-}" --build-arg "MS_VERSION=$version" --build-arg "MS_SOURCE=$source" "$root" 2>&1 | tee "$cache/bud.log"
say "image built ($(( SECONDS - t0 ))s)"

# The layer cache keeps what this build used and nothing older: the last
# image of each earlier stage gets a tag (so it is not "dangling"), then
# untagged images that nothing builds on are removed, repeatedly, which
# takes the chains of earlier builds (with vfs every layer is a full copy
# of the tree: over a GB each in the build stage).
stages="$(awk '/^\[[0-9]+\/[0-9]+\] STEP /{ split($1, a, /[][\/]/); stage = a[2]; total = a[3] }
               /^--> [0-9a-f]+$/ { leaf[stage] = $2 }
               END { for (s = 1; s < total; s++) if (s in leaf) print s, leaf[s] }' "$cache/bud.log")"
if [[ -n "$stages" ]]; then
  while read -r s id; do buildah tag "$id" "localhost/modelservice-stage$s-$arch:cache"; done <<<"$stages"
  for (( i = 0; i < 50; i++ )); do
    [[ -n "$(buildah rmi --prune 2>/dev/null)" ]] || break
  done
  say "layer cache: $(du -sh "$graphroot" | cut -f1) in $graphroot ($driver)"
else
  say "warning: could not find the stages' images in the build's output; the layer cache is not pruned"
fi

# ------------------------------------------------------------ run it
# The image has no shell: each program runs by itself, on this machine's
# architecture with `buildah run` (as the image's user), on another under
# qemu-user with the image's tree as its root.
user="$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$tag")"
entrypoint="$(buildah inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$tag")"
uid="${user%%:*}"
[[ $uid =~ ^[0-9]+$ && $uid != 0 ]] || die "the image's user is '$user', not a numeric non-root user"
c="$(buildah from --pull-never "$tag")"; work_containers+=("$c")
mnt="$(buildah mount "$c")"
grep -q "^[^:]*:x:$uid:" "$mnt/etc/passwd" || die "the image's /etc/passwd has no entry for uid $uid"
for sh in bin/sh bin/bash bin/dash usr/bin/apt-get usr/bin/dpkg; do
  [[ ! -e "$mnt/$sh" && ! -L "$mnt/$sh" ]] || die "the image holds /$sh"
done
run_in_image() {  # run_in_image PROGRAM ARGS...: PROGRAM's output, run in the image
  if [[ $arch == "$host_arch" ]]; then
    buildah run --isolation chroot "$c" -- "$@" 2>&1
  else
    local qemu="qemu-${arch/arm64/aarch64}-static"
    command -v "$qemu" >/dev/null || die "$qemu is missing (scripts/setup.sh --release installs qemu-user-static)"
    # As root: the storage under ~/.cache is not reachable for uid 65532
    # (the image's user is checked above, from its configuration and passwd).
    "$qemu" -L "$mnt" "$mnt$1" "${@:2}" 2>&1
  fi
}
for prog in modelservice-webhook modelservice-controller; do
  echo "\$ $prog --help    (inside $tag, $platform)"
  out="$(run_in_image "/usr/local/bin/$prog" --help)" || { echo "$out" >&2; die "$prog --help failed in the image"; }
  echo "$out" | sed -n '1,5p'
  echo "  ..."
  [[ "$out" == *"--health-probe-bind-address"* ]] || die "$prog --help does not list its flags"
  say "$prog --help ran ($( [[ $arch == "$host_arch" ]] && echo "as the image's user $user" || echo "under qemu-user" ))"
  version_out="$(run_in_image "/usr/local/bin/$prog" --version)" \
    || die "$prog --version failed in the image: $version_out"
  [[ "$version_out" == *"(revision $revision, built $build_date)"* ]] || die "$prog --version: $version_out"
  say "$version_out"
done
buildah umount "$c" >/dev/null

size="$(buildah images --format '{{.Size}}' "$tag" | head -n 1)"
say "image $tag: user $user, entrypoint $entrypoint"
say "image size: $size (uncompressed, as \`docker images\` shows it)"
say "done in $(( SECONDS - start ))s. The image is in the container storage in $cache; to use it:"
say "  export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
say "  buildah push $tag docker-archive:modelservice.tar   # for docker load, kind load image-archive, ..."
