# `modelservice-webhook validate` decides as `kubectl apply` (default flags)
# does (issue 21 section 5): for each document below, validate's verdict
# (exit status 0 or 1) is kubectl apply --dry-run=server's (accepted or not),
# through the real API server (CRD schema, pruning, strict field validation,
# both webhooks). Where the webhook denies, kubectl shows validate's own
# messages; where strict field validation refuses unknown fields, both say
# `strict decoding error: unknown field "..."`. Every pod field of the spec
# is here, valid and broken. Works on the light cluster (no pods are made).
# timeout: 120
# logs: webhook
ns=e2e-validate-apply
new_ns "$ns"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
n=0

# check NAME valid|invalid SPEC [TOP_LEVEL_YAML]: one document, both verdicts.
check() {
  local name="$1" want="$2" spec="$3" extra="${4:-}" f v a out msgs
  f="$tmp/$name.yaml"
  printf 'apiVersion: modelops.dev/v1\nkind: ModelService\nmetadata: {name: %s}\nspec: %s\n%s' \
    "$name" "$spec" "${extra:+$extra$'\n'}" >"$f"
  if "$WEBHOOK_BIN" validate "$f" >"$f.validate" 2>/dev/null; then v=valid; else v=invalid; fi
  if out="$(k -n "$ns" apply --dry-run=server -f "$f" 2>&1)"; then a=valid; else a=invalid; fi
  assert_eq "validate $v, kubectl $a" "validate $want, kubectl $want" "$name (validate: $(cat "$f.validate"); kubectl: $out)"
  # What validate says is what kubectl shows.
  msgs="$(sed -n "s|^$f:1 ($name): ||p" "$f.validate" | { grep -v '^Warning: ' || true; } | paste -sd ';' | sed 's/;/; /g')"
  if [[ "$out" == *"denied the request: "* ]]; then
    assert_eq "${out##*denied the request: }" "$msgs" "$name: the webhook's message through kubectl"
  elif [[ "$out" == *"strict decoding error"* ]]; then
    assert_contains "$out" "${msgs%%; *}" "$name: strict field validation"
  fi
  n=$(( n + 1 ))
}

# ---- what the API server does before admission
check null-replicas valid '{model: m, replicas: null}'
check null-strategy-type valid '{model: m, strategy: {type: null}}'
check status-on-create valid '{model: m}' 'status: {phase: Happy}'
# A status of the wrong types too: the API server drops it before its schema
# and the validating webhook see the object, so neither judges it.
check status-wrong-types-on-create valid '{model: m}' 'status: {replicas: two, conditions: none}'
check unknown-in-spec invalid '{model: m, colour: red}'
check unknown-top-level invalid '{model: m}' 'colour: blue'
check unknown-in-env invalid '{model: m, env: [{name: A, vaule: "1"}]}'
check replicas-0 invalid '{model: m, replicas: 0}'

# ---- every pod field, valid
check pod-fields valid '{model: m, gpus: 1, image: registry.local/serve:1.4,
  resources: {requests: {cpu: "0.5", memory: 1Gi, ephemeral-storage: 10Gi}, limits: {cpu: 2, memory: 2Gi}},
  env: [{name: HF_HOME, value: /cache}, {name: T, valueFrom: {secretKeyRef: {name: hf, key: token, optional: true}}},
        {name: C, valueFrom: {configMapKeyRef: {name: cfg, key: mode}}}],
  args: [--port, "8080"], nodeSelector: {pool: a100},
  tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}, {operator: Exists},
                {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}],
  imagePullSecrets: [{name: regcred}], serviceAccountName: model-reader, priorityClassName: model-serving.high,
  podAnnotations: {prometheus.io/scrape: "true"}, podLabels: {team: nlp}}'
check priority-class-empty valid '{model: m, priorityClassName: ""}'

