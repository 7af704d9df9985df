#!/usr/bin/env bash
# End-to-end benchmark of modelservice-webhook: /validate and /mutate over TLS
# with keep-alive, driven by wrk (bench/review.lua), plus the pure admission
# path with Google Benchmark (admission_bench). Writes a markdown report and
# prints it.
#
# Usage:
#   bench/run.sh [options]
# Options:
#   --quick             2 s runs, 1 s warm-up, short micro-benchmarks (smoke check);
#                       writes bench/results/webhook-quick.md unless --out is given
#   --duration SEC      seconds per measured run (default 10)
#   --warmup SEC        seconds of discarded warm-up before each run (default 2)
#   --connections LIST  comma-separated keep-alive connection counts (default 4,8,16)
#   --server-threads N  the webhook's --threads, its event loops (default 1: on 2 cores
#                       shared with wrk, the server gets one and wrk the other; the
#                       webhook's own default, 2, is measured with --server-threads 2
#                       into bench/results/webhook-2loops.md)
#   --build-dir DIR     CMake build directory (default build-bench in the repository)
#   --no-build          use the binaries already in --build-dir
#   --out FILE          report file (default bench/results/webhook.md)
#   --no-callgrind      skip counting instructions per review with valgrind
#                       (skipped anyway under --quick or without valgrind)
#
# Nothing is pinned: wrk and the webhook share the machine's cores, so on a
# 2-core machine the client's TLS and Lua work competes with the server's.
# Exit status: 0 when every request got the expected 200 answer, 1 when any
# run had errors (non-200, wrong decision, socket errors), 2 on set-up failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

duration=10 warmup=2 conns="4,8,16" server_threads=1 quick=0 build=1
build_dir="$repo/build-bench" out="" callgrind=1
micro_min_time=0.5
while (($#)); do
  case "$1" in
    --quick) quick=1; duration=2; warmup=1; micro_min_time=0.05; callgrind=0; shift ;;
    --no-callgrind) callgrind=0; shift ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --server-threads) server_threads=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z $out ]]; then
  if ((quick)); then out="$here/results/webhook-quick.md"; else out="$here/results/webhook.md"; fi
fi

die() { echo "run.sh: $*" >&2; exit 2; }
for tool in wrk curl openssl; do command -v "$tool" >/dev/null || die "$tool is required"; done

# ---- build -----------------------------------------------------------------
if ((build)); then
  echo "== building Release in $build_dir" >&2
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMS_BUILD_TESTS=OFF >/dev/null
  targets=(modelservice-webhook admission_profile)
  # admission_bench exists only when Google Benchmark was found.
  grep -q '^build bench/admission_bench:' "$build_dir/build.ninja" 2>/dev/null && targets+=(admission_bench)
  cmake --build "$build_dir" --target "${targets[@]}" >&2
fi
webhook_bin="$build_dir/webhook/modelservice-webhook"
bench_bin="$build_dir/bench/admission_bench"
profile_bin="$build_dir/bench/admission_profile"
[[ -x $webhook_bin ]] || die "no $webhook_bin (build first)"

# ---- certificates, ports, server ---------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ms-bench.XXXXXX")
server_pid=""
cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$repo/certs-scripts/gen-certs.sh" --out "$tmp/certs" --ip 127.0.0.1 >/dev/null

free_port() { python3 "$repo/test/e2e/free-port.py"; }  # below the ephemeral range
port=$(free_port) probe_port=$(free_port) metrics_port=$(free_port)

"$webhook_bin" --port "$port" --bind-address 127.0.0.1 --cert-dir "$tmp/certs" \
  --metrics-bind-address "127.0.0.1:$metrics_port" --health-probe-bind-address "127.0.0.1:$probe_port" \
  --log-format json --log-level warn --threads "$server_threads" >"$tmp/webhook.log" 2>&1 &
server_pid=$!

for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/webhook.log" >&2; die "the webhook exited"; }
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$probe_port/readyz" >/dev/null || die "the webhook never became ready"
base="https://127.0.0.1:$port"

# ---- scenarios ---------------------------------------------------------------
# name | method | path | fixture | substring every answer must contain | status
# The last one is a transport baseline: the same TLS + HTTP keep-alive path
# with no admission work (GET /validate answers 405 with a short body), to
# separate the cost of TLS/HTTP on this machine from the handlers'.
scenarios=(
  "validate (valid, allowed)|POST|/validate|validate-valid.json|\"allowed\":true|200"
  "validate (invalid, denied 422)|POST|/validate|validate-invalid.json|\"allowed\":false|200"
  "mutate (defaults patch)|POST|/mutate|mutate-defaults.json|\"patchType\":\"JSONPatch\"|200"
  "baseline: TLS+HTTP only (GET → 405)|GET|/validate|validate-valid.json|accepts POST only|405"
)

