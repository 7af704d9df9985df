# Every valid sample in manifests/samples/ is created by `kubectl apply`; the
# mutating webhook's defaults are visible in `kubectl get ms X -o yaml`;
# `kubectl apply --dry-run=server` of a new object shows the defaults and
# creates nothing. On the full cluster every sample's pods are scheduled and
# become Ready, and `kubectl get ms` shows what the README's first command
# shows: READY n/n, PHASE Ready - except the autoscaled gpt2-chat,
# whose queue length no exporter reports here: its 2 pods are Ready but it is
# Degraded (MetricsUnavailable), replicas kept. The model-server samples
# (runtimes/: vLLM, TGI, Triton, MLServer) name published images, GPUs,
# claims and a RuntimeClass this cluster does not have: each is accepted by
# `kubectl apply --dry-run=server` (both webhooks and the schema) and its
# defaults are the runtime's (case 34 compares them with `validate`; the
# cases 92-runtime-* run the runtimes on the real node).
# timeout: 120
# logs: webhook
ns=e2e-samples
new_ns "$ns"
samples=("$E2E_ROOT"/manifests/samples/*.yaml)
runtime_samples=("$E2E_ROOT"/manifests/samples/runtimes/*.yaml)
(( ${#samples[@]} >= 4 )) || fail "expected at least 4 valid samples, found ${#samples[@]}"
(( ${#runtime_samples[@]} == 4 )) || fail "expected a sample per runtime (4), found ${#runtime_samples[@]}"
for f in "${runtime_samples[@]}"; do
  name="$(k create --dry-run=client -f "$f" -o 'jsonpath={.metadata.name}')"
  out="$(k -n "$ns" apply --dry-run=server -f "$f" -o json 2>&1)" || fail "kubectl apply --dry-run=server -f $f failed: $out"
  runtime="$(jq -r .spec.runtime <<<"$out")" port="$(jq -r .spec.port <<<"$out")"
  case "$runtime" in
    vLLM|Triton) want=8000 ;;
    TGI|MLServer) want=8080 ;;
    *) fail "$(basename "$f"): spec.runtime '$runtime'" ;;
  esac
  assert_eq "$port" "$want" "runtimes/$(basename "$f") ($runtime): spec.port defaulted from the runtime (server dry run)"
  gone "$ns" ms "$name" || fail "$name exists after a dry run"
done
names=()
for f in "${samples[@]}"; do
  name="$(k create --dry-run=client -f "$f" -o 'jsonpath={.metadata.name}')"
  names+=("$name")
  out="$(k -n "$ns" apply -f "$f" 2>&1)" || fail "kubectl apply -f $f failed: $out"
  assert_contains "$out" "modelservice.modelops.dev/$name created" "apply $(basename "$f")"
  exists "$ns" ms "$name" || fail "$name not found after apply"
done

# Defaults of the minimal sample, as a user sees them.
yaml="$(k -n "$ns" get ms minimal -o yaml)"
spec_yaml="$(sed -n '/^spec:/,/^status:/p' <<<"$yaml")"
for line in '  gpus: 0' '  model: distilbert-base-uncased' '  port: 8080' '  replicas: 1' \
            '  strategy:' '    rollingUpdate:' '      maxSurge: 25%' '      maxUnavailable: 0' '    type: RollingUpdate' \
            '  rollout:' '    rollback: Manual' '    timeoutSeconds: 600'; do
  grep -qxF -- "$line" <<<"$spec_yaml" || fail "kubectl get ms minimal -o yaml: no line '$line' in spec:\n$spec_yaml"
done
log "ok: minimal's spec in -o yaml:"; echo "$spec_yaml" >&2
# ... and with exact JSON types (maxSurge the string "25%", maxUnavailable the integer 0).
spec="$(k -n "$ns" get ms minimal -o json | jq -cS .spec)"
assert_eq "$spec" '{"gpus":0,"model":"distilbert-base-uncased","port":8080,"replicas":1,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"}}' "minimal .spec"

# Defaults added to the other samples only where missing.
assert_eq "$(k -n "$ns" get ms bert-qa -o json | jq -cS .spec)" \
  '{"gpus":1,"image":"registry.local/serve:1.4","model":"bert-base-uncased","port":8080,"replicas":2,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"},"version":"3"}' "bert-qa .spec"
assert_eq "$(k -n "$ns" get ms gpt2-chat -o json | jq -cS .spec)" \
  '{"autoscaling":{"maxReplicas":10,"minReplicas":1,"mode":"Controller","targetQueueLength":5},"gpus":0,"image":"registry.local/serve:1.4","model":"gpt2","port":8080,"replicas":2,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"},"version":"1"}' "gpt2-chat .spec"
assert_eq "$(k -n "$ns" get ms gpu-no-image -o json | jq -cS .spec)" \
  '{"gpus":1,"model":"resnet50","port":8080,"replicas":1,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"}}' "gpu-no-image .spec"

# Server-side dry run of a new object: defaults in the output, nothing created.
out="$(ms_yaml dryrun-new 'model: dry-model' | k -n "$ns" apply --dry-run=server -f - -o yaml 2>&1)" \
  || fail "apply --dry-run=server failed: $out"
for line in '  gpus: 0' '  port: 8080' '  replicas: 1' '      maxSurge: 25%' '      maxUnavailable: 0' '    type: RollingUpdate' \
            '    rollback: Manual' '    timeoutSeconds: 600'; do
  grep -qxF -- "$line" <<<"$out" || fail "dry-run output lacks '$line':\n$out"
done
log "ok: dry-run output shows the defaults"
out="$(k -n "$ns" get ms dryrun-new 2>&1 || true)"
assert_contains "$out" 'modelservices.modelops.dev "dryrun-new" not found' "get after dry-run"
# The non-yaml form of the same dry run says so.
out="$(ms_yaml dryrun-new 'model: dry-model' | k -n "$ns" apply --dry-run=server -f - 2>&1)"
assert_eq "$out" "modelservice.modelops.dev/dryrun-new created (server dry run)" "apply --dry-run=server message"
gone "$ns" ms dryrun-new || fail "dryrun-new exists after a dry run"
# The object as the API server stores it at its create, before the
# controller's first status write (no status at all): the tools' verdicts.
ms_yaml dryrun-new 'model: dry-model' | k -n "$ns" create --dry-run=server -f - -o json | health_verdict 00-created-no-status

# Defaults that depend on other fields: autoscaling.minReplicas; Recreate gets no rollingUpdate.
spec="$(ms_yaml dry-as 'model: m' 'autoscaling: {maxReplicas: 4, targetQueueLength: 5}' | k -n "$ns" create --dry-run=server -f - -o json | jq -cS .spec)"
assert_eq "$spec" '{"autoscaling":{"maxReplicas":4,"minReplicas":1,"mode":"Controller","targetQueueLength":5},"gpus":0,"model":"m","port":8080,"replicas":1,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"}}' "defaults with autoscaling"
spec="$(ms_yaml dry-rc 'model: m' 'strategy: {type: Recreate}' | k -n "$ns" create --dry-run=server -f - -o json | jq -cS .spec)"
assert_eq "$spec" '{"gpus":0,"model":"m","port":8080,"replicas":1,"rollout":{"rollback":"Manual","timeoutSeconds":600},"runtime":"Custom","strategy":{"type":"Recreate"}}' "defaults with Recreate"

# Re-applying an unchanged sample changes nothing.
out="$(k -n "$ns" apply -f "$E2E_ROOT/manifests/samples/minimal.yaml" 2>&1)"
assert_eq "$out" "modelservice.modelops.dev/minimal unchanged" "re-apply minimal"

# What a user sees once the pods are up.
if [[ "${E2E_CLUSTER_MODE:-full}" == full ]]; then
  wait_ms_ready "$ns" 60 minimal bert-qa gpu-no-image llama-chat
  wait_output 60 "gpt2-chat: 2 pods Ready" 2 jp ms/gpt2-chat '{.status.readyReplicas}' -n "$ns"
  out="$(k -n "$ns" get ms)"
  echo "$out" >&2
  rows="$(awk 'NR > 1 {print $1, $2, $3, $4}' <<<"$out" | sort | tr '\n' ';')"
  assert_eq "$rows" "bert-qa bert-base-uncased 2/2 Ready;gpt2-chat gpt2 2/2 Degraded;gpu-no-image resnet50 1/1 Ready;llama-chat llama-3-8b 1/1 Ready;minimal distilbert-base-uncased 1/1 Ready;" "kubectl get ms"
  # VERSION (the serving version) by its column's place in the header: blank
  # for the samples without spec.version.
  col="$(head -n 1 <<<"$out" | awk '{print index($0, "VERSION")}')"
  versions="$(awk -v c="$col" 'NR > 1 {v = substr($0, c); sub(/ .*/, "", v); print $1 "=" v}' <<<"$out" | sort | tr '\n' ' ')"
  assert_eq "$versions" "bert-qa=3 gpt2-chat=1 gpu-no-image= llama-chat=1 minimal= " "kubectl get ms VERSION column"
  assert_eq "$(k -n "$ns" get ms gpt2-chat -o json | jq -r '.status.conditions[] | select(.type == "Degraded") | .reason')" MetricsUnavailable "gpt2-chat Degraded reason"
  # Degraded for the autoscaler alone: what serves is the spec, healthy.
  health_stage 05-ready-metrics-unavailable "$ns" gpt2-chat
fi

# Clean up (the controller's finalizer removes the owned objects; not asserted here).
k -n "$ns" delete ms "${names[@]}" --wait=false >/dev/null
