# The operator as users run it (issues 19 and 22): installed by run.sh from
# the image scripts/build-image.sh built, with the README's line for the local
# cluster (test/e2e/operator/install.sh: `helm install` of the chart with its
# default values, certificate mode self, only the image and the real node's
# placement set in test/e2e/operator/real-node-values.yaml), on the real node,
# where its containers really run.
#   - The release is deployed with exactly those values; the README has the
#     line install.sh ran.
#   - Both replicas Running and Ready on the real node, both containers of
#     each from that image, running as the non-root user 65532 with read-only
#     root file systems, no capabilities, no_new_privs; the namespace enforces
#     the restricted Pod Security Standard (a privileged Pod is refused
#     there); the webhook container holds no service-account token, the
#     controller the projected one, and the controller talks to the API
#     server through the in-cluster configuration with that bound token (the
#     audit log names the Pod and the node the token was issued for).
#   - Certificate mode self in the Pods: the Secret was created by the
#     controller's ServiceAccount from a Pod (audit log) and holds a CA and a
#     serving certificate for the Service; both webhook configurations carry
#     that CA; each webhook container sees only tls.crt and tls.key (never the
#     CA's key) and serves the Secret's certificate; the webhooks waited for
#     it (the optional Secret volume was empty until the kubelet synced the
#     Secret the controller made), alive and not Ready meanwhile.
#   - `helm test`: the chart's test Pod (templates/tests/, the operator's image
#     running `modelservice-controller check-admission`) succeeds on the real
#     node: a server-side dry run of a ModelService came back with the
#     mutating webhook's defaults, and an invalid one was denied by the
#     validating webhook (`--logs` shows both lines); the release stays at
#     revision 1.
# timeout: 120
# needs: real-node
# logs: none
need_real_node
ns=$OPERATOR_NS

# ---- the release, as the README says
line='helm install modelservice charts/modelservice-operator -n modelservice-system --create-namespace -f test/e2e/operator/real-node-values.yaml'
assert_contains "$(cat "$E2E_WORK/logs/operator-install.log")" "install.sh: $line" "the helm line install.sh ran"
grep -qxF -- "$line" "$E2E_ROOT/README.md" || fail "README.md has no line: $line"
assert_eq "$(real_helm list -n "$ns" -o json | jq -r '.[] | "\(.name) \(.revision) \(.status) \(.chart)"')" \
  "modelservice 1 deployed modelservice-operator-0.1.0" "helm list"
assert_eq "$(real_helm get values modelservice -n "$ns" -o json | jq -cS .)" \
  "$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1])), sort_keys=True, separators=(",", ":")))' \
     "$E2E_ROOT/test/e2e/operator/real-node-values.yaml")" "the release's values (helm get values): real-node-values.yaml, nothing else"

