#!/usr/bin/env bash
# capture.sh - makes test/health/fixtures/ again from the end-to-end suite:
# runs the cases that call health_stage or health_verdict (test/e2e/lib.sh;
# each at one stage of docs/user/status.md's table) with E2E_HEALTH_CAPTURE
# set to the fixtures folder, so that each fixture becomes the ModelService
# as the suite saw it at that stage, with the stage's name and the verdicts
# the fixture already had. The suite fails where a tool's verdict differs
# from the fixture's: a verdict changes only by editing the fixture's
# "expect" first, on purpose, then capturing.
#
# Usage: test/health/capture.sh [test/e2e/run.sh options, e.g. --no-build]
# Then: git diff test/health/fixtures/ and test/health/run.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cases="$(grep -lE 'health_(stage|verdict) ' "$root"/test/e2e/cases/*.sh | xargs -n 1 basename | sed 's/\.sh$//' | paste -sd '|')"
[[ -n "$cases" ]] || { echo "capture.sh: no case calls health_stage or health_verdict" >&2; exit 1; }
echo "capture.sh: cases $cases" >&2
E2E_HEALTH_CAPTURE="$here/fixtures" exec "$root/test/e2e/run.sh" "$@" --only "^($cases)\$"
