#!/usr/bin/env bash
# install.sh - installs the operator from its image into a local cluster with
# a real node (test/e2e/cluster.sh up --real-node) the way the README tells
# users to: `helm install` of the chart with its default values (certificate
# mode self: the controller makes the webhook's Secret, the kubelet mounts
# it, the webhook waits for it and then serves), only the image and the
# node's placement set (test/e2e/operator/real-node-values.yaml). Then waits
# until both containers of both replicas are Running and Ready and the API
# server reaches the webhook through its Service.
#
# Usage: test/e2e/operator/install.sh --dir CLUSTER_DIR [--work DIR] [--image NAME] [-- HELM_ARGS...]
#   --dir DIR     the cluster's directory (its env file gives KUBECONFIG, KUBECTL)
#   --work DIR    where the image archives and logs go (default CLUSTER_DIR/operator)
#   --image NAME  the operator image in scripts/build-image.sh's container
#                 storage (default localhost/modelservice:dev); it reaches the
#                 node as localhost/modelservice:dev, the image of
#                 real-node-values.yaml
#   HELM_ARGS     more arguments for helm install (the e2e suite: a short
#                 --set certificates.self.servingCertValidity)
#
# Steps:
#   1. images into the node's containerd: the operator image, pushed from
#      build-image.sh's storage with `buildah push IMAGE oci-archive:FILE`
#      (kept per image ID in MODELSERVICE_IMAGE_CACHE/archives, so an
#      unchanged image is pushed once), and the example model server
#      (examples/model-server/build.sh), with `ctr -n k8s.io images import`;
#   2. the namespace modelservice-system with the restricted Pod Security
#      Standard enforced (labels, as docs/operator/install.md says: helm
#      install --create-namespace makes a namespace without them);
#   3. Helm (test/e2e/build-helm.sh, cached), then, from the repository's
#      root, the README's line
#        helm install modelservice charts/modelservice-operator -n modelservice-system --create-namespace -f test/e2e/operator/real-node-values.yaml
#      (HELM_CACHE_HOME, HELM_CONFIG_HOME, HELM_DATA_HOME under --work);
#   4. waits for the rollout (the leader's controller creates the Secret and
#      injects the CA, the kubelet puts the Secret into the webhook's volume),
#      then until a ModelService that only the webhook rejects is rejected
#      through the API server.
# stdout: nothing; progress on stderr. Exit status non-zero on failure, with
# the operator Pods' state and logs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cdir="" work="" image="localhost/modelservice:dev" helm_args=()
while (( $# )); do
  case "$1" in
    --dir) cdir="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    --) shift; helm_args=("$@"); break ;;
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
# The README's line (README.md and docs/contributor/local-cluster.md; case 90 checks that the README has it).
INSTALL_LINE="helm install modelservice charts/modelservice-operator -n $ns --create-namespace -f test/e2e/operator/real-node-values.yaml"
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
  # Archives of other images (other tags, other checkouts) unused for two hours.
  find "$cache/archives" -name '*.tar' -mmin +120 -delete 2>/dev/null || true
  buildah push --quiet "$image" "oci-archive:$archive.tmp.$$:localhost/modelservice:dev" >/dev/null || die "buildah push $image"
  mv -f "$archive.tmp.$$" "$archive"
fi
touch "$archive"
model_archive="$("$root/examples/model-server/build.sh" --out "$work/model-server")" || die "examples/model-server/build.sh"
"$here/../node/node.sh" import "$cdir" "$archive" "$model_archive" 2>"$work/import.log" \
  || { cat "$work/import.log" >&2; die "importing the images into the node"; }
say "images imported: $image (${id:0:12}) as localhost/modelservice:dev, localhost/model-server:dev ($(( SECONDS - t0 ))s)"

# ------------------------------------------------------------ 2. namespace
# Pod Security: `helm install --create-namespace` makes a plain namespace, so
# the restricted standard is enforced by labelling it first
# (docs/operator/install.md).
k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns" >/dev/null
k label namespace "$ns" --overwrite pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null

# ------------------------------------------------------------ 3. helm install
eval "$("$root/test/e2e/build-helm.sh" 2>"$work/build-helm.log")" || { cat "$work/build-helm.log" >&2; die "test/e2e/build-helm.sh"; }
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"
read -r -a line <<<"$INSTALL_LINE"
say "${line[*]}${helm_args[*]:+ ${helm_args[*]}}"
t1=$SECONDS
(cd "$root" && "$HELM" "${line[@]:1}" "${helm_args[@]}") >"$work/helm-install.log" 2>&1 \
  || { cat "$work/helm-install.log" >&2; die "helm install"; }

# ------------------------------------------------------------ 4. running
show_pods() {
  k -n "$ns" get pods -o wide >&2 || true
  local p
  for p in $(k -n "$ns" get pods -o name 2>/dev/null); do
    k -n "$ns" describe "$p" | tail -n 15 >&2 || true
    k -n "$ns" logs "$p" --all-containers --tail 10 >&2 || true
  done
}
k -n "$ns" rollout status deployment/modelservice --timeout=180s >&2 || { show_pods; die "the operator did not roll out"; }
t2=$SECONDS
probe="$(printf '%s\n' 'apiVersion: modelops.dev/v1' 'kind: ModelService' 'metadata: {name: install-probe, namespace: default}' \
  'spec:' '  model: probe' '  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}')"
out="" deadline=$(( SECONDS + 60 ))
until [[ "$out" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]]; do
  (( SECONDS < deadline )) || { show_pods; die "the webhook is not reached through its Service after 60s; last answer: $out"; }
  sleep 0.25
  out="$(k create --dry-run=server -f - <<<"$probe" 2>&1 || true)"
done
say "operator installed from $image with Helm: $(k -n "$ns" get deployment modelservice -o 'jsonpath={.status.readyReplicas}')/2 Pods Ready $(( t2 - t1 ))s after helm install, webhook reached through its Service ($(( SECONDS - t0 ))s in all)"
