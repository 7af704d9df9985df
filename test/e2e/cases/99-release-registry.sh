# The path a user takes from a published release (issue 46), on the real
# node, with a real registry: the CNCF distribution registry on loopback with
# TLS from a test CA (scripts/registry.sh), which the node's containerd trusts
# through a hosts.toml (node.sh registry).
#   1. scripts/release.sh VERSION --registry: the release of the chart's
#      version into a folder and the registry (the linux/amd64 image CI
#      built, --image: no arm64 cross-build here; the notes from the
#      changelog's Unreleased section; bench/results/release.md
#      has the full multi-arch run): the index pushed with its digest
#      unchanged, signed, the SBOM attested, the chart pushed (helm push
#      oci://) and signed. Then the folder is deleted but for cosign.pub, the
#      published public key: nothing below reads it.
#   2. cosign verify against the registry: the image by its tag (the
#      signature is of the index digest release.sh printed), the chart by its
#      tag; cosign verify-attestation --type spdxjson: the SBOM of the amd64
#      image names the operator and its Debian packages. A key of another
#      release's does not verify.
#   3. The ModelServices deleted and the Helm release of install.sh
#      uninstalled, then `helm install modelservice oci://REGISTRY/charts/
#      modelservice-operator --version VERSION` with only the real node's
#      placement: the chart names its image by digest; the node's containerd
#      pulls it from the registry (the registry's log has the node's pulls of
#      the index); both Pods Running and Ready on the real
#      node with that image, and the webhook serves through its Service.
#      (The image's blobs are those install.sh imported for the same build, so
#      containerd fetches the index and has every other blob already.)
# The release stays installed: 99-uninstall-dist uninstalls it.
# timeout: 420
# needs: real-node
# logs: none
need_real_node
ns=$OPERATOR_NS
tmp="$(mktemp -d)"
regdir="$tmp/registry"
trap '"$E2E_ROOT/scripts/registry.sh" stop "$regdir" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
eval "$("$E2E_ROOT/scripts/registry.sh" start "$regdir" 2>"$tmp/registry.out")" || fail "scripts/registry.sh start:\n$(cat "$tmp/registry.out")"
version="$(awk '$1 == "version:" { print $2; exit }' "$E2E_ROOT/charts/modelservice-operator/Chart.yaml")"
image="${E2E_OPERATOR_IMAGE:-localhost/modelservice:dev}"

# ---- 1. the release, into the registry
t0="$(now)"
"$E2E_ROOT/scripts/release.sh" "$version" --out "$tmp/release" --registry "$REGISTRY" --registry-ca "$REGISTRY_CA" \
  --platforms linux/amd64 --image "$image" --unreleased >"$tmp/release.env" 2>"$tmp/release.log" \
  || fail "scripts/release.sh $version --registry $REGISTRY:\n$(tail -n 30 "$tmp/release.log")"
# shellcheck disable=SC1091
source "$tmp/release.env"  # INDEX, REPOSITORY, CHART
log "release.sh $version --registry: $(elapsed "$t0")s; index $INDEX"
echo "TIMING release.sh (amd64, --image, --registry) $(elapsed "$t0")s" >>"$E2E_WORK/timings.txt"
assert_eq "$REPOSITORY" "$REGISTRY/modelservice" "the image's repository"
(cd "$tmp/release" && sha256sum --quiet -c SHA256SUMS) || fail "the release folder's SHA256SUMS do not match"
cp "$tmp/release/cosign.pub" "$tmp/cosign.pub"
rm -rf "$tmp/release" "$tmp/release.key"

# ---- 2. cosign verify against the registry
cosign="$("$E2E_ROOT/test/e2e/build-go-tool.sh" "$E2E_ROOT/test/e2e/release-tools" github.com/sigstore/cosign/v2/cmd/cosign cosign)"
# The registry's CA; and cosign's look-up of Sigstore's TUF root (made even
# with a key and no transparency log) refused at once on loopback, not sent
# out (the registry, on loopback, is never proxied).
export SSL_CERT_FILE="$regdir/ca-bundle.crt" HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost
out="$("$cosign" verify --key "$tmp/cosign.pub" --insecure-ignore-tlog=true "$REGISTRY/modelservice:$version" 2>"$tmp/verify.err")" \
  || fail "cosign verify $REGISTRY/modelservice:$version:\n$(cat "$tmp/verify.err")"
assert_eq "$(jq -r '.[0].critical.image."docker-manifest-digest"' <<<"$out")" "$INDEX" "the digest the image's signature signs"
out="$("$cosign" verify --key "$tmp/cosign.pub" --insecure-ignore-tlog=true "$REGISTRY/charts/modelservice-operator:$version" 2>"$tmp/verify.err")" \
  || fail "cosign verify of the chart:\n$(cat "$tmp/verify.err")"
assert_eq "$(jq -r '.[0].critical.image."docker-manifest-digest"' <<<"$out")" "${CHART#*@}" "the digest the chart's signature signs"
amd64="$(skopeo inspect --raw --cert-dir "$regdir/certs.d" "docker://$REGISTRY/modelservice@$INDEX" \
  | jq -r '.manifests[] | select(.platform.architecture == "amd64") | .digest')"
out="$("$cosign" verify-attestation --key "$tmp/cosign.pub" --insecure-ignore-tlog=true --type spdxjson \
  "$REGISTRY/modelservice@$amd64" 2>"$tmp/verify.err")" || fail "cosign verify-attestation:\n$(cat "$tmp/verify.err")"
