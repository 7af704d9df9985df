#!/usr/bin/env bash
# run.sh - checks the operator's alerts and dashboard without a cluster:
# extracts the rule file from manifests/monitoring/prometheusrule.yaml,
# `promtool check rules` it, runs every promtool unit test in
# test/monitoring/*_test.yaml (each alert firing and not firing), lints the
# rules (severity, summary, description, runbook page, tests of both kinds:
# rules.py lint) and the dashboard (dashboard.py lint; its queries parsed by
# promtool).
#
# Usage: test/monitoring/run.sh [PROMTOOL]
#   PROMTOOL  promtool to use (default: the one on PATH; Debian package
#             `prometheus`, installed by scripts/setup.sh)
# Registered in ctest as monitoring_rules (test/CMakeLists.txt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
promtool="${1:-$(command -v promtool || true)}"
[[ -x "$promtool" ]] || { echo "run.sh: promtool not found (Debian package prometheus)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

python3 "$here/rules.py" extract "$root/manifests/monitoring/prometheusrule.yaml" >"$tmp/modelservice-rules.yaml"
"$promtool" check rules "$tmp/modelservice-rules.yaml"
tests=("$here"/*_test.yaml)
cp "${tests[@]}" "$tmp/"
(cd "$tmp" && "$promtool" test rules "${tests[@]##*/}")
python3 "$here/rules.py" lint "$root/manifests/monitoring/prometheusrule.yaml" --repo "$root" --tests "${tests[@]}"
# The dashboard: its form, the ConfigMap generator, the docs of each row, and
# every query parsed by promtool (as recording rules, variables replaced).
python3 "$here/dashboard.py" lint "$root/manifests/monitoring/dashboard/modelservice.json" \
  --kustomization "$root/manifests/monitoring/kustomization.yaml" --docs "$root/docs/operator/monitoring.md" \
  --rules-out "$tmp/dashboard-queries.yaml"
"$promtool" check rules "$tmp/dashboard-queries.yaml"