# ---- every pod field, broken (the webhook's words, or the CRD schema's)
check gpu-in-resources invalid '{model: m, resources: {limits: {nvidia.com/gpu: 1}}}'
check hugepages invalid '{model: m, resources: {requests: {hugepages-2Mi: 1Gi}}}'
check request-above-limit invalid '{model: m, resources: {requests: {cpu: "3"}, limits: {cpu: "2"}}}'
check negative-memory invalid '{model: m, resources: {requests: {memory: "-1"}}}'
check not-a-quantity invalid '{model: m, resources: {limits: {memory: lots}}}'
check env-model-name invalid '{model: m, env: [{name: MODEL_VERSION, value: "9"}]}'
check env-bad-name invalid '{model: m, env: [{name: "A=B", value: "1"}]}'
check env-value-and-from invalid '{model: m, env: [{name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]}'
check env-two-sources invalid '{model: m, env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}, configMapKeyRef: {name: c, key: k}}}]}'
check env-no-name invalid '{model: m, env: [{value: "1"}]}'
check args-not-strings invalid '{model: m, args: [1]}'
check node-selector-bad-key invalid '{model: m, nodeSelector: {"bad key": a}}'
check node-selector-bad-value invalid '{model: m, nodeSelector: {pool: "a b"}}'
check toleration-exists-with-value invalid '{model: m, tolerations: [{key: k, operator: Exists, value: v}]}'
check toleration-seconds-no-execute invalid '{model: m, tolerations: [{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]}'
check toleration-operator invalid '{model: m, tolerations: [{key: k, operator: In}]}'
check toleration-empty-key-equal invalid '{model: m, tolerations: [{operator: Equal, value: v}]}'
check pull-secret-not-object invalid '{model: m, imagePullSecrets: [regcred]}'
check service-account-upper invalid '{model: m, serviceAccountName: Reader}'
check priority-class-upper invalid '{model: m, priorityClassName: High_Priority}'
check priority-class-too-long invalid "{model: m, priorityClassName: $(printf 'p%.0s' {1..254})}"
check pod-annotation-bad-key invalid '{model: m, podAnnotations: {"a/b/c": x}}'
check pod-label-selector invalid '{model: m, podLabels: {app.kubernetes.io/name: other}}'
check pod-label-bad-value invalid '{model: m, podLabels: {team: "-nlp"}}'
# Issue 41: every map and list is bounded (the CRD refuses 65 pod labels
# before the webhook, in the words the webhook's parser uses too), and pod
# annotations may not undo the restricted Pod Security Standard.
labels() { local i out=""; for ((i = 0; i < $1; i++)); do out+="${out:+, }l$i: v"; done; printf '{%s}' "$out"; }
check pod-labels-at-bound valid "{model: m, podLabels: $(labels 64)}"
check pod-labels-over-bound invalid "{model: m, podLabels: $(labels 65)}"
check pod-annotation-apparmor-unconfined invalid '{model: m, podAnnotations: {container.apparmor.security.beta.kubernetes.io/model: unconfined}}'
check pod-annotation-seccomp-runtime-default valid '{model: m, podAnnotations: {seccomp.security.alpha.kubernetes.io/pod: runtime/default}}'
check affinity valid '{model: m, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [A100]}]}]}},
  podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {labelSelector: {matchLabels: {app.kubernetes.io/instance: m}}, topologyKey: kubernetes.io/hostname}}]}},
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]}'
check affinity-no-terms invalid '{model: m, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}}'
check affinity-weight-0 invalid '{model: m, affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, podAffinityTerm: {topologyKey: zone}}]}}}'
check affinity-unknown-member invalid '{model: m, affinity: {nodeAffinity: {requiredDuringSchedulingRequiredDuringExecution: {}}}}'
check affinity-no-topology-key invalid '{model: m, affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}}'
check spread-zero-skew invalid '{model: m, topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}'
check spread-when invalid '{model: m, topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}]}'
# Issue 43: the model servers' pod contract, valid and broken.
check runtime-vllm valid '{model: m, runtime: vLLM}'
check runtime-unknown invalid '{model: m, runtime: vllm}'
check command-args valid '{model: m, command: [/bin/serve], args: [--x]}'
check ports-metrics valid '{model: m, ports: [{name: metrics, containerPort: 9090}]}'
check ports-named-http invalid '{model: m, ports: [{name: http, containerPort: 9090}]}'
check ports-upper-name invalid '{model: m, ports: [{name: Metrics, containerPort: 9090}]}'
check ports-duplicate invalid '{model: m, ports: [{name: a, containerPort: 9090}, {name: b, containerPort: 9090}]}'
check ports-zero invalid '{model: m, ports: [{name: a, containerPort: 0}]}'
check ports-too-many invalid '{model: m, ports: [{name: a, containerPort: 1}, {name: b, containerPort: 2}, {name: c, containerPort: 3}, {name: d, containerPort: 4}, {name: e, containerPort: 5}, {name: f, containerPort: 6}, {name: g, containerPort: 7}, {name: h, containerPort: 8}, {name: i, containerPort: 9}]}'
check probes valid '{model: m, ports: [{name: metrics, containerPort: 9090}], readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5},
  livenessProbe: {tcpSocket: {port: 8080}}, startupProbe: {exec: {command: [cat, /tmp/ready]}, failureThreshold: 90}}'