sbom="$(jq -r '.payload' <<<"$out" | head -n 1 | base64 -d | jq '.predicate')"
assert_eq "$(jq -r '.packages[] | select(.primaryPackagePurpose == "APPLICATION") | .name' <<<"$sbom")" modelservice-operator \
  "the SBOM's application"
assert_contains "$(jq -r '.packages[].name' <<<"$sbom" | tr '\n' ' ')" "libc6 " "the SBOM's Debian packages"
COSIGN_PASSWORD="" "$cosign" generate-key-pair --output-key-prefix "$tmp/other" >/dev/null 2>&1
if "$cosign" verify --key "$tmp/other.pub" --insecure-ignore-tlog=true "$REGISTRY/modelservice:$version" >/dev/null 2>&1; then
  fail "cosign verify passes with another key"
fi
unset SSL_CERT_FILE HTTPS_PROXY NO_PROXY

# ---- 3. helm install oci://, the node pulling from the registry
"$E2E_ROOT/test/e2e/node/node.sh" registry "$E2E_REAL_DIR" "$REGISTRY" "$REGISTRY_CA" 2>"$tmp/node.err" \
  || fail "node.sh registry:\n$(cat "$tmp/node.err")"
k delete ms --all -A --timeout=90s >"$tmp/delete.out" 2>&1 || fail "kubectl delete ms --all -A:\n$(cat "$tmp/delete.out")"
real_helm uninstall modelservice -n "$ns" --wait --timeout 90s >"$tmp/uninstall.out" 2>&1 \
  || fail "helm uninstall:\n$(cat "$tmp/uninstall.out")"
no_pods() { [[ -z "$(operator_pods)" ]]; }
wait_for 60 "the operator Pods of install.sh gone" no_pods
cat >"$tmp/placement.yaml" <<'EOF'
nodeSelector:
  modelops.dev/real-node: "true"
tolerations:
  - key: modelops.dev/real-node
    operator: Exists
    effect: NoSchedule
EOF
pulls0="$(grep -c 'GET /v2/modelservice/' "$regdir/registry.log" || true)"
t0="$(now)"
SSL_CERT_FILE="$regdir/ca-bundle.crt" real_helm install modelservice "oci://$REGISTRY/charts/modelservice-operator" --version "$version" -n "$ns" \
  --ca-file "$REGISTRY_CA" -f "$tmp/placement.yaml" --wait --timeout 120s >"$tmp/install.out" 2>&1 \
  || fail "helm install oci://$REGISTRY/charts/modelservice-operator:\n$(cat "$tmp/install.out")\n$(k -n "$ns" get pods -o wide 2>&1)"
log "helm install oci:// -> rolled out in $(elapsed "$t0")s"
echo "TIMING real-node helm install oci:// (pull from the registry, rollout) $(elapsed "$t0")s" >>"$E2E_WORK/timings.txt"
assert_eq "$(real_helm list -n "$ns" -o json | jq -r '.[] | "\(.name) \(.status) \(.chart) \(.app_version)"')" \
  "modelservice deployed modelservice-operator-$version $version" "helm list"
mapfile -t pods < <(operator_pods)
assert_eq "${#pods[@]}" 2 "operator Pods"
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}' -n "$ns")" \
    "$E2E_REAL_NODE Running True" "$p: node, phase, Ready"
  assert_eq "$(jp "pod/$p" '{range .spec.containers[*]}{.name}={.image} {end}' -n "$ns")" \
    "webhook=$REGISTRY/modelservice@$INDEX controller=$REGISTRY/modelservice@$INDEX " "$p: the images, by digest"
  assert_eq "$(jp "pod/$p" '{range .status.containerStatuses[*]}{.imageID} {end}' -n "$ns")" \
    "$REGISTRY/modelservice@$INDEX $REGISTRY/modelservice@$INDEX " "$p: the images the node ran"
done
pulls="$(grep 'GET /v2/modelservice/' "$regdir/registry.log" | tail -n +"$(( pulls0 + 1 ))")"
assert_contains "$pulls" "GET /v2/modelservice/manifests/$INDEX HTTP/1.1\" 200" "the node's pull of the index from the registry"
assert_contains "$pulls" "\"containerd/" "the puller of the index (the registry's access log)"
# The amd64 manifest, configuration and layers are the very blobs of the
# image install.sh imported (the same build): containerd's content store has
# them by digest and fetches only the index it lacked; every blob the index
# names for amd64 is there.
amd64="${amd64:?}"
# The list is read whole first: `ctr ... | grep -q` under pipefail failed
# when grep exited at its match while ctr (a line per write) still wrote,
# and ctr died of SIGPIPE (a blob that was there reported missing, once).
blobs="$(ctr --address "$CONTAINERD_ADDRESS" -n k8s.io content ls -q)"
for d in "$amd64" $(skopeo inspect --raw --cert-dir "$regdir/certs.d" "docker://$REGISTRY/modelservice@$amd64" | jq -r '.config.digest, .layers[].digest'); do
  [[ $'\n'"$blobs"$'\n' == *$'\n'"$d"$'\n'* ]] || fail "the node's containerd lacks blob $d of $amd64"
done
probe="$(ms_yaml release-probe 'model: probe' 'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}')"
denied() { [[ "$(k -n default create --dry-run=server -f - <<<"$probe" 2>&1)" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]]; }
wait_for 60 "the webhook of the release reached through its Service" denied
