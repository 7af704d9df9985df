#!/usr/bin/env bash
# build.sh - builds the example model server (server.cc) as one static binary
# and an image holding only it (user 65532, entrypoint /model-server, port
# 8080), written as an OCI archive that `ctr images import`, `docker load`,
# `podman load` and `kind load image-archive` read.
#
# Usage: examples/model-server/build.sh [--out DIR] [--tag NAME]
#   --out DIR    where the binary and the archive go (default build/model-server)
#   --tag NAME   the image's name (default localhost/model-server:dev)
# stdout: the archive's path (one line). Needs g++ (scripts/setup.sh) and python3.
# A second run with unchanged sources rebuilds nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/build/model-server" tag="localhost/model-server:dev"
while (( $# )); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
src="$root/examples/model-server/server.cc"
stamp="$(cat "$src" "$root/test/e2e/node/oci-image.py" | sha256sum | cut -c1-16) $tag"
if [[ -s "$out/model-server.tar" && "$(cat "$out/stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "$out/model-server.tar"
  exit 0
fi
g++ -std=c++20 -O2 -Wall -Wextra -Werror -static -pthread -o "$out/model-server" "$src"
python3 "$root/test/e2e/node/oci-image.py" --out "$out/model-server.tar" --name "$tag" \
  --entrypoint /model-server --user 65532:65532 --port 8080 "$out/model-server:/model-server" >&2
echo "$stamp" >"$out/stamp"
echo "$out/model-server.tar"
