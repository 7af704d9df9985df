#!/usr/bin/env bash
# run.sh - checks the operator's alerts and dashboard without a cluster:
# extracts the rule file from manifests/monitoring/prometheusrule.yaml,
# `promtool check rules` it, runs every promtool unit test in
# test/monitoring/*_test.yaml (each alert firing and not firing), lints the
# rules (severity, summary, description, runbook page, tests of both kinds:
# rules.py lint) and the dashboard (dashboard.py lint; its queries parsed by
# promtool), the model pods' scrape job of monitoring.md (promtool check
# config, with its Kubernetes service discovery; the same relabelling as
# manifests/monitoring/podmonitor.yaml), and that autoscaling.md shows
# prometheus-adapter's rule exactly as docs/user/prometheus-adapter-rules.yaml
# (the file the end-to-end suite runs prometheus-adapter with) has it.
#
# Usage: test/monitoring/run.sh [PROMTOOL]
#   PROMTOOL  promtool to use (default: test/e2e/build-prometheus.sh's,
#             Prometheus 3 built from its Go module and cached; ctest passes
#             the one scripts/test.sh configured, the same)
# Registered in ctest as monitoring_rules (test/CMakeLists.txt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
promtool="${1:-}"
if [[ -z "$promtool" || "$promtool" == *NOTFOUND ]]; then
  eval "$("$root/test/e2e/build-prometheus.sh")"
  promtool="$PROMTOOL_BIN"
fi
[[ -x "$promtool" ]] || { echo "run.sh: promtool not found ($promtool; test/e2e/build-prometheus.sh builds it)" >&2; exit 1; }

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
# The scrape jobs of monitoring.md (the model pods', "The model servers'
# metrics", and the DCGM exporter's): a valid prometheus.yml for promtool,
# and the model pods' job relabels as the PodMonitor does (the metrics port
# and path, the modelservice label).
# Checked as written: the promtool of build-prometheus.sh has Kubernetes
# service discovery (Debian's had not).
python3 "$root/test/e2e/prometheus/models-job.py" "$root/docs/operator/monitoring.md" >"$tmp/models.yml"
python3 - "$tmp/models.yml" "$root/manifests/monitoring/podmonitor.yaml" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))["scrape_configs"][0]
pm = yaml.safe_load(open(sys.argv[2], encoding="utf-8"))["spec"]["podMetricsEndpoints"][0]
norm = lambda r: (tuple(r.get("sourceLabels", r.get("source_labels", []))), r.get("regex"),
                  r.get("replacement"), r.get("targetLabel", r.get("target_label")))
docs_rules = {norm(r) for r in job["relabel_configs"]}
missing = [r for r in pm["relabelings"] if norm(r) not in docs_rules]
if missing:
    sys.exit("monitoring.md's scrape job lacks the PodMonitor's relabelings %s" % missing)
PY
"$promtool" check config "$tmp/models.yml"
# prometheus-adapter's rule: the yaml block of autoscaling.md's "The queue
# length as an External metric" is the rule file less its leading comments.
python3 - "$root/docs/user/autoscaling.md" "$root/docs/user/prometheus-adapter-rules.yaml" <<'PY'
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
section = doc[doc.index("## The queue length as an External metric"):]
block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
rules = "".join(l for l in open(sys.argv[2], encoding="utf-8").readlines() if not l.startswith("#"))
if block != rules:
    sys.exit("autoscaling.md's prometheus-adapter rule differs from docs/user/prometheus-adapter-rules.yaml:\n" + block + "---\n" + rules)
print("autoscaling.md shows docs/user/prometheus-adapter-rules.yaml's rule as it is")
PY
