#!/usr/bin/env bash
# image-rootfs.sh - lays out the runtime image's whole file tree in DEST: the
# given programs and exactly the files they load, found from the ELF files
# themselves, not from a list of packages. Run by the Dockerfile's builder
# stage (Debian, with the target architecture's libraries installed: natively
# or as :arm64 multiarch packages); the runtime stage is `FROM scratch` plus
# DEST, so the image has no shell, no package manager and no other file.
#
# Usage: scripts/image-rootfs.sh DEST TRIPLET PROGRAM...
#   DEST     an empty folder (made if missing)
#   TRIPLET  the target's multiarch triplet (x86_64-linux-gnu, aarch64-linux-gnu)
#   PROGRAM  each copied to DEST/usr/local/bin/
#
# What DEST gets:
#   - the programs; their ELF interpreter (PT_INTERP) and the closure of their
#     DT_NEEDED libraries, searched as the dynamic loader does on Debian
#     (/lib/TRIPLET, /usr/lib/TRIPLET, /lib, /usr/lib), read with readelf,
#     which reads any architecture's ELF (ldd would run the loader, which a
#     cross build cannot); every symbolic link on the way (/lib64 ->
#     usr/lib64, libssl.so.3 -> ...) is kept as a link, as in Debian;
#   - /etc/ssl/certs/ca-certificates.crt (ca-certificates), /etc/passwd and
#     /etc/group with root and nonroot (uid and gid 65532, the image's user),
#     /etc/nsswitch.conf (files, then DNS: glibc >= 2.34 has both in libc.so.6,
#     nothing to load), /tmp (1777);
#   - for each Debian package a copied file belongs to (dpkg -S): its stanza of
#     /var/lib/dpkg/status in /var/lib/dpkg/status.d/NAME and the md5sums of
#     the files taken from it in /var/lib/dpkg/status.d/NAME.md5sums (the
#     layout of distroless images, which image scanners and tools/gen-sbom.py
#     read), and its /usr/share/doc/NAME/copyright.
# No time zone data: neither program reads local time (logs are UTC).
set -euo pipefail

(( $# >= 3 )) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
dest="$1" triplet="$2"; shift 2
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
declare -A copied=()   # path in the image -> 1 (files and links alike)
files=()               # regular files copied, for dpkg -S

# copy_dir DIR: DIR exists in DEST as it does here (links as links).
copy_dir() {
  local d="$1" part cur="" target
  IFS=/ read -ra parts <<<"${d#/}"
  for part in "${parts[@]}"; do
    [[ -n $part ]] || continue
    cur+="/$part"
    if [[ -L $cur ]]; then
      if [[ -z ${copied[$cur]:-} ]]; then
        target="$(readlink "$cur")"
        ln -sfn "$target" "$dest$cur"; copied[$cur]=1
        [[ $target == /* ]] || target="$(dirname "$cur")/$target"
        copy_dir "$(realpath -m "$target")"
      fi
      cur="$(realpath -m "$cur")"
    elif [[ ! -d $dest$cur ]]; then
      mkdir -p "$dest$cur"
    fi
  done
}

# copy_path PATH: PATH in DEST as it is here, every link on the way kept.
copy_path() {
  local p="$1" dir target
  dir="$(dirname "$p")"
  copy_dir "$dir"
  p="$(realpath -m "$dir")/$(basename "$p")"
  [[ -z ${copied[$p]:-} ]] || return 0
  copied[$p]=1
  if [[ -L $p ]]; then
    target="$(readlink "$p")"
    ln -sfn "$target" "$dest$p"
    [[ $target == /* ]] || target="$(dirname "$p")/$target"
    copy_path "$target"
  else
    cp -p "$p" "$dest$p"
    files+=("$p")
  fi
}

# find_lib NAME: where the loader finds NAME.
find_lib() {
  local d
  for d in "/lib/$triplet" "/usr/lib/$triplet" /lib /usr/lib; do
    [[ -e "$d/$1" ]] && { echo "$d/$1"; return 0; }
  done
  echo "image-rootfs: library $1 not found for $triplet" >&2
  return 1
}

# The closure of DT_NEEDED, breadth first.
declare -A seen=()
queue=()
mkdir -p "$dest/usr/local/bin"
for prog in "$@"; do
  cp -p "$prog" "$dest/usr/local/bin/"
  queue+=("$prog")
  interp="$(readelf -lW "$prog" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')"
  [[ -n $interp ]] || { echo "image-rootfs: $prog has no ELF interpreter" >&2; exit 1; }
  copy_path "$interp"
done
while (( ${#queue[@]} )); do
  elf="${queue[0]}"; queue=("${queue[@]:1}")
  while read -r lib; do
    [[ -n $lib && -z ${seen[$lib]:-} ]] || continue
    seen[$lib]=1
    path="$(find_lib "$lib")"
    copy_path "$path"
    queue+=("$(realpath "$path")")
  done < <(readelf -dW "$elf" | sed -n 's/.*(NEEDED).*Shared library: \[\(.*\)\]/\1/p')
done
echo "image-rootfs: ${#seen[@]} libraries for $*" >&2

copy_path /etc/ssl/certs/ca-certificates.crt
cat >"$dest/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin
EOF
cat >"$dest/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
cat >"$dest/etc/nsswitch.conf" <<'EOF'
passwd: files
group: files
hosts: files dns
EOF
install -d -m 1777 "$dest/tmp"

# The packages of the copied files, as distroless records them.
statusd="$dest/var/lib/dpkg/status.d"
mkdir -p "$statusd"
declare -A pkgfiles=()
for f in "${files[@]}"; do
  # bookworm's dpkg database names the paths packages ship (/lib/...), which
  # merged /usr makes links: try the path as copied, then its other spelling.
  owner=""
  for cand in "$f" "${f#/usr}" "/usr$f"; do
    owner="$(dpkg -S "$cand" 2>/dev/null | head -n 1 | sed 's/: \/.*//; s/, .*//')" && [[ -n $owner ]] && break
  done
  # The bundle update-ca-certificates makes from ca-certificates' files.
  [[ -n $owner || $f != /etc/ssl/certs/ca-certificates.crt ]] || owner=ca-certificates
  [[ -n $owner ]] || { echo "image-rootfs: no Debian package owns $f" >&2; exit 1; }
  pkgfiles[$owner]+="$f"$'\n'
done
for pkg in "${!pkgfiles[@]}"; do
  name="${pkg%%:*}"
  dpkg-query -s "$pkg" | grep -v '^Status:\|^Conffiles:\|^ /' >"$statusd/$name"
  while read -r f; do
    [[ -n $f ]] && (cd "$dest" && md5sum "${f#/}")
  done <<<"${pkgfiles[$pkg]}" >"$statusd/$name.md5sums"
  doc="/usr/share/doc/$name/copyright"
  [[ -e $doc ]] && copy_path "$doc"
done
echo "image-rootfs: ${#pkgfiles[@]} Debian packages: $(cd "$statusd" && ls | grep -v md5sums | tr '\n' ' ')" >&2
