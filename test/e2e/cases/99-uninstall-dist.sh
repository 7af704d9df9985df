# The end of the real-node install's life, as docs/operator/install.md says
# (this case runs last: it removes the Helm release):
#   1. `kubectl delete ms --all -A` while the controller runs (it removes
#      their finalizer and their Deployments and Services go too), then
#      `helm uninstall`: every object of the release is gone but the CRD
#      (crds.keep), and what stays is what the docs list: the CRD, the
#      namespace, and what the controller
#      made at run time (the Secret of certificate mode self, its Lease);
#   2. then the one-file install on the same node, the README's line as
#      written, `kubectl apply -f dist/install.yaml` (its image,
#      modelservice:0.1.0, is the one install.sh imported, tagged so on the
#      node as a registry would hold it; its Pods,
#      which carry no placement, reach the real node through the namespace's
#      node-selector annotations, as ModelService namespaces do): both Pods
#      Running and Ready on the real node, the webhook reached through its
#      Service, and the controller keeps the certificates left behind (the
#      same CA, injected again into the new webhook configurations).
# timeout: 240
# needs: real-node
# logs: none
need_real_node
ns=$OPERATOR_NS
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
ca0="$(operator_secret ca-current.crt | fingerprint)"
[[ -n "$ca0" ]] || fail "no CA in Secret $OPERATOR_SECRET"

# ---- 1. uninstall
t0="$(now)"
k delete ms --all -A --timeout=90s >"$tmp/delete-ms.out" 2>&1 || fail "kubectl delete ms --all -A:\n$(cat "$tmp/delete-ms.out")"
assert_eq "$(k get ms -A -o name | wc -l)" 0 "ModelServices left after kubectl delete ms --all -A"
real_helm get manifest modelservice -n "$ns" >"$tmp/release.yaml" || fail "helm get manifest"
(cd "$E2E_ROOT" && real_helm uninstall modelservice -n "$ns" --wait --timeout 90s) >"$tmp/uninstall.out" 2>&1 \
  || fail "helm uninstall:\n$(cat "$tmp/uninstall.out")"
assert_eq "$(k get -f "$tmp/release.yaml" --ignore-not-found -o name 2>&1)" customresourcedefinition.apiextensions.k8s.io/modelservices.modelops.dev \
  "objects of the release left after helm uninstall (the CRD: crds.keep)"
no_pods() { [[ -z "$(operator_pods)" ]]; }
wait_for 60 "the operator Pods gone" no_pods
stays="$(k get crd/modelservices.modelops.dev "ns/$ns" -o name; k -n "$ns" get secrets,leases -o name)"
assert_eq "$(sort <<<"$stays" | tr '\n' ' ')" \
  "customresourcedefinition.apiextensions.k8s.io/modelservices.modelops.dev lease.coordination.k8s.io/modelservice-controller namespace/$ns secret/$OPERATOR_SECRET " \
  "what stays after helm uninstall (docs/operator/install.md)"
log "uninstalled in $(elapsed "$t0")s"

# ---- 2. kubectl apply -f dist/install.yaml, as written
# The image it names, as a registry would hold it: the image install.sh
# imported, tagged on the node as modelservice:0.1.0 (pulled IfNotPresent:
# present, so not pulled).
image="$(awk '$1 == "image:" && NF == 2 { print $2 }' "$E2E_ROOT/dist/install.yaml" | sort -u)"
assert_eq "$image" modelservice:0.1.0 "the image dist/install.yaml names"
ctr --address "$CONTAINERD_ADDRESS" -n k8s.io images tag --force localhost/modelservice:dev "docker.io/library/$image" >/dev/null \
  || fail "ctr images tag localhost/modelservice:dev docker.io/library/$image"
k annotate namespace "$ns" --overwrite scheduler.alpha.kubernetes.io/node-selector=modelops.dev/real-node=true \
  'scheduler.alpha.kubernetes.io/defaultTolerations=[{"key":"modelops.dev/real-node","operator":"Exists","effect":"NoSchedule"}]' >/dev/null
t0="$(now)"
out="$(cd "$E2E_ROOT" && k apply -f dist/install.yaml 2>&1)" || fail "kubectl apply -f dist/install.yaml:\n$out"
k -n "$ns" rollout status deployment/modelservice --timeout=120s >/dev/null || fail "dist/install.yaml: the Deployment did not roll out"
probe="$(ms_yaml dist-probe 'model: probe' 'strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}')"
denied() { [[ "$(k -n default create --dry-run=server -f - <<<"$probe" 2>&1)" == *'admission webhook "validate.modelservices.modelops.dev" denied the request'* ]]; }
wait_for 60 "the webhook of dist/install.yaml reached through its Service" denied
log "dist/install.yaml installed and serving in $(elapsed "$t0")s"
echo "TIMING real-node dist/install.yaml (apply -> webhook serves) $(elapsed "$t0")s" >>"$E2E_WORK/timings.txt"
mapfile -t pods < <(operator_pods)
assert_eq "${#pods[@]}" 2 "operator Pods of dist/install.yaml"
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}' -n "$ns")" \
    "$E2E_REAL_NODE Running True" "$p: node, phase, Ready"
  assert_eq "$(jp "pod/$p" '{range .status.containerStatuses[*]}{.name}={.ready},{.image} {end}' -n "$ns")" \
    "controller=true,docker.io/library/modelservice:0.1.0 webhook=true,docker.io/library/modelservice:0.1.0 " "$p: containers, image"
done
assert_eq "$(jp "ns/$ns" '{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" restricted "the namespace's Pod Security label (dist/install.yaml)"
assert_eq "$(operator_secret ca-current.crt | fingerprint)" "$ca0" "the Secret's CA, kept from the Helm install"
for w in "validatingwebhookconfiguration modelservice-validating" "mutatingwebhookconfiguration modelservice-mutating"; do
  # shellcheck disable=SC2086
  assert_eq "$(ca_bundle $w | fingerprint)" "$ca0" "caBundle of $w (injected again)"
done
out="$(ms_yaml after-dist 'model: m' | k -n default create --dry-run=server -f - -o 'jsonpath={.spec.replicas} {.spec.port}' 2>&1)" \
  || fail "a ModelService through dist/install.yaml's webhook: $out"
assert_eq "$out" "1 8080" "a ModelService defaulted by dist/install.yaml's webhook"
