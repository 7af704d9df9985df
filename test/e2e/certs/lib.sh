# shellcheck shell=bash
# certs/lib.sh - what the certificate cases (test/e2e/cases/4[1-4]-*.sh) share:
# a webhook and a controller of their own, the controller in --cert-mode self
# keeping the webhook's certificates, in a namespace of the case's.
#
# Sourced by a case (after lib.sh). The suite's own webhook and controller
# are left alone: the case's webhook configurations select only the case's
# namespace, and the suite's controller runs with --cert-mode provided.
#
# What certs_setup NS [CONTROLLER_FLAGS...] builds, the way a cluster has it:
#  - Service NS/modelservice-webhook, of type ExternalName pointing at
#    127.0.0.1 (the cluster has no kube-proxy; the API server resolves an
#    ExternalName Service to its name, as for the external metrics server),
#    so the API server dials the webhook on loopback but verifies its
#    certificate for modelservice-webhook.NS.svc, as in a cluster;
#  - both webhook configurations with a `service:` clientConfig and
#    caBundle "" (what `kubectl apply` of such manifests writes), kept in
#    $CERTS_CONFIGS for the case to apply again;
#  - the controller's RBAC for mode self, exactly: the one Secret
#    (get/list/watch/update narrowed by resourceNames, create on secrets),
#    the two configurations (get/list/watch/update narrowed by
#    resourceNames), and the Lease of its leader election;
#  - test/e2e/certs/secret-volume.sh as the kubelet's Secret volume
#    (tls.crt and tls.key only) of the webhook's --cert-dir, applying changes
#    $CERTS_VOLUME_DELAY seconds late (default 0);
#  - the webhook on the empty volume (it waits for its certificate, alive
#    and not ready, as in a Pod on first install), then the controller
#    (leader-elected, reconciling only NS); returns when the webhook is ready
#    and a request in NS passes it through the API server.
# certs_teardown stops them and deletes the cluster-wide objects.

certs_setup() {
  CERTS_NS="$1"; shift
  CERTS_SECRET=webhook-tls
  CERTS_SERVICE=modelservice-webhook
  CERTS_VALIDATING="$CERTS_NS-validating"
  CERTS_MUTATING="$CERTS_NS-mutating"
  CERTS_DIR="$E2E_WORK/$CERTS_NS-cert-dir"
  CERTS_CONFIGS="$E2E_WORK/$CERTS_NS-configs.yaml"
  CERTS_WEBHOOK="$CERTS_NS-webhook" CERTS_CONTROLLER="$CERTS_NS-controller" CERTS_VOLUME="$CERTS_NS-volume"
  CERTS_PORT="$(free_port)"
  local wh_metrics ctrl_metrics wh_probe ctrl_probe
  wh_metrics="127.0.0.1:$(free_port)" ctrl_metrics="127.0.0.1:$(free_port)"
  wh_probe="127.0.0.1:$(free_port)" ctrl_probe="127.0.0.1:$(free_port)"
  CERTS_WH_METRICS="http://$wh_metrics/metrics" CERTS_CTRL_METRICS="http://$ctrl_metrics/metrics"
  new_ns "$CERTS_NS"
  rm -rf "$CERTS_DIR"
  mkdir -p "$CERTS_DIR"  # the Secret volume, empty until the Secret exists
  certs_objects >"$CERTS_CONFIGS"
  k apply -f "$CERTS_CONFIGS" >/dev/null || fail "applying the case's Service and webhook configurations"
  certs_rbac | k apply -f - >/dev/null || fail "applying the case's RBAC"

  # As in a Pod: the webhook starts with an empty volume and waits (alive, not ready).
  proc_start "$CERTS_WEBHOOK" "$WEBHOOK_BIN" --port "$CERTS_PORT" --bind-address 127.0.0.1 --cert-dir "$CERTS_DIR" \
    --metrics-bind-address "$wh_metrics" --health-probe-bind-address "$wh_probe" --log-format text
  wait_for 20 "the case's webhook /healthz" http_ok "http://$wh_probe/healthz"
  proc_start "$CERTS_VOLUME" bash "$E2E_ROOT/test/e2e/certs/secret-volume.sh" "$CERTS_NS" "$CERTS_SECRET" "$CERTS_DIR" \
    --delay "${CERTS_VOLUME_DELAY:-0}"
  local kc
  kc="$(controller_kubeconfig "$CERTS_CONTROLLER")"
  # Not the controller the other cases count the writes of (controller_writes_since).
  controller_user "$CERTS_CONTROLLER" >>"$E2E_WORK/other-controllers"
  proc_start "$CERTS_CONTROLLER" "$CONTROLLER_BIN" --kubeconfig "$kc" \
    --leader-elect --leader-election-id "$CERTS_NS" --leader-election-namespace "$CERTS_NS" --namespace "$CERTS_NS" \
    --cert-mode self --cert-secret-namespace "$CERTS_NS" --cert-secret-name "$CERTS_SECRET" \
    --webhook-service-name "$CERTS_SERVICE" \
    --validating-webhook-configuration "$CERTS_VALIDATING" --mutating-webhook-configuration "$CERTS_MUTATING" \
    --prometheus-url http://127.0.0.1:9 \
    --metrics-bind-address "$ctrl_metrics" --health-probe-bind-address "$ctrl_probe" --log-format text "$@"
  wait_for 30 "the case's controller /healthz" http_ok "http://$ctrl_probe/healthz"
  wait_for 60 "the controller made Secret $CERTS_NS/$CERTS_SECRET and the volume holds it" \
    test -s "$CERTS_DIR/tls.crt" -a -s "$CERTS_DIR/tls.key"
  wait_for 20 "the case's webhook /readyz" http_ok "http://$wh_probe/readyz"
  wait_for 60 "a request in $CERTS_NS passes the case's webhook through the API server" certs_admitted
}