# Smoke check each scenario once with curl, so a wrong fixture fails loudly.
for s in "${scenarios[@]}"; do
  IFS='|' read -r name method path fixture expect status <<<"$s"
  data=()
  [[ $method == POST ]] && data=(-H 'Content-Type: application/json' --data-binary "@$here/fixtures/$fixture")
  reply=$(curl -sS --cacert "$tmp/certs/ca.crt" -X "$method" "${data[@]}" -w '\n%{http_code}' "$base$path")
  code=${reply##*$'\n'}
  [[ $code == "$status" && $reply == *"$expect"* ]] || die "$name: unexpected answer ($code): $reply"
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
clk_tck=$(getconf CLK_TCK)
nproc=$(nproc)

rows=() any_errors=0 goal_notes=()
ms() { awk -v u="$1" 'BEGIN{printf "%.3f", u/1000}'; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_wrk() {  # method path fixture expect status connections threads seconds -> $tmp/wrk.out, $tmp/wrk.time
  local method=$1 path=$2 fixture=$3 expect=$4 status=$5 c=$6 t=$7 secs=$8
  BENCH_BODY="$here/fixtures/$fixture" BENCH_EXPECT="$expect" BENCH_METHOD="$method" BENCH_STATUS="$status" \
    /usr/bin/env time -f 'CLIENT_CPU %U %S' -o "$tmp/wrk.time" \
    wrk -t "$t" -c "$c" -d "${secs}s" --timeout 2s -s "$here/review.lua" "$base$path" >"$tmp/wrk.out" 2>&1 \
    || { cat "$tmp/wrk.out" >&2; die "wrk failed"; }
}

IFS=',' read -ra conn_list <<<"$conns"
for s in "${scenarios[@]}"; do
  IFS='|' read -r name method path fixture expect status <<<"$s"
  for c in "${conn_list[@]}"; do
    # One wrk thread: on 2 shared cores a second client thread competes with the
    # server's event loops, and its scheduling delays land in the latencies.
    t=1
    ((warmup > 0)) && run_wrk "$method" "$path" "$fixture" "$expect" "$status" "$c" "$t" "$warmup"
    before=$(cpu_ticks)
    run_wrk "$method" "$path" "$fixture" "$expect" "$status" "$c" "$t" "$duration"
    after=$(cpu_ticks)
    line=$(grep '^RESULT ' "$tmp/wrk.out") || { cat "$tmp/wrk.out" >&2; die "no RESULT from wrk"; }
    declare -A r=()
    for kv in ${line#RESULT }; do r[${kv%%=*}]=${kv#*=}; done
    read -r _ cu cs <"$tmp/wrk.time" || { cu=0; cs=0; }
    secs=$(awk -v d="${r[duration_us]}" 'BEGIN{printf "%.3f", d/1e6}')
    server_cpu=$(awk -v t=$((after - before)) -v hz="$clk_tck" -v s="$secs" 'BEGIN{printf "%.0f%%", 100*t/hz/s}')
    client_cpu=$(awk -v u="$cu" -v k="$cs" -v s="$secs" 'BEGIN{printf "%.0f%%", 100*(u+k)/s}')
    # CPU time per request: robust to other load (a busy machine slows the
    # rate, much less the work per request). cap = what 2 cores could do if
    # they ran only this server and wrk: 2 s / (server + client CPU per request).
    srv_us=$(awk -v t=$((after - before)) -v hz="$clk_tck" -v n="${r[requests]}" 'BEGIN{printf "%.0f", 1e6*t/hz/n}')
    cli_us=$(awk -v u="$cu" -v k="$cs" -v n="${r[requests]}" 'BEGIN{printf "%.0f", 1e6*(u+k)/n}')
    cap=$(awk -v a="$srv_us" -v b="$cli_us" -v p="$nproc" 'BEGIN{printf "%.0f", (a + b > 0) ? p * 1e6 / (a + b) : 0}')
    errors=$((r[non200] + r[mismatch] + r[connect] + r[read] + r[write] + r[timeout]))
    err_cell=0
    if ((errors > 0)); then
      any_errors=1
      err_cell="**${errors}** (unexpected status ${r[non200]}, wrong answer ${r[mismatch]}, socket c/r/w/t ${r[connect]}/${r[read]}/${r[write]}/${r[timeout]})"
      grep '^FIRST_BAD' "$tmp/wrk.out" >&2 || true
    fi
    rps=$(awk -v x="${r[rps]}" 'BEGIN{printf "%.0f", x}')
    rows+=("| $name | $method \`$path\` | $c | $t | $rps | $(ms "${r[p50_us]}") | $(ms "${r[p99_us]}") | $(ms "${r[p999_us]}") | $(ms "${r[max_us]}") | $server_cpu | $client_cpu | $srv_us | $cli_us | $cap | $err_cell |")
    met=$(awk -v x="${r[rps]}" -v p="${r[p99_us]}" -v e="$errors" 'BEGIN{print (x >= 20000 && p < 1000 && e == 0) ? "met" : "missed"}')
    [[ $method == POST ]] && goal_notes+=("$name, $c connections: $met ($rps/s, p99 $(ms "${r[p99_us]}") ms)")
    echo "   $name c=$c t=$t: $rps req/s, p50 $(ms "${r[p50_us]}") ms, p99 $(ms "${r[p99_us]}") ms, p99.9 $(ms "${r[p999_us]}") ms, errors $errors" >&2
    unset r
  done
done

# ---- server memory, threads, request count ------------------------------------
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
status_field() { awk -v k="$1:" '$1 == k {print ($3 == "" ? $2 : $2 " " $3)}' "/proc/$server_pid/status"; }
vmhwm=$(status_field VmHWM) vmrss=$(status_field VmRSS) server_os_threads=$(status_field Threads)
served=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null |
  awk '/^controller_runtime_webhook_requests_total\{/ {n += $NF} END {printf "%.0f", n}')
server_log_lines=$(wc -l <"$tmp/webhook.log")

# ---- pure path ------------------------------------------------------------------
micro="(admission_bench not built: install libbenchmark-dev)"
if [[ -x $bench_bin ]]; then
  echo "== admission_bench (pure path, no network)" >&2
  micro=$("$bench_bin" --benchmark_format=console --benchmark_min_time="$micro_min_time" \
    --benchmark_color=false 2>&1 | sed -e 's/[[:space:]]*$//') || micro="admission_bench failed:
$micro"
fi

# ---- instructions per review (deterministic; immune to a noisy machine) ----------
instr_rows=()
if ((callgrind)) && command -v valgrind >/dev/null && [[ -x $profile_bin ]]; then
  echo "== callgrind: instructions per review (pure path)" >&2
  ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$profile_bin" "$1" "$2" 2>&1 |
    awk '/I +refs:/ {gsub(",", "", $NF); print $NF}'; }
  for sc in valid invalid mutate; do
    one=$(ir "$sc" 1) many=$(ir "$sc" 51)
    per=$(awk -v a="$one" -v b="$many" 'BEGIN{printf "%.0f", (b - a) / 50}')
    instr_rows+=("| $sc | $per |")
  done
fi

# ---- report ------------------------------------------------------------------------
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | grep -qv ' bench/' && echo " (with uncommitted changes outside bench/)" || true)
mkdir -p "$(dirname "$out")"
{
  echo "# modelservice-webhook benchmark"
  echo
  echo "Generated by \`bench/run.sh$( ((quick)) && echo ' --quick')\` — $(date -u '+%Y-%m-%d %H:%M UTC'), commit \`$commit\`$dirty."
  echo
  echo "- Machine: $nproc CPUs ($cpu_model), $(uname -sr). Client (wrk) and server share these"
  echo "  cores; nothing is pinned. Shared/noisy machine: expect run-to-run variation. Load average"
  echo "  (1/5/15 min) before the wrk runs: $load_before; after: $load_after (other work on the machine counts too)."
  echo "- Server: Release build, \`--threads $server_threads --log-level warn\`, TLS 1.3 (ECDSA P-256 from"
  echo "  certs-scripts/gen-certs.sh), metrics endpoint on. Client: wrk, HTTP/1.1 keep-alive, one request"
  echo "  in flight per connection, one wrk thread (a second would compete with the server's loops for the two"
  echo "  cores), ${duration} s per run after a ${warmup} s warm-up, bench/review.lua"
  echo "  (POST application/json; every answer checked: status 200 and the expected decision)."
  echo "- Latency is wrk's per-request time (client-observed, includes client queueing on shared cores)."
  echo "- Server CPU = the webhook's user+sys time over the run (100% = one core); client CPU likewise for wrk."
  echo "  µs/req = that CPU time divided by the requests served (1/CLK_TCK resolution). Capacity = $nproc cores /"
  echo "  (server + client µs/req): the rate these $nproc cores could sustain running nothing but wrk and the"
  echo "  webhook — an estimate for when the measured rate is held down by other load on the machine."
  echo
  echo "| scenario | request | connections | wrk threads | requests/s | p50 ms | p99 ms | p99.9 ms | max ms | server CPU | client CPU | server µs/req | client µs/req | $nproc-core capacity/s | errors |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "- Server peak RSS (VmHWM): **$vmhwm**; RSS at the end: $vmrss; OS threads: $server_os_threads."
  echo "- Requests counted by the server's metrics (incl. warm-ups and smoke checks): $served; server log lines at warn: $server_log_lines."
  echo "- Goal (≥ 20,000 reviews/s with p99 < 1 ms on 2 cores):"
  printf '  - %s\n' "${goal_notes[@]}"
  if ((any_errors)); then echo; echo "**WARNING: some runs had errors (see the errors column).**"; fi
  echo
  if ((${#instr_rows[@]})); then
    echo "## Instructions per review (callgrind, bench/admission_profile, no network)"
    echo
    echo "Counted, not timed, so unaffected by other load: (Ir of 51 reviews − Ir of 1) / 50."
    echo
    echo "| review | instructions |"
    echo "|---|---:|"
    printf '%s\n' "${instr_rows[@]}"
    echo
  fi
  echo "## Pure admission path (bench/admission_bench.cc, Google Benchmark, no network)"
  echo
  echo "CPU time is the column to read on a loaded machine (wall time includes waiting for a core)."
  echo
  echo '```'
  echo "$micro"
  echo '```'
} >"$out"

cat "$out"
exit $((any_errors ? 1 : 0))
