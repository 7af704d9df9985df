#!/usr/bin/env bash
# secret-volume.sh - stands in for the kubelet's Secret volume while the e2e
# webhook runs as a host process (not in a Pod): keeps DIR holding the keys
# of Secret NAMESPACE/NAME as a kubelet does, atomically, so the webhook's
# --cert-dir sees exactly what it will see in a Pod (and a real kubelet can
# later take this script's place without the webhook noticing):
#   DIR/..2025_01_31_12_00_00.123456789/KEY   one directory per version
#   DIR/..data -> ..2025_...                  switched with one rename(2)
#   DIR/KEY -> ..data/KEY                     stable names
# Only the listed keys are written (a Pod mounts `items: [tls.crt, tls.key]`,
# never the CA's key).
#
# Usage: test/e2e/certs/secret-volume.sh NAMESPACE NAME DIR [--delay SECONDS] [--keys K1,K2]
#   --delay S  apply each change S seconds after the API server announced it
#              (a kubelet takes up to about a minute: its sync period plus
#              its cache), default 0
#   --keys     the data keys to project, default tls.crt,tls.key
#
# Runs until killed: watches the Secret (kubectl get --watch, $KUBECTL or
# kubectl, with $KUBECONFIG) and starts the watch again when it ends; while
# the Secret does not exist, the directory keeps its last content (as a
# kubelet keeps a volume whose Secret was deleted). Logs one line per change.
set -euo pipefail

[[ $# -ge 3 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
ns="$1" name="$2" dir="$3"; shift 3
delay=0 keys="tls.crt,tls.key"
while (( $# )); do
  case "$1" in
    --delay) delay="$2"; shift 2 ;;
    --keys) keys="$2"; shift 2 ;;
    *) echo "secret-volume.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
kubectl="${KUBECTL:-kubectl}"
IFS=, read -r -a key_list <<<"$keys"
mkdir -p "$dir"

log() { echo "[$(date -u +%H:%M:%S.%3N)] secret-volume: $*"; }

# write_version B64...: one base64 value per key, in key_list order.
write_version() {
  local values=("$@") version i current=""
  [[ -L "$dir/..data" ]] && current="$(readlink "$dir/..data")"
  version="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)"
  mkdir "$dir/$version"
  for i in "${!key_list[@]}"; do
    base64 -d <<<"${values[$i]:-}" >"$dir/$version/${key_list[$i]}"
  done
  if [[ -n "$current" ]] && diff -rq "$dir/$current" "$dir/$version" >/dev/null 2>&1; then
    rm -rf "${dir:?}/$version"
    return 0
  fi
  chmod 0440 "$dir/$version"/*
  ln -sfn "$version" "$dir/..data_tmp"
  mv -T "$dir/..data_tmp" "$dir/..data"
  for i in "${key_list[@]}"; do
    [[ -L "$dir/$i" ]] || ln -sfn "..data/$i" "$dir/$i"
  done
  [[ -n "$current" ]] && rm -rf "${dir:?}/$current"
  log "wrote $version ($(openssl x509 -noout -serial -in "$dir/tls.crt" 2>/dev/null || echo '?'))"
}

# The jsonpath of one line per event: every key's value, space-separated.
template=""
for k in "${key_list[@]}"; do template+="{.data.${k//./\\.}} "; done
template+='{"\n"}'

while true; do
  if ! "$kubectl" -n "$ns" get secret "$name" >/dev/null 2>&1; then
    sleep 0.2
    continue
  fi
  # Each line is stamped when it arrives, then applied `delay` later, in order.
  "$kubectl" -n "$ns" get secret "$name" --watch -o "jsonpath=$template" 2>/dev/null \
    | while IFS= read -r line; do echo "$(date +%s.%N) $line"; done \
    | while read -r at values; do
        [[ -n "$values" ]] || continue
        wait_s="$(awk -v a="$at" -v d="$delay" -v n="$(date +%s.%N)" 'BEGIN { w = a + d - n; print (w > 0 ? w : 0) }')"
        sleep "$wait_s"
        # shellcheck disable=SC2086
        write_version $values
      done || true
  sleep 0.2
done
