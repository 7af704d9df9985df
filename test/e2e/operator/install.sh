#!/usr/bin/env bash
# install.sh - installs the operator from its image into a local cluster with
# a real node (test/e2e/cluster.sh up --real-node), following the README's
# steps for a real cluster, and waits until both containers of both replicas
# are Running and Ready and the API server reaches the webhook through its
# Service.
#
# Usage: test/e2e/operator/install.sh --dir CLUSTER_DIR [--work DIR] [--image NAME]
#   --dir DIR     the cluster's directory (its env file gives KUBECONFIG, KUBECTL)
#   --work DIR    where the certificates and image archives go (default CLUSTER_DIR/operator)
#   --image NAME  the operator image in scripts/build-image.sh's container
#                 storage (default localhost/modelservice:dev); it reaches the
#                 node as localhost/modelservice:dev, the name the overlay
#                 test/e2e/operator/kustomization.yaml gives the Pods
#
# Steps:
#   1. images into the node's containerd: the operator image, pushed from
#      build-image.sh's storage with `buildah push IMAGE oci-archive:FILE`
#      (kept per image ID in MODELSERVICE_IMAGE_CACHE/archives, so an
#      unchanged image is pushed once), and the example model server
#      (examples/model-server/build.sh), with `ctr -n k8s.io images import`;
#   2. the webhook's serving certificate (certs-scripts/gen-certs.sh) as the
#      Secret modelservice-system/modelservice-webhook-tls;
#   3. kubectl apply -k test/e2e/operator (manifests/ with the local
#      cluster's image and node placement), then the caBundle of both webhook
#      configurations (manifests/overlays/local/set-ca-bundle.sh);
#   4. waits for the rollout, then until a ModelService that only the webhook
#      rejects is rejected through the API server.
# stdout: nothing; progress on stderr. Exit status non-zero on failure, with
# the operator Pods' state and logs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cdir="" work="" image="localhost/modelservice:dev"
while (( $# )); do
  case "$1" in
    --dir) cdir="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
say() { echo "install.sh: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
[[ -s "$cdir/env" ]] || die "--dir: no cluster env in '$cdir'"
# shellcheck disable=SC1091
source "$cdir/env"
[[ -n "${E2E_REAL_NODE:-}" ]] || die "the cluster in $cdir has no real node (cluster.sh up --real-node)"
work="${work:-$cdir/operator}"
mkdir -p "$work"
k() { "$KUBECTL" --request-timeout=30s "$@"; }
ns=modelservice-system
t0=$SECONDS

# ------------------------------------------------------------ 1. images
cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
export CONTAINERS_STORAGE_CONF="$cache/storage.conf"
[[ -s "$CONTAINERS_STORAGE_CONF" ]] || die "no image storage at $cache: build the image first (scripts/build-image.sh)"
id="$(buildah images --noheading --no-trunc --format '{{.ID}}' "$image" 2>/dev/null | head -n 1)" \
  || die "no image $image in $cache: build it first (scripts/build-image.sh)"
[[ -n "$id" ]] || die "no image $image in $cache: build it first (scripts/build-image.sh)"
id="${id#sha256:}"
archive="$cache/archives/${id:0:16}.tar"
if [[ ! -s "$archive" ]]; then
  mkdir -p "$cache/archives"
  rm -f "$cache"/archives/*.tar
  buildah push --quiet "$image" "oci-archive:$archive.tmp:localhost/modelservice:dev" >/dev/null || die "buildah push $image"
  mv -f "$archive.tmp" "$archive"
fi
model_archive="$("$root/examples/model-server/build.sh" --out "$work/model-server")" || die "examples/model-server/build.sh"
"$here/../node/node.sh" import "$cdir" "$archive" "$model_archive" 2>"$work/import.log" \
  || { cat "$work/import.log" >&2; die "importing the images into the node"; }
say "images imported: $image (${id:0:12}), localhost/model-server:dev ($(( SECONDS - t0 ))s)"

# ------------------------------------------------------------ 2. certificate
"$root/certs-scripts/gen-certs.sh" --out "$work/certs" >/dev/null 2>"$work/gen-certs.log" \
  || { cat "$work/gen-certs.log" >&2; die "gen-certs.sh"; }
k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns" >/dev/null
k -n "$ns" create secret tls modelservice-webhook-tls --cert "$work/certs/tls.crt" --key "$work/certs/tls.key" \
  --dry-run=client -o yaml | k apply -f - >/dev/null

# ------------------------------------------------------------ 3. manifests
k apply -k "$here" >"$work/apply.log" 2>&1 || { cat "$work/apply.log" >&2; die "kubectl apply -k $here"; }
k wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >/dev/null
KUBECTL="$KUBECTL" "$root/manifests/overlays/local/set-ca-bundle.sh" "$work/certs/ca.crt" >/dev/null

# ------------------------------------------------------------ 4. running
show_pods() {
  k -n "$ns" get pods -o wide >&2 || true
  local p
  for p in $(k -n "$ns" get pods -o name 2>/dev/null); do
    k -n "$ns" describe "$p" | tail -n 15 >&2 || true
    k -n "$ns" logs "$p" --all-containers --tail 10 >&2 || true
  done
}
k -n "$ns" rollout status deployment/modelservice --timeout=120s >&2 || { show_pods; die "the operator did not roll out"; }
probe="$(printf '%s\n' 'apiVersion: modelops.dev/v1' 'kind: ModelService' 'metadata: {name: install-probe, namespace: default}' \
  'spec:' '  model: probe' '  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}')"
out="" deadline=$(( SECONDS + 60 ))
until [[ "$out" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]]; do
  (( SECONDS < deadline )) || { show_pods; die "the webhook is not reached through its Service after 60s; last answer: $out"; }
  sleep 0.25
  out="$(k create --dry-run=server -f - <<<"$probe" 2>&1 || true)"
done
say "operator installed from $image: $(k -n "$ns" get deployment modelservice -o 'jsonpath={.status.readyReplicas}')/2 Pods Ready, webhook reached through its Service ($(( SECONDS - t0 ))s)"