# ---- the Pods
mapfile -t pods < <(operator_pods)
assert_eq "${#pods[@]}" 2 "number of operator Pods"
assert_eq "$(k -n "$ns" get deployment modelservice -o 'jsonpath={.status.readyReplicas}/{.spec.replicas}')" "2/2" "Deployment modelservice ready replicas"
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.spec.nodeName}' -n "$ns")" "$E2E_REAL_NODE" "$p: node"
  assert_eq "$(jp "pod/$p" '{.status.phase} {.status.conditions[?(@.type=="Ready")].status}' -n "$ns")" "Running True" "$p: phase and Ready"
  assert_eq "$(jp "pod/$p" '{range .status.containerStatuses[*]}{.name}={.ready},{.started},{.image} {end}' -n "$ns")" \
    "controller=true,true,localhost/modelservice:dev webhook=true,true,localhost/modelservice:dev " "$p: containers ready, started, image"
  # The image has no shell and no `id`: the containers' first processes are
  # read from the host (container_pid).
  for c in webhook controller; do
    pid="$(container_pid "$ns" "$p" "$c")"
    [[ -n $pid ]] || fail "no running task for $p/$c"
    st="$(cat "/proc/$pid/status")"
    assert_eq "$(awk '/^Uid:|^Gid:/ { printf "%s=%s ", $1, $2 }' <<<"$st")" "Uid:=65532 Gid:=65532 " "$p/$c: uid and gid"
    assert_eq "$(awk -F: '$3 == 65532 { print $1 }' "/proc/$pid/root/etc/passwd")" "nonroot" "$p/$c: the image's name of uid 65532"
    assert_eq "$(awk '$5 == "/" { split($6, o, ","); print o[1] }' "/proc/$pid/mountinfo")" "ro" "$p/$c: the root file system's mount"
    assert_contains "$(grep '^CapEff' <<<"$st")" "0000000000000000" "$p/$c: effective capabilities"
    assert_contains "$(grep '^NoNewPrivs' <<<"$st")" "1" "$p/$c: no_new_privs"
    [[ ! -e "/proc/$pid/root/bin/sh" ]] || fail "$p/$c: the image has /bin/sh"
  done
  pid="$(container_pid "$ns" "$p" webhook)"
  [[ ! -e "/proc/$pid/root/var/run/secrets/kubernetes.io/serviceaccount" ]] || fail "$p/webhook: has a service-account token"
  pid="$(container_pid "$ns" "$p" controller)"
  assert_eq "$(ls "/proc/$pid/root/var/run/secrets/kubernetes.io/serviceaccount" | tr '\n' ' ')" \
    "ca.crt namespace token " "$p/controller: the projected token volume"
done

# The restricted Pod Security Standard is enforced on the namespace.
assert_eq "$(jp ns/"$ns" '{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" restricted "namespace enforce label"
out="$(k -n "$ns" run e2e-privileged --image=localhost/modelservice:dev --dry-run=server \
  --overrides='{"spec":{"containers":[{"name":"x","image":"localhost/modelservice:dev","securityContext":{"privileged":true}}]}}' 2>&1 || true)"
assert_contains "$out" 'violates PodSecurity "restricted:latest"' "a privileged Pod in $ns"

# In-cluster configuration: the API server's ClusterIP, the bound token.
for p in "${pods[@]}"; do
  assert_contains "$(k -n "$ns" logs "$p" -c controller | head -n 5)" "against https://10.0.0.1:443" "$p: the controller's API server"
done
sa=system:serviceaccount:$ns:modelservice-controller
# lease_requests_of POD: audit events of Lease requests (the leader's
# renewals, the standby's reads) authenticated by a token bound to POD on the
# real node.
lease_requests_of() {
  jq -c --arg u "$sa" --arg p "$1" --arg n "$E2E_REAL_NODE" 'select(.user.username == $u and .objectRef.resource == "leases"
    and .user.extra["authentication.kubernetes.io/pod-name"] == [$p]
    and .user.extra["authentication.kubernetes.io/node-name"] == [$n])' "$E2E_AUDIT_LOG" | wc -l | grep -qv '^0$'
}
for p in "${pods[@]}"; do
  wait_for 30 "Lease requests of $p's controller, as $sa with a token bound to $p (audit log)" lease_requests_of "$p"
done

# ---- certificate mode self, in the Pods
assert_eq "$(jq -r --arg ns "$ns" --arg s "$OPERATOR_SECRET" 'select(.stage == "ResponseComplete" and .verb == "create"
    and .objectRef.resource == "secrets" and .objectRef.namespace == $ns and .objectRef.name == $s and .responseStatus.code == 201)
    | "\(.user.username) \(.user.extra["authentication.kubernetes.io/pod-name"][0] | startswith("modelservice-"))"' "$E2E_AUDIT_LOG")" \
  "$sa true" "who created Secret $OPERATOR_SECRET (audit log): the controller, from an operator Pod"
assert_eq "$(k -n "$ns" get secret "$OPERATOR_SECRET" -o json | jq -r '"\(.type) \(.data | keys | join(","))"')" \
  "kubernetes.io/tls ca-current.crt,ca-current.key,ca.crt,tls.crt,tls.key" "type and keys of the Secret"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
