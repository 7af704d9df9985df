#!/usr/bin/env bash
# run.sh - the chaos soak (issue 25 §1) in one command: the e2e suite's
# set-up (test/e2e/run.sh: the local cluster with an audit log, the webhook,
# Prometheus, the controller) and only its case 85-soak, which runs
# test/soak/soak.py for the given minutes with the given seed.
#
# Usage: test/soak/run.sh [--minutes D] [--seed S] [--report FILE] [RUN.SH ARGS...]
#   --minutes D     minutes of chaos (default 3); then up to 60 s of
#                   convergence and a 30 s quiet period
#   --seed S        the seed of every random choice (default 25): the same
#                   seed replays the same operations and faults
#   --report FILE   copy the Markdown report there (it stays in
#                   E2E_WORK/soak/report.md as well)
#   RUN.SH ARGS     passed to test/e2e/run.sh, e.g. --no-build, --keep, --verbose
#
# docs/contributor/soak.md says how to read the report and replay a seed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
minutes=3 seed=25 report="" rest=()
while (( $# )); do
  case "$1" in
    --minutes) minutes="${2:?--minutes needs a value}"; shift 2 ;;
    --seed) seed="${2:?--seed needs a value}"; shift 2 ;;
    --report) report="${2:?--report needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) rest+=("$1"); shift ;;
  esac
done
[[ "$minutes" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: --minutes must be a number" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "run.sh: --seed must be an integer" >&2; exit 2; }
if [[ -n "$report" ]]; then
  [[ "$report" = /* ]] || report="$PWD/$report"
  export SOAK_REPORT="$report"
fi
export SOAK_MINUTES="$minutes" SOAK_SEED="$seed"
# The case's time limit: the chaos, then at most 2 min to get every
# component back, 1 min to converge, the quiet period and the checks.
export E2E_CASE_TIMEOUT="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 420 }')"
# E2E_REAL_NODE_CASES=0: the soak needs no real node.
E2E_REAL_NODE_CASES=0 exec "$here/../e2e/run.sh" --only '^85-soak$' ${rest[@]+"${rest[@]}"}
