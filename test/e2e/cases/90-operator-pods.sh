# The operator as users run it (issue 19): installed by run.sh from the image
# scripts/build-image.sh built (test/e2e/operator/install.sh: kubectl apply -k
# of manifests/ with the local cluster's image and placement) on the real
# node, where its containers really run. Both replicas Running and Ready on
# the real node, both containers of each from that image, running as the
# non-root user 65532 with read-only root file systems; the namespace
# enforces the restricted Pod Security Standard (a privileged Pod is refused
# there); the webhook container holds no service-account token, the
# controller the projected one, and the controller talks to the API server
# through the in-cluster configuration with that bound token (the audit log
# names the Pod and the node the token was issued for).
# timeout: 120
# needs: real-node
# logs: none
need_real_node
ns=$OPERATOR_NS

mapfile -t pods < <(operator_pods)
assert_eq "${#pods[@]}" 2 "number of operator Pods"
assert_eq "$(k -n "$ns" get deployment modelservice -o 'jsonpath={.status.readyReplicas}/{.spec.replicas}')" "2/2" "Deployment modelservice ready replicas"
for p in "${pods[@]}"; do
  assert_eq "$(jp "pod/$p" '{.spec.nodeName}' -n "$ns")" "$E2E_REAL_NODE" "$p: node"
  assert_eq "$(jp "pod/$p" '{.status.phase} {.status.conditions[?(@.type=="Ready")].status}' -n "$ns")" "Running True" "$p: phase and Ready"
  assert_eq "$(jp "pod/$p" '{range .status.containerStatuses[*]}{.name}={.ready},{.started},{.image} {end}' -n "$ns")" \
    "controller=true,true,localhost/modelservice:dev webhook=true,true,localhost/modelservice:dev " "$p: containers ready, started, image"
  for c in webhook controller; do
    out="$(k -n "$ns" exec "$p" -c "$c" -- id 2>&1)" || fail "kubectl exec $p -c $c -- id: $out"
    assert_contains "$out" "uid=65532(nonroot) gid=65532(nonroot)" "$p/$c: id"
    out="$(k -n "$ns" exec "$p" -c "$c" -- sh -c 'echo x >/usr/local/bin/x' 2>&1 || true)"
    assert_contains "$out" "Read-only file system" "$p/$c: writing to the root file system"
    out="$(k -n "$ns" exec "$p" -c "$c" -- sh -c 'cat /proc/1/status' 2>&1)"
    assert_contains "$(grep '^CapEff' <<<"$out")" "0000000000000000" "$p/$c: effective capabilities"
    assert_contains "$(grep '^NoNewPrivs' <<<"$out")" "1" "$p/$c: no_new_privs"
  done
  out="$(k -n "$ns" exec "$p" -c webhook -- ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1 || true)"
  assert_contains "$out" "No such file or directory" "$p/webhook: service-account token"
  assert_eq "$(k -n "$ns" exec "$p" -c controller -- ls /var/run/secrets/kubernetes.io/serviceaccount | tr '\n' ' ')" \
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
