#!/usr/bin/env bash
# The project's test command.
#   scripts/test.sh            build (warnings as errors) and run ctest: unit
#                              and loopback integration tests (fast)
#   scripts/test.sh --sanitize the same under AddressSanitizer + UBSan, then
#                              under ThreadSanitizer (build-asan, build-tsan)
#   scripts/test.sh --e2e      the end-to-end suite against a real
#                              cluster on loopback (test/e2e/run.sh; slow)
#   scripts/test.sh --fuzz     the libFuzzer targets and the h11 differential
#                              check, 60 s each (test/fuzz/run.sh)
#   scripts/test.sh --all      all four, as CI runs them: the end-to-end
#                              suite starts once the two programs are built
#                              and runs beside the plain, sanitizer and fuzz
#                              runs (it mostly waits on the cluster, they
#                              mostly compute); its output is prefixed
#                              `[e2e] ` and its summary printed again at the end
set -euo pipefail
cd "$(dirname "$0")/.."

plain=0 sanitize=0 e2e=0 fuzz=0
case "${1:-}" in
  "") plain=1 ;;
  --sanitize) sanitize=1 ;;
  --e2e) e2e=1 ;;
  --fuzz) fuzz=1 ;;
  --all) plain=1 sanitize=1 e2e=1 fuzz=1 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown option $1" >&2; exit 2 ;;
esac

stamp() { bash scripts/ci-stamp "$@"; }  # the step times .ci/run prints
stamp setup begin
bash scripts/setup.sh
stamp setup end
jobs=$(nproc)

run_ctest() {  # run_ctest BUILD_DIR [cmake args...]; $ctest_prefix runs ctest (e.g. setarch)
  local dir=$1; shift
  # One promtool for the project: Prometheus 3's, built from its Go module and
  # cached (test/e2e/build-prometheus.sh), which the end-to-end suite runs too;
  # the metrics tests and monitoring_rules use it.
  [[ -n ${PROMTOOL_BIN:-} ]] || eval "$(bash test/e2e/build-prometheus.sh)"
  bash scripts/configure-build.sh "$dir" "-DPROMTOOL=$PROMTOOL_BIN" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ${ctest_prefix:-} ctest --output-on-failure -j "$jobs" --timeout 300)
}

stamp checks begin
# The API definition's outputs (C++, CRD, reference docs) are current.
python3 tools/gen-api.py --check
# The documentation: every relative link and #anchor of README.md and docs/
# resolves; the diagram and plots in docs/images/ were made from their current
# sources (the SHA-256 sums recorded beside them).
python3 tools/check-links.py
python3 tools/gen-docs-images.py --check
# The Helm chart (Helm built from the Go module proxy and cached): lint in each
# certificate mode, with controller.prometheus set, as a subchart (global),
# with the CRD and security settings changed, and manifests/ and
# dist/install.yaml rendered from it.
eval "$(bash test/e2e/build-helm.sh)"
for values in "" "--set certificates.mode=cert-manager" \
    "--set global.imageRegistry=registry.example --set crds.install=false --set crds.keep=false --set helmLabels=false \
     --set serviceAccount.annotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::111122223333:role/ms \
     --set podSecurityContext.runAsUser=1000 --set securityContext.runAsUser=1000" \
    "--set certificates.mode=provided --set certificates.provided.caBundle=Q0E= --set monitoring.serviceMonitor.enabled=true --set argocd.healthCheck.enabled=true \
     --set monitoring.prometheusRule.enabled=true --set monitoring.dashboard.enabled=true" \
    "--set prometheusURL=https://prometheus:9090 --set controller.prometheus.basicAuth.username=ops \
     --set controller.prometheus.basicAuth.passwordFile=/etc/p/password --set controller.prometheus.caFile=/etc/p/ca.crt \
     --set controller.prometheus.certFile=/etc/p/tls.crt --set controller.prometheus.keyFile=/etc/p/tls.key \
     --set controller.prometheus.headers.X-Scope-OrgID=team-a --set controller.prometheus.headerFiles.X-Key=/etc/p/key \
     --set controller.prometheus.mounts[0].name=p --set controller.prometheus.mounts[0].secret=prometheus-auth \
     --set controller.prometheus.mounts[0].mountPath=/etc/p"; do
  # shellcheck disable=SC2086
  "$HELM" lint --strict --quiet charts/modelservice-operator $values
