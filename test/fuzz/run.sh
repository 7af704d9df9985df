#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan, build dir build-fuzz)
# and runs each for a bounded time from its committed seed corpus, then the
# h11 differential check of HTTP framing. Exits non-zero on any finding.
#   test/fuzz/run.sh                 every target for FUZZ_SECONDS (60) each: what CI runs
#   test/fuzz/run.sh TARGET...       only these (connection http1 review review_parser kubeconfig watch_decoder
#                                    yaml_reader prometheus_response h11)
# Environment: FUZZ_SECONDS (per target), FUZZ_RUNS (an execution count instead
# of a time, for the long local runs), FUZZ_BUILD_DIR (build-fuzz; a folder
# configured with MS_FUZZ=ON already, as scripts/test.sh's build-asan/, is
# used as it is), FUZZ_WORK
# (where new inputs and crash files go; default build-fuzz/work), FUZZ_TIMEOUT
# (seconds one input may run before it is a finding: 10; libFuzzer counts
# wall time, so a long run at idle priority beside other work needs more),
# FUZZ_MAX_LEN (the largest input libFuzzer makes: 8192; a long run of a slow
# target may take less, and says so in its results).
# Prints, per target, executions, coverage (cov = edges) and features (ft).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
work=${FUZZ_WORK:-$build/work}
targets=("$@")
((${#targets[@]})) || targets=(connection http1 review review_parser kubeconfig watch_decoder yaml_reader prometheus_response h11)

# A folder already configured with the fuzz targets (scripts/test.sh's
# build-asan/, where they are built beside the sanitized tests) is used as it
# is; otherwise it is configured here for the fuzz targets alone, at -O2.
if ! grep -qx 'MS_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  # The compiler cache every build folder shares (scripts/ccache-env).
  launcher=""
  [[ ${MS_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null && launcher="$PWD/scripts/ccache-env"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DMS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
fi
fuzzers=()
for t in "${targets[@]}"; do [[ $t == h11 ]] || fuzzers+=("${t}_fuzz"); done
if ((${#fuzzers[@]})); then cmake --build "$build" -j "$(nproc)" --target "${fuzzers[@]}"; fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${targets[@]}"; do
  if [[ $t == h11 ]]; then
    bash scripts/configure-build.sh build >/dev/null  # build/ as everywhere else
    cmake --build build -j "$(nproc)" --target http1_frames
    /usr/bin/python3 test/fuzz/h11_diff.py --driver build/test/fuzz/http1_frames --cases 0 --seconds "$seconds" \
      --corpus test/fuzz/corpus/http1 --out "$work/h11-failure.bin" || status=1
    continue
  fi
  mkdir -p "$work/$t"
  limit=(-max_total_time="$seconds")
  [[ -n ${FUZZ_RUNS:-} ]] && limit=(-runs="$FUZZ_RUNS")
  log="$work/$t.log"
  started=$SECONDS
  # New inputs go to $work/$t; the committed corpus is read, not written.
  if "$build/test/fuzz/${t}_fuzz" "${limit[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len="${FUZZ_MAX_LEN:-8192}" \
      -print_final_stats=1 -artifact_prefix="$work/$t-" "$work/$t" "test/fuzz/corpus/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz $t: ok, $execs executions in $((SECONDS - started))s${FUZZ_RUNS:+ (-runs=$FUZZ_RUNS)}${FUZZ_MAX_LEN:+ (-max_len=$FUZZ_MAX_LEN)}, $cov, $ft"
  else
    echo "fuzz $t: FINDING (log $log, inputs $work/$t-*):"
    grep -E 'ERROR|invariant broken|SUMMARY|Test unit written' "$log" | head -20 || true
    status=1
  fi
done
exit $status
