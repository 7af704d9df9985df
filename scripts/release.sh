#!/usr/bin/env bash
# release.sh - builds everything a release publishes into one folder, and
# with --registry pushes it there and signs it there.
#
# Usage: scripts/release.sh VERSION [--out DIR] [--key FILE] [--registry HOST:PORT]
#                           [--registry-ca FILE] [--repository NAME]
#                           [--platforms LIST] [--image IMAGE] [--changelog FILE]
#                           [--unreleased]
#   VERSION        the release's version (semver, no v: 0.2.0); the chart is
#                  packaged as this version and appVersion
#   --out DIR      the release folder (default build-release/VERSION); made
#                  anew
#   --key FILE     the cosign private key (cosign.key format; COSIGN_PASSWORD
#                  in the environment if it has one); default: a new key pair
#                  in DIR.key/ (never in the release folder, which only gets
#                  cosign.pub)
#   --registry H:P push the image index and its signatures to
#                  H:P/modelservice (or --repository) and the chart to
#                  oci://H:P/charts, and sign both there. Without it the images
#                  are signed in a registry of the script's own on loopback
#                  (scripts/registry.sh), stopped afterwards: the signatures
#                  are files of the folder either way
#   --registry-ca F  the CA file that registry's certificate is signed by (a
#                  test registry's)
#   --repository N the image's name in install.yaml and in the chart's
#                  values (default H:P/modelservice with --registry, else
#                  modelservice, the chart's default)
#   --platforms L  comma-separated (default linux/amd64,linux/arm64); each is
#                  built by scripts/build-image.sh --platform (arm64
#                  cross-compiled and run under qemu-user)
#   --image IMAGE  use this image of build-image.sh's storage for the one
#                  platform of --platforms instead of building it (the e2e
#                  suite: the image CI already built)
#   --changelog F  the changelog the release notes come from (default
#                  CHANGELOG.md); it must have a section `## [VERSION]` or
#                  `## VERSION`, else the script stops before building
#   --unreleased   the notes from the changelog's `## [Unreleased]` section
#                  instead (a release candidate; the e2e suite's release of
#                  the chart's version)
#
# The folder:
#   modelservice-VERSION.oci.tar        the images: an OCI image layout (tar)
#                                       whose index.json names the multi-arch
#                                       index as VERSION
#   sbom-linux-ARCH.spdx.json           SPDX 2.3 SBOM of each image
#                                       (tools/gen-sbom.py): every Debian
#                                       package, the operator's programs,
#                                       every file with its SHA-256
#   modelservice-operator-VERSION.tgz   the Helm chart, its image pinned by
#                                       the index's digest
#   install.yaml                        `helm template` of that chart with
#                                       tools/gen-manifests.py's values (the
#                                       one-file install), image by digest
#   RELEASE-NOTES.md                    the changelog's section of VERSION
#   cosign.pub                          the public key of the signatures
#   signatures/                         cosign's signature and signed payload
#                                       of the index and of each image
#                                       (*.sig, *.payload.json), and
#                                       sign-blob signatures of the chart and
#                                       of SHA256SUMS
#   release.json                        digests, sizes, package counts, times
#   SHA256SUMS                          sha256sum of every file above
#
# Tools: buildah (build-image.sh's storage), skopeo (copies the OCI layout to
# a registry with its digests unchanged), cosign (test/e2e/release-tools,
# built and cached by test/e2e/build-go-tool.sh), the distribution registry
# (scripts/registry.sh), Helm (test/e2e/build-helm.sh). scripts/setup.sh
# --release installs and builds them all. Needs root (buildah).
#
# Environment: MODELSERVICE_IMAGE_CACHE (build-image.sh's storage),
# COSIGN_PASSWORD, BUILD_PARALLELISM.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "release: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

version="" out="" key="" registry="" registry_ca="" repository="" image=""
platforms="linux/amd64,linux/arm64" changelog="$root/CHANGELOG.md" section=""
while (( $# )); do
  case "$1" in
    --out|--key|--registry|--registry-ca|--repository|--platforms|--image|--changelog)
      [[ $# -ge 2 ]] || die "$1 needs a value"
      case "$1" in
        --out) out="$2" ;; --key) key="$2" ;; --registry) registry="$2" ;;
        --registry-ca) registry_ca="$2" ;; --repository) repository="$2" ;;
        --platforms) platforms="$2" ;; --image) image="$2" ;; --changelog) changelog="$2" ;;
      esac
      shift 2 ;;
    --unreleased) section=Unreleased; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z $version ]] || die "one VERSION only"; version="$1"; shift ;;
  esac