operator_secret ca.crt >"$tmp/ca.crt"
operator_secret tls.crt >"$tmp/tls.crt"
out="$(openssl verify -purpose sslserver -CAfile "$tmp/ca.crt" "$tmp/tls.crt" 2>&1)" || fail "openssl verify of the Secret's tls.crt: $out"
assert_eq "$(openssl x509 -noout -ext subjectAltName -in "$tmp/tls.crt" | tail -n 1 | tr -d ' ')" \
  "DNS:modelservice-webhook,DNS:modelservice-webhook.$ns,DNS:modelservice-webhook.$ns.svc,DNS:modelservice-webhook.$ns.svc.cluster.local" \
  "DNS names of the serving certificate"
for w in "validatingwebhookconfiguration modelservice-validating" "mutatingwebhookconfiguration modelservice-mutating"; do
  # shellcheck disable=SC2086
  assert_eq "$(ca_bundle $w)" "$(cat "$tmp/ca.crt")" "caBundle of $w (injected by the controller)"
done
fp="$(fingerprint <"$tmp/tls.crt")"
waited=0 secret_at="$(jp "secret/$OPERATOR_SECRET" '{.metadata.creationTimestamp}' -n "$ns")"
for p in "${pods[@]}"; do
  assert_eq "$(ls "/proc/$(container_pid "$ns" "$p" webhook)/root/etc/modelservice/tls" | tr '\n' ' ')" "tls.crt tls.key " \
    "$p/webhook: the files of its Secret volume"
  assert_eq "$(served_fp "$(jp "pod/$p" '{.status.podIP}' -n "$ns")")" "$fp" "$p: the certificate its webhook serves"
  msgs="$(k -n "$ns" logs "$p" -c webhook | jq -r '.msg | if startswith("waiting for the serving certificate") then "waiting"
    elif startswith("serving admission on https://") then "serving" else empty end' | tr '\n' ' ')"
  case "$msgs" in
    "waiting serving ")
      waited=$(( waited + 1 ))
      # Not Ready while it waited: Ready only after the Secret existed.
      ready_at="$(jp "pod/$p" '{.status.conditions[?(@.type=="Ready")].lastTransitionTime}' -n "$ns")"
      [[ ! "$ready_at" < "$secret_at" ]] || fail "$p: Ready at $ready_at, before Secret $OPERATOR_SECRET was created at $secret_at" ;;
    "serving ") ;;
    *) fail "$p/webhook: start-up lines 'waiting for the serving certificate' / 'serving admission': $msgs" ;;
  esac
done
log "webhooks that waited for the Secret on their first start: $waited of ${#pods[@]}"
assert_le 1 "$waited" "webhook containers that waited for the controller's Secret"

# ---- helm test: the chart's check that both webhooks answer
out="$(cd "$E2E_ROOT" && real_helm test modelservice -n "$ns" --timeout 90s --logs 2>&1)" || fail "helm test:\n$out"
assert_contains "$out" "Phase:          Succeeded" "helm test: the test Pod's phase"
assert_contains "$out" "ok: the mutating webhook defaulted a ModelService (spec.replicas 1, spec.port 8080)" "helm test: the mutating webhook"
assert_contains "$out" "ok: the validating webhook denied an invalid ModelService: " "helm test: the validating webhook"
assert_contains "$out" 'admission webhook "validate.modelservices.modelops.dev" denied the request' "helm test: who denied it"
assert_eq "$(k -n "$ns" get pod modelservice-test-admission -o 'jsonpath={.status.phase} {.spec.nodeName}')" "Succeeded $E2E_REAL_NODE" \
  "the test Pod after the run (kept for its logs)"
assert_eq "$(real_helm list -n "$ns" -o json | jq -r '.[] | "\(.revision) \(.status)"')" "1 deployed" "the release after helm test"
