#!/usr/bin/env bash
# record.sh - records a run of the closed-loop autoscaling case
# (test/e2e/cases/92-autoscaling-loop.sh) for bench/results and the picture in
# docs/user/autoscaling.md: runs the end-to-end suite with that case only (the
# real-node cluster, the operator from its image), then copies each mode's
# timeline to bench/results/autoscaling-loop-{controller,hpa,gpu}.csv and writes
# bench/results/autoscaling-loop.md (the figures, the commit, the machine),
# whose rows it also puts in docs/user/autoscaling.md's table.
# Then `python3 tools/gen-docs-images.py` draws docs/images/autoscaling-loop.png.
#
# Usage: test/e2e/loop/record.sh [run.sh options, e.g. --no-build]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
test/e2e/run.sh --only '^92-autoscaling-loop$' "$@" 2>&1 | tee "$log"
work="$(sed -n 's/^run.sh: work dir //p' "$log" | head -n 1)"
[[ -d $work/real/loop ]] || { echo "record.sh: no $work/real/loop" >&2; exit 1; }
grep -q '1 passed, 0 failed' "$log" || { echo "record.sh: the case did not pass" >&2; exit 1; }
out=bench/results
for mode in Controller HPA GPU; do
  cp "$work/real/loop/$mode/timeline.csv" "$out/autoscaling-loop-${mode,,}.csv"
done
{
  echo "# Closed-loop autoscaling on the real node"
  echo
  echo "Recorded by \`test/e2e/loop/record.sh\` (e2e case 92-autoscaling-loop) on"
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' || echo ' (with uncommitted changes)'),"
  echo "$(date -u +%Y-%m-%d), $(nproc) cores. The example server answers one prediction"
  echo "at a time in 200 ms (5/s a pod); target queue length 1 a replica, 1 to 5"
  echo "replicas, 20 s scale-down window; vegeta sends 16/s, then 0.67/s (2 per 3 s), through"
  echo "the API server's service proxy. Per-second timelines:"
  echo "[controller](autoscaling-loop-controller.csv), [HPA](autoscaling-loop-hpa.csv),"
  echo "[GPU](autoscaling-loop-gpu.csv) (mode Controller on GPU utilization, target 50 %)"
  echo "(second, sent, ok, failed, queue, desired, ready)."
  echo
  echo "| mode | requests | failed | desired (from->to@second) | first scale-out (s) | all ready (s) | queue peak | 1 ready after the load fell (s) |"
  echo "|---|---|---|---|---|---|---|---|"
  for mode in Controller HPA GPU; do
    sum="$work/real/loop/$mode/summary.txt"
    field() { awk -v k="$1" '$1 == k { $1 = ""; print substr($0, 2) }' "$sum"; }
    echo "| $mode | $(field requests) | $(field failed) | $(field desired) | $(field scale-out) | $(field all-ready) | $(field queue-peak) | $(field scale-in-ready) |"
  done
} >"$out/autoscaling-loop.md"
cat "$out/autoscaling-loop.md"
# The same rows in docs/user/autoscaling.md ("The loop under real load").
python3 - "$out/autoscaling-loop.md" docs/user/autoscaling.md <<'PY'
import sys
rows = [l for l in open(sys.argv[1], encoding="utf-8") if l.startswith(("| Controller |", "| HPA |", "| GPU |"))]
doc = open(sys.argv[2], encoding="utf-8").read().split("\n")
head = doc.index("## The loop under real load")
sep = next(i for i in range(head, len(doc)) if doc[i].startswith("|---"))
end = next(i for i in range(sep + 1, len(doc)) if not doc[i].startswith("|"))
doc[sep + 1:end] = [r.rstrip("\n") for r in rows]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(doc))
PY