done
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { usage >&2; die "VERSION must be semver without a v (0.2.0), not '$version'"; }
[[ $(id -u) -eq 0 ]] || die "needs root (buildah)"
IFS=, read -ra plats <<<"$platforms"
for p in "${plats[@]}"; do [[ $p == linux/amd64 || $p == linux/arm64 ]] || die "unknown platform $p"; done
[[ -z $image || ${#plats[@]} -eq 1 ]] || die "--image serves one platform: give --platforms with one"
[[ -z $registry_ca || -s $registry_ca ]] || die "--registry-ca: no file $registry_ca"
[[ -n $repository ]] || repository="${registry:+$registry/}modelservice"
out="${out:-$root/build-release/$version}"
t_start=$SECONDS
declare -A times=()

# ---------------------------------------------------------------- notes first
# The release notes are the changelog's section of VERSION: checked before
# anything is built.
section="${section:-$version}"
[[ -s $changelog ]] || die "no changelog $changelog: the release notes come from its section '## [$section]' (write it first)"
notes="$(awk -v v="$section" '
  /^## / { if (on) exit; h = $2; gsub(/[][]/, "", h); if (h == v) { on = 1; print; next } }
  on { print }' "$changelog")"
[[ -n $notes ]] || die "$changelog has no section '## [$section]' (or '## $section'): write the release's notes there first"

# ---------------------------------------------------------------- tools
bash "$root/scripts/setup.sh" --release >&2
cosign="$("$root/test/e2e/build-go-tool.sh" "$root/test/e2e/release-tools" github.com/sigstore/cosign/v2/cmd/cosign cosign)"
eval "$("$root/test/e2e/build-helm.sh")"
cache="${MODELSERVICE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modelservice-image}"
export CONTAINERS_STORAGE_CONF="$cache/storage.conf"

rm -rf "$out"
mkdir -p "$out/signatures"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
containers=()
own_registry=""
cleanup() {
  local c
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  buildah manifest rm "localhost/modelservice-release:$version" >/dev/null 2>&1 || true
  [[ -z $own_registry ]] || "$root/scripts/registry.sh" stop "$own_registry" >&2 || true
  rm -rf "$work"
}
trap cleanup EXIT

# ---------------------------------------------------------------- key
if [[ -z $key ]]; then
  keydir="$out.key"
  mkdir -p "$keydir"
  if [[ ! -s $keydir/cosign.key ]]; then
    (cd "$keydir" && COSIGN_PASSWORD="${COSIGN_PASSWORD:-}" "$cosign" generate-key-pair --output-key-prefix cosign >/dev/null 2>&1) \
      || die "cosign generate-key-pair failed"
    say "new signing key $keydir/cosign.key (keep it; publish cosign.pub)"
  fi
  key="$keydir/cosign.key"
fi
[[ -s $key ]] || die "--key: no key file $key"
export COSIGN_PASSWORD="${COSIGN_PASSWORD:-}"
"$cosign" public-key --key "$key" >"$out/cosign.pub" 2>/dev/null || die "cosign public-key --key $key failed (COSIGN_PASSWORD?)"

# ---------------------------------------------------------------- images
revision="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[[ $revision == unknown ]] || git -C "$root" diff --quiet HEAD -- 2>/dev/null || revision+="-dirty"
created="$(date -u -d "@$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)" +%Y-%m-%dT%H:%M:%SZ)"
declare -A tag_of=()
for p in "${plats[@]}"; do
  arch="${p#linux/}"
  if [[ -n $image ]]; then
    tag_of[$arch]="$image"
    say "$p: the image $image (not built again)"
    continue
  fi
  t0=$SECONDS
  tag_of[$arch]="localhost/modelservice:$version-$arch"
  say "$p: scripts/build-image.sh (log $out.build-$arch.log)"
  "$root/scripts/build-image.sh" --tag "${tag_of[$arch]}" --platform "$p" --version "$version" \
    >"$out.build-$arch.log" 2>&1 || { tail -n 20 "$out.build-$arch.log" >&2; die "build-image.sh --platform $p failed (log $out.build-$arch.log)"; }
  times[build-$arch]=$(( SECONDS - t0 ))
  say "$p built in ${times[build-$arch]}s"
done

# One multi-arch index of them, written as an OCI image layout: the form
# every later step reads, so the digests in install.yaml, the chart, the
# SBOMs, the signatures and the registry are those of the same bytes.
t0=$SECONDS
list="localhost/modelservice-release:$version"
buildah manifest rm "$list" >/dev/null 2>&1 || true
buildah manifest create "$list" >/dev/null
for arch in "${!tag_of[@]}"; do
  buildah manifest add "$list" "containers-storage:${tag_of[$arch]}" >/dev/null
done
layout="$work/oci"
buildah manifest push --quiet --all --format oci "$list" "oci:$layout:$version" >/dev/null
index_digest="$(jq -r --arg v "$version" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $v) | .digest' "$layout/index.json")"
[[ $index_digest == sha256:* ]] || die "no index $version in the OCI layout"
blob() { echo "$layout/blobs/${1%%:*}/${1#*:}"; }
jq -e '.mediaType == "application/vnd.oci.image.index.v1+json"' "$(blob "$index_digest")" >/dev/null || die "$index_digest is not an OCI index"
declare -A digest_of=() size_of=()
while read -r arch d; do
  digest_of[$arch]="$d"
  size_of[$arch]="$(jq '[.layers[].size] | add' "$(blob "$d")")"
done < <(jq -r '.manifests[] | "\(.platform.architecture) \(.digest)"' "$(blob "$index_digest")")
for arch in "${!tag_of[@]}"; do [[ -n ${digest_of[$arch]:-} ]] || die "the index has no $arch image"; done
tar -C "$layout" -cf "$out/modelservice-$version.oci.tar" .
times[index]=$(( SECONDS - t0 ))
say "index $index_digest: $(for a in "${!digest_of[@]}"; do printf '%s %s ' "$a" "${digest_of[$a]}"; done)"

# ---------------------------------------------------------------- SBOMs
t0=$SECONDS
declare -A packages_of=() files_of=() unpacked_of=()
for arch in "${!tag_of[@]}"; do
  c="$(buildah from --pull-never "${tag_of[$arch]}")"; containers+=("$c")
  mnt="$(buildah mount "$c")"
  python3 "$root/tools/gen-sbom.py" "$mnt" --name "$repository" --digest "${digest_of[$arch]}" --arch "$arch" \
    --version "$version" --revision "$revision" --created "$created" -o "$out/sbom-linux-$arch.spdx.json"
  packages_of[$arch]="$(jq '[.packages[] | select(.primaryPackagePurpose == "LIBRARY")] | length' "$out/sbom-linux-$arch.spdx.json")"
  files_of[$arch]="$(jq '.files | length' "$out/sbom-linux-$arch.spdx.json")"
  unpacked_of[$arch]="$(du -sb "$mnt" | cut -f1)"
  buildah umount "$c" >/dev/null
done
times[sbom]=$(( SECONDS - t0 ))

# ---------------------------------------------------------------- registry
t0=$SECONDS
if [[ -n $registry ]]; then
  reg="$registry" ca="$registry_ca"
else
  own_registry="$work/registry"
  eval "$("$root/scripts/registry.sh" start "$own_registry")"
  reg="$REGISTRY" ca="$REGISTRY_CA"
  say "signing in a registry of its own, $reg (stopped afterwards)"
fi
# cosign looks up Sigstore's TUF root even when it signs and verifies with a
# key and no transparency log; against a registry on loopback the release is
# made offline, so that look-up is refused at once on loopback (Go does not
# proxy loopback addresses: the registry is reached directly).
case "$reg" in
  127.*|localhost:*|\[::1\]:*) export HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost ;;
esac
certdir="$work/certs.d"
mkdir -p "$certdir"
helm_ca=()
if [[ -n $ca ]]; then
  cp "$ca" "$certdir/ca.crt"
  cat /etc/ssl/certs/ca-certificates.crt "$ca" >"$work/ca-bundle.crt"
  export SSL_CERT_FILE="$work/ca-bundle.crt"  # cosign (Go)
  helm_ca=(--ca-file "$ca")
fi
# The pushes and signatures go to the image's repository when that is in this
# registry, else to REGISTRY/modelservice (the signing registry of its own).
push_repo="$repository"
[[ $push_repo == "$reg"/* ]] || push_repo="$reg/modelservice"
skopeo copy --quiet --all --preserve-digests --dest-cert-dir "$certdir" \
  "oci:$layout:$version" "docker://$push_repo:$version" >&2 || die "skopeo copy to $push_repo:$version failed"
pushed="$(skopeo inspect --raw --cert-dir "$certdir" "docker://$push_repo:$version" | sha256sum | cut -d' ' -f1)"
[[ "sha256:$pushed" == "$index_digest" ]] || die "the registry holds sha256:$pushed for $push_repo:$version, not $index_digest"
times[push]=$(( SECONDS - t0 ))

sign_image() {  # sign_image NAME DIGEST
  "$cosign" sign --yes --key "$key" --tlog-upload=false \
    --output-signature "$out/signatures/$1.sig" --output-payload "$out/signatures/$1.payload.json" \
    "$push_repo@$2" >/dev/null 2>"$work/cosign.log" || { cat "$work/cosign.log" >&2; die "cosign sign $push_repo@$2 failed"; }
}
t0=$SECONDS
sign_image image-index "$index_digest"
for arch in "${!digest_of[@]}"; do sign_image "image-linux-$arch" "${digest_of[$arch]}"; done
# The SBOMs as signed attestations beside the images (cosign verify-attestation --type spdxjson).
for arch in "${!digest_of[@]}"; do
  "$cosign" attest --yes --key "$key" --tlog-upload=false --type spdxjson --predicate "$out/sbom-linux-$arch.spdx.json" \
    "$push_repo@${digest_of[$arch]}" >/dev/null 2>"$work/cosign.log" || { cat "$work/cosign.log" >&2; die "cosign attest failed"; }
done
"$cosign" verify --key "$out/cosign.pub" --insecure-ignore-tlog=true "$push_repo@$index_digest" >/dev/null 2>"$work/cosign.log" \
  || { cat "$work/cosign.log" >&2; die "cosign verify of what was just signed failed"; }
times[sign-images]=$(( SECONDS - t0 ))
say "signed $push_repo@$index_digest and its ${#digest_of[@]} images (cosign verify passes)"

# ---------------------------------------------------------------- chart
# The chart as released: version and appVersion VERSION, its image the
# index, pinned by digest (values image.repository and image.digest).
t0=$SECONDS
cp -a "$root/charts/modelservice-operator" "$work/chart"
python3 - "$work/chart/values.yaml" "$repository" "$index_digest" <<'PY'
import re, sys
path, repo, digest = sys.argv[1:]
text = open(path).read()
block = re.search(r"^image:\n((?:[ \t].*\n|\n)*)", text, re.M)
if not block:
    sys.exit("release: values.yaml has no image: block")
body = block.group(1)
new, n1 = re.subn(r"^(  repository: ).*$", lambda m: m.group(1) + repo, body, count=1, flags=re.M)
new, n2 = re.subn(r'^(  digest: ).*$', lambda m: m.group(1) + '"%s"' % digest, new, count=1, flags=re.M)
if n1 != 1 or n2 != 1:
    sys.exit("release: values.yaml's image: block has no repository: or digest: line")
open(path, "w").write(text[:block.start(1)] + new + text[block.end(1):])
PY
"$HELM" package "$work/chart" --version "$version" --app-version "$version" -d "$out" >/dev/null
chart="$out/modelservice-operator-$version.tgz"
[[ -s $chart ]] || die "helm package wrote no $chart"
# The values, namespace and release name of dist/install.yaml (tools/gen-manifests.py).
mapfile -t gm < <(cd "$root" && python3 -c '
import importlib.util
spec = importlib.util.spec_from_file_location("gm", "tools/gen-manifests.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print(m.NAMESPACE); print(m.RELEASE)
for v in m.BASE_VALUES: print(v)')
(( ${#gm[@]} >= 2 )) || die "cannot read tools/gen-manifests.py's NAMESPACE, RELEASE and BASE_VALUES"
ns_="${gm[0]}" release_="${gm[1]}" bv=()
for v in "${gm[@]:2}"; do bv+=(--set "$v"); done
{
  echo "# The ModelService operator $version, the whole default install in one file:"
  echo "#   kubectl apply -f install.yaml"
  echo "# helm template $release_ modelservice-operator-$version.tgz --include-crds -n $ns_ ${bv[*]}"
  echo "# (the values of tools/gen-manifests.py's dist/install.yaml); image $repository@$index_digest"
  "$HELM" template "$release_" "$chart" --include-crds --namespace "$ns_" "${bv[@]}"
} >"$out/install.yaml"
images="$(awk '$1 == "image:" && NF == 2 { print $2 }' "$out/install.yaml" | tr -d '"' | sort -u)"
[[ $images == "$repository@$index_digest" ]] || die "install.yaml names the images '$images', not $repository@$index_digest"
"$cosign" sign-blob --yes --key "$key" --tlog-upload=false --output-signature "$out/signatures/modelservice-operator-$version.tgz.sig" \
  "$chart" >/dev/null 2>"$work/cosign.log" || { cat "$work/cosign.log" >&2; die "cosign sign-blob of the chart failed"; }
chart_ref=""
if [[ -n $registry ]]; then
  HELM_REGISTRY_CONFIG="$work/helm-registry.json" "$HELM" push "$chart" "oci://$registry/charts" "${helm_ca[@]}" >"$work/helm-push.log" 2>&1 \
    || { cat "$work/helm-push.log" >&2; die "helm push to oci://$registry/charts failed"; }
  chart_digest="$(sed -n 's/^Digest: //p' "$work/helm-push.log")"
  [[ $chart_digest == sha256:* ]] || die "helm push printed no digest"
  chart_ref="$registry/charts/modelservice-operator@$chart_digest"
  "$cosign" sign --yes --key "$key" --tlog-upload=false "$chart_ref" >/dev/null 2>"$work/cosign.log" \
    || { cat "$work/cosign.log" >&2; die "cosign sign $chart_ref failed"; }
  say "chart oci://$registry/charts/modelservice-operator:$version ($chart_digest), signed"
fi
times[chart]=$(( SECONDS - t0 ))

# ---------------------------------------------------------------- notes, sums
printf '%s\n\nImages (linux/%s): `%s@%s`\n' "$notes" "$(IFS=,; echo "${!digest_of[*]}" | sed 's/,/, linux\//g')" "$repository" "$index_digest" >"$out/RELEASE-NOTES.md"
jq -n --arg version "$version" --arg revision "$revision" --arg created "$created" --arg repository "$repository" \
  --arg index "$index_digest" --arg chart "$chart_ref" \
  --argjson images "$(for a in "${!digest_of[@]}"; do
      jq -n --arg a "$a" --arg d "${digest_of[$a]}" --argjson c "${size_of[$a]}" --argjson u "${unpacked_of[$a]}" \
        --argjson p "${packages_of[$a]}" --argjson f "${files_of[$a]}" \
        '{($a): {digest: $d, compressed_bytes: $c, unpacked_bytes: $u, debian_packages: $p, files: $f}}'
    done | jq -s 'add')" \
  --argjson seconds "$(for k in "${!times[@]}"; do jq -n --arg k "$k" --argjson v "${times[$k]}" '{($k): $v}'; done | jq -s 'add + {}')" \
  '{version: $version, revision: $revision, created: $created, repository: $repository, index: $index,
    chart: $chart, images: $images, seconds: $seconds}' >"$out/release.json"
(cd "$out" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.sig -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
"$cosign" sign-blob --yes --key "$key" --tlog-upload=false --output-signature "$out/signatures/SHA256SUMS.sig" \
  "$out/SHA256SUMS" >/dev/null 2>"$work/cosign.log" || { cat "$work/cosign.log" >&2; die "cosign sign-blob SHA256SUMS failed"; }
say "release $version in $out ($(( SECONDS - t_start ))s):"
(cd "$out" && ls -l | sed 's/^/  /' >&2)
for a in "${!digest_of[@]}"; do
  say "  linux/$a: ${digest_of[$a]}, $(( size_of[$a] / 1024 / 1024 )) MiB compressed, $(( unpacked_of[$a] / 1024 / 1024 )) MiB unpacked, ${packages_of[$a]} Debian packages"
done
echo "INDEX=$index_digest"
echo "REPOSITORY=$repository"
[[ -z $chart_ref ]] || echo "CHART=$chart_ref"