certs_teardown() {
  proc_stop "$CERTS_WEBHOOK" TERM 10 2>/dev/null || true
  proc_stop "$CERTS_CONTROLLER" TERM 10 2>/dev/null || true
  proc_stop "$CERTS_VOLUME" TERM 5 2>/dev/null || true
  k delete validatingwebhookconfiguration "$CERTS_VALIDATING" --ignore-not-found >/dev/null 2>&1 || true
  k delete mutatingwebhookconfiguration "$CERTS_MUTATING" --ignore-not-found >/dev/null 2>&1 || true
  k delete clusterrolebinding,clusterrole "$CERTS_NS-certs" --ignore-not-found >/dev/null 2>&1 || true
}

# certs_served_total: requests the case's webhook answered with 200 (both paths).
certs_served_total() { webhook_served "$CERTS_WH_METRICS"; }

# certs_admitted: a server-side dry run of a valid ModelService in the case's
# namespace succeeds and the case's webhook answered it.
certs_admitted() {
  local before
  before="$(certs_served_total)"
  ms_yaml probe 'model: m' | k -n "$CERTS_NS" apply --dry-run=server -f - >/dev/null 2>&1 || return 1
  (( $(certs_served_total) >= before + 2 ))
}

# certs_apply_dry_run OUT_FILE STOP_AT: server-side dry runs of a valid
# ModelService in a loop until STOP_AT (epoch seconds), one line per request
# in OUT_FILE: "EPOCH ok" or "EPOCH FAIL message".
certs_apply_dry_run() {
  local out="$1" stop_at="$2" manifest err
  manifest="$(ms_yaml "load-$BASHPID" 'model: m')"
  err="$(mktemp)"
  while (( $(date +%s) < stop_at )); do
    if k -n "$CERTS_NS" apply --dry-run=server -f - <<<"$manifest" >/dev/null 2>"$err"; then
      echo "$(date +%s.%N) ok"
    else
      echo "$(date +%s.%N) FAIL $(tr '\n' ' ' <"$err")"
    fi
  done >>"$out"
  rm -f "$err"
}

# certs_bundle KIND NAME: the caBundle of a configuration's first webhook, decoded.
certs_bundle() {
  k get "$1" "$2" -o 'jsonpath={.webhooks[0].clientConfig.caBundle}' | base64 -d
}
# certs_secret_key KEY: one key of the case's Secret, decoded.
certs_secret_key() {
  k -n "$CERTS_NS" get secret "$CERTS_SECRET" -o "jsonpath={.data.${1//./\\.}}" | base64 -d
}
# certs_fingerprints: the SHA-256 fingerprints of the certificates on stdin, one a line.
certs_fingerprints() {
  local pem="" line
  while IFS= read -r line; do
    pem+="$line"$'\n'
    if [[ "$line" == "-----END CERTIFICATE-----" ]]; then
      openssl x509 -noout -fingerprint -sha256 <<<"$pem" | cut -d= -f2
      pem=""
    fi
  done
}

certs_objects() {
  local kind path name wh
  cat <<EOF
apiVersion: v1
kind: Service
metadata: {name: $CERTS_SERVICE, namespace: $CERTS_NS}
spec:
  type: ExternalName
  externalName: 127.0.0.1
  ports: [{name: https, port: $CERTS_PORT}]
EOF
  for kind in Validating Mutating; do
    if [[ $kind == Validating ]]; then path=/validate name="$CERTS_VALIDATING" wh=validate; else path=/mutate name="$CERTS_MUTATING" wh=mutate; fi
    cat <<EOF
---
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: $name}
webhooks:
  - name: $wh.$CERTS_NS.modelops.dev
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 5
    clientConfig:
      service: {name: $CERTS_SERVICE, namespace: $CERTS_NS, path: $path, port: $CERTS_PORT}
      caBundle: ""
    rules:
      - {apiGroups: ["modelops.dev"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["modelservices"], scope: Namespaced}
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: $CERTS_NS}
EOF
  done
}

certs_rbac() {
  local user
  user="$(controller_user "$CERTS_CONTROLLER")"
  cat <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $CERTS_NS-certs}
rules:
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["validatingwebhookconfigurations"]
    resourceNames: ["$CERTS_VALIDATING"]
    verbs: ["get", "list", "watch", "update"]
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["mutatingwebhookconfigurations"]
    resourceNames: ["$CERTS_MUTATING"]
    verbs: ["get", "list", "watch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $CERTS_NS-certs}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $CERTS_NS-certs}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$user"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: certs, namespace: $CERTS_NS}
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    resourceNames: ["$CERTS_SECRET"]
    verbs: ["get", "list", "watch", "update"]
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["create"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: certs, namespace: $CERTS_NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: certs}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$user"}]
EOF
}