check probe-port-by-name-of-metrics valid '{model: m, ports: [{name: metrics, containerPort: 9090}], readinessProbe: {httpGet: {path: /m, port: metrics}}}'
check probe-no-handler invalid '{model: m, readinessProbe: {periodSeconds: 5}}'
check probe-two-handlers invalid '{model: m, readinessProbe: {exec: {command: ["true"]}, tcpSocket: {port: 8080}}}'
check probe-unknown-port-name invalid '{model: m, startupProbe: {httpGet: {path: /, port: metrics}}}'
check probe-port-0 invalid '{model: m, readinessProbe: {httpGet: {path: /, port: 0}}}'
check probe-liveness-success-2 invalid '{model: m, livenessProbe: {tcpSocket: {port: http}, successThreshold: 2}}'
check probe-scheme invalid '{model: m, readinessProbe: {httpGet: {path: /, port: http, scheme: FTP}}}'
check security-context valid '{model: m, securityContext: {runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000}}'
check security-context-root invalid '{model: m, securityContext: {runAsUser: 0}}'
check security-context-unknown invalid '{model: m, securityContext: {privileged: true}}'
check volumes valid '{model: m, volumes: [{name: cache, mountPath: /models, readOnly: true, subPath: llama, persistentVolumeClaim: {claimName: model-cache}},
  {name: cfg, mountPath: /etc/cfg, configMap: {name: cfg}}, {name: tok, mountPath: /var/run/tok, secret: {secretName: tok}},
  {name: scratch, mountPath: /scratch, emptyDir: {sizeLimit: 10Gi}}], sharedMemorySize: 2Gi}'
check volume-host-path invalid '{model: m, volumes: [{name: h, mountPath: /h, hostPath: {path: /}}]}'
check volume-no-source invalid '{model: m, volumes: [{name: a, mountPath: /a}]}'
check volume-two-sources invalid '{model: m, volumes: [{name: a, mountPath: /a, emptyDir: {}, configMap: {name: c}}]}'
check volume-relative-mount invalid '{model: m, volumes: [{name: a, mountPath: models, emptyDir: {}}]}'
check volume-dev-shm invalid '{model: m, volumes: [{name: a, mountPath: /dev/shm, emptyDir: {}}]}'
check volume-subpath-dotdot invalid '{model: m, volumes: [{name: a, mountPath: /a, subPath: ../x, emptyDir: {}}]}'
check volume-name-dshm invalid '{model: m, volumes: [{name: dshm, mountPath: /a, emptyDir: {}}]}'
check shared-memory-0 invalid '{model: m, sharedMemorySize: "0"}'
check shared-memory-garbage invalid '{model: m, sharedMemorySize: lots}'
check runtime-class valid '{model: m, runtimeClassName: nvidia}'
check runtime-class-upper invalid '{model: m, runtimeClassName: Nvidia}'
check grace-period valid '{model: m, terminationGracePeriodSeconds: 600}'
check grace-period-negative invalid '{model: m, terminationGracePeriodSeconds: -1}'
log "ok: $n documents, the same verdict from validate and kubectl apply"
