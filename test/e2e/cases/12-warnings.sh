# Objects that are allowed with a warning: kubectl prints `Warning:` with the
# webhook's text (gpus > 0 without image; replicas outside the autoscaling
# range), on create and on a server-side dry run.
# timeout: 60
# logs: webhook
ns=e2e-warnings
new_ns "$ns"
f="$E2E_ROOT/manifests/samples/warning-gpu-no-image.yaml"
grep -q '^# expect-warning: spec.gpus' "$f" || fail "$f lost its expect-warning line"

out="$(k -n "$ns" apply --dry-run=server -f "$f" 2>&1)" || fail "dry-run apply failed: $out"
assert_contains "$out" "Warning: spec.gpus is 1 but spec.image is not set" "dry-run warning"
# (before the object exists.) The warning is on stderr, the result on stdout.
err="$(k -n "$ns" apply --dry-run=server -f "$f" 2>&1 >/dev/null)"
assert_contains "$err" "Warning: spec.gpus is 1 but spec.image is not set" "warning on stderr"
out="$(k -n "$ns" apply -f "$f" 2>&1)" || fail "apply failed: $out"
assert_contains "$out" "Warning: spec.gpus is 1 but spec.image is not set" "apply warning"
assert_contains "$out" "modelservice.modelops.dev/gpu-no-image created" "apply result"

out="$(ms_yaml out-of-range 'model: m' 'replicas: 1' 'autoscaling: {minReplicas: 2, maxReplicas: 4, targetQueueLength: 5}' \
       | k -n "$ns" create --dry-run=server -f - 2>&1)" || fail "create out-of-range failed: $out"
assert_contains "$out" "Warning: spec.replicas (1) is outside [minReplicas, maxReplicas] = [2, 4]" "replicas outside range warning"
assert_contains "$out" "modelservice.modelops.dev/out-of-range created (server dry run)" "out-of-range allowed"

# No warning for a clean object.
out="$(ms_yaml clean 'model: m' 'image: registry.local/serve:1' 'gpus: 1' | k -n "$ns" create --dry-run=server -f - 2>&1)"
assert_not_contains "$out" "Warning:" "clean object"
k -n "$ns" delete ms gpu-no-image --wait=false >/dev/null
