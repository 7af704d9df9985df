#!/usr/bin/env bash
# set-ca-bundle.sh - fill in the caBundle of both ModelService webhook
# configurations (modelservice-mutating, modelservice-validating) with a PEM CA.
# Works for the in-cluster install (manifests/) and this local overlay alike,
# since both use the same object names. The manifests carry no caBundle field,
# so a later `kubectl apply` of them keeps what this sets (an apply of older
# manifests that had `caBundle: ""` removes it once: run this again then).
#
# Usage: set-ca-bundle.sh CA_PEM_FILE    (kubectl uses $KUBECONFIG as usual;
#                                          KUBECTL overrides the kubectl binary)
set -euo pipefail
[[ $# -eq 1 && -r $1 ]] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
kubectl=${KUBECTL:-kubectl}
ca=$(base64 -w0 <"$1")
for kind in mutatingwebhookconfiguration/modelservice-mutating \
            validatingwebhookconfiguration/modelservice-validating; do
  "$kubectl" patch "$kind" --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca\"}]"
done