done
HELM="$HELM" python3 tools/gen-manifests.py --check
# Formatting is part of the build's hygiene: clang-format with .clang-format.
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror
# The size limits of the production code (shared/, webhook/, controller/; the
# generated *.gen.* files aside): a file at most 450 lines, a function at most
# 60, counted as clang-tidy's readability-function-size counts them.
python3 tools/check-size.py
stamp checks end

e2e_pid=""
if ((e2e && (sanitize || fuzz))); then
  # The suite starts as soon as the two programs are built and runs beside
  # every step below (the rest of build/ and its ctest, the sanitizer
  # builds, the fuzz run): it mostly waits on the cluster, they mostly
  # compute. It runs the programs of build/ only (run.sh --no-build), which
  # the steps below leave as they are: they build build/'s other targets,
  # build-asan/ and build-tsan/.
  echo "== end-to-end suite (in the background, beside the other steps) =="
  bash scripts/configure-build.sh build >/dev/null
  cmake --build build -j "$jobs" --target modelservice-webhook modelservice-controller
  e2e_log="$(mktemp "${TMPDIR:-/tmp}/modelservice-e2e.XXXXXX.log")"
  # Its own process group (setsid), so that a failing step here stops it and
  # everything it started (run.sh cleans up on SIGTERM).
  stamp e2e begin
  E2E_LOG="$e2e_log" BUILD_DIR=build setsid bash -o pipefail -c \
    'bash test/e2e/run.sh --no-build 2>&1 | tee "$E2E_LOG" | sed -u "s/^/[e2e] /"; rc=$?; bash scripts/ci-stamp e2e end; exit $rc' &
  e2e_pid=$!
  trap 'rc=$?; if [[ -n $e2e_pid ]]; then kill -TERM -- "-$e2e_pid" 2>/dev/null; wait "$e2e_pid" 2>/dev/null || true; fi; exit "$rc"' EXIT
fi
if ((plain)); then
  echo "== ctest (RelWithDebInfo) =="
  stamp plain begin
  run_ctest build
  stamp plain end
fi
if ((sanitize)); then
  # The sanitizer builds are made with clang (clang-14, which setup.sh
  # installs for the fuzz build too): at -O0 with ASan it compiles a test
  # file with about 62 % of g++ 12's CPU time, and its UBSan checks more
  # (float-cast-overflow among others). build/ stays with the system's c++
  # (GCC), so both compilers build the code clean with -Werror.
  sanitizer_cxx=-DCMAKE_CXX_COMPILER=clang++-14
  echo "== ctest under ASan + UBSan =="
  stamp asan begin
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan -DMS_SANITIZE=ON -DMS_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DMS_BUILD_BENCH=OFF "$sanitizer_cxx"
  stamp asan end
  echo "== ctest under ThreadSanitizer =="
  stamp tsan begin
  # TSan maps its shadow memory at fixed addresses; kernels with more mmap
  # randomisation bits than it expects make it fail at start-up ("unexpected
  # memory mapping"), so the tests run without address randomisation.
  # Suppressions (third-party code only) are in test/tsan.supp.
  ctest_prefix="setarch $(uname -m) -R" \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/test/tsan.supp" \
    run_ctest build-tsan -DMS_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DMS_BUILD_BENCH=OFF "$sanitizer_cxx"
  stamp tsan end
fi
if ((fuzz)); then
  # Fuzzing, each target for FUZZ_SECONDS: after --sanitize, with the fuzz
  # targets built beside the ASan + UBSan tests (build-asan/ has
  # MS_FUZZ=ON: one clang build instead of two); alone, in build-fuzz/.
  echo "== fuzzing =="
  stamp fuzz begin
  if ((sanitize)); then FUZZ_BUILD_DIR=build-asan bash test/fuzz/run.sh; else bash test/fuzz/run.sh; fi
  stamp fuzz end
fi
if [[ -n $e2e_pid ]]; then
  echo "== waiting for the end-to-end suite =="
  stamp e2e-wait begin
  e2e_rc=0; wait "$e2e_pid" || e2e_rc=$?
  stamp e2e-wait end
  e2e_pid=""
  # The suite's own exit status (the pipeline's is tee's and sed's).
  summary="$(tail -n 1 "$e2e_log")"
  rm -f "$e2e_log"
  echo "end-to-end suite: $summary"
  [[ $summary =~ ^[0-9]+\ passed,\ 0\ failed ]] && ((e2e_rc == 0)) || exit 1
elif ((e2e)); then
  echo "== end-to-end suite =="
  BUILD_DIR=build bash test/e2e/run.sh  # configures build/ with scripts/configure-build.sh too
fi
