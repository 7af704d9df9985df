#!/usr/bin/env bash
# run.sh - checks the operator's alerts and dashboard without a cluster:
# extracts the rule file from manifests/monitoring/prometheusrule.yaml,
# `promtool check rules` it, runs every promtool unit test in
# test/monitoring/*_test.yaml (each alert firing and not firing), lints the
# rules (severity, summary, description, runbook page, tests of both kinds:
# rules.py lint) and the dashboard (dashboard.py lint; its queries parsed by
# promtool), and the model pods' scrape job of monitoring.md (promtool check
# config; the same relabelling as manifests/monitoring/podmonitor.yaml).
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
# The model pods' scrape job of monitoring.md ("The model servers' metrics"):
# a valid prometheus.yml for promtool, and the same relabelling as the
# PodMonitor (the metrics port and path, the modelservice label).
python3 - "$root/docs/operator/monitoring.md" "$root/manifests/monitoring/podmonitor.yaml" "$tmp/models.yml" <<'PY'
import re, sys, yaml
doc = open(sys.argv[1], encoding="utf-8").read()
section = doc[doc.index("## The model servers' metrics"):]
block = re.search(r"```yaml\n(scrape_configs:.*?)```", section, re.S).group(1)
job = yaml.safe_load(block)["scrape_configs"][0]
assert job["kubernetes_sd_configs"] == [{"role": "pod"}], job["kubernetes_sd_configs"]
# Debian's promtool is built without Kubernetes service discovery: the job
# is checked with a static target in its place (the relabelling is what
# can be wrong here).
checked = dict(job)
del checked["kubernetes_sd_configs"]
checked["static_configs"] = [{"targets": ["127.0.0.1:1"]}]
yaml.safe_dump({"scrape_configs": [checked]}, open(sys.argv[3], "w", encoding="utf-8"))
pm = yaml.safe_load(open(sys.argv[2], encoding="utf-8"))["spec"]["podMetricsEndpoints"][0]
norm = lambda r: (tuple(r.get("sourceLabels", r.get("source_labels", []))), r.get("regex"),
                  r.get("replacement"), r.get("targetLabel", r.get("target_label")))
docs_rules = {norm(r) for r in job["relabel_configs"]}
missing = [r for r in pm["relabelings"] if norm(r) not in docs_rules]
if missing:
    sys.exit("monitoring.md's scrape job lacks the PodMonitor's relabelings %s" % missing)
PY
"$promtool" check config "$tmp/models.yml"
