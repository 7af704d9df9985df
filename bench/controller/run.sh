#!/usr/bin/env bash
# Controller benchmark: this controller against the controller-runtime peer
# (the same contract written with controller-runtime v0.22, kept outside this
# repository: PEERS_DIR), side by side in one run, on the local control plane
# (test/e2e/cluster.sh: kube-apiserver v1.34 + etcd, audit log on).
#
# For each N, each limit setting and each controller, on a fresh cluster:
# start the controller (concurrency 2, no leader election), create N
# ModelServices with one `kubectl apply`, wait until all have converged
# (a Deployment and a Service each, status written for the current
# generation), then until the controller has written nothing for 5 s, and
# record
#   - time to full convergence: from the start of `kubectl apply` to the
#     controller's last write to a ModelService, Deployment or Service
#     (from the API server's audit log; Events are written on their own and
#     not waited for),
#   - writes by verb and resource (audit log, by user agent),
#   - the controller's peak RSS (VmHWM) and CPU seconds (utime + stime,
#     sampled every 0.5 s) from the apply to 5 s after its last write (Events
#     included: what users pay), and, beside it, to 5 s after the
#     convergence check passed (the window of runs before 2026-12-06),
# and write bench/results/controller.md with the ratios the goals name:
# convergence time (ours / theirs), memory per cached ModelService (the
# slope of peak RSS between the smallest and the largest N, ours / theirs)
# and CPU seconds (ours / theirs), the time and CPU per object at the
# smallest and the largest N (does either grow faster than N?), and a plot
# of converged ModelServices over time, both controllers, at the largest N
# (an SVG next to the report, linked from it).
#
# With --cold-start, each controller is then stopped (SIGTERM) and started
# again against the N ModelServices it converged, and watch.py records: when
# its caches synced (its log) and its peak RSS then (the initial LISTs), when
# every ModelService had been reconciled (its /metrics: reconcile total >= N,
# queue empty, no worker busy), its peak RSS and CPU seconds 10 s later, and
# its writes meanwhile (audit log; the goal is none).
#
# With --leader-change, each controller then runs as two replicas with leader
# election over the N ModelServices: the first leads and reconciles them, the
# second is a standby (ours: caches synced, /readyz; controller-runtime: 20 s
# after its start), and the leader is stopped: once by SIGTERM (a rollout: it
# releases the Lease), once more, with a new pair, by SIGKILL (a crash: the
# Lease expires); watch.py failover records when the standby leads, when it
# has reconciled every ModelService (its /metrics, as for the cold start), its
# CPU and peak RSS, and the writes from the signal on (audit log; the goal is
# none).
#
# Usage: bench/controller/run.sh [options]
#   --n "300 1000"        object counts (the slope uses the smallest and largest)
#   --equal "20:30"       the equal client-side limits (QPS:BURST per API
#                         group-version), one or more, e.g. "20:30 200:300"
#   --no-defaults         skip the runs at each controller's own defaults
#   --only ours|cr        run one controller only
#   --build-dir DIR       CMake build directory (default build-bench; Release)
#   --no-build            use the binaries already there
#   --peers-out DIR       where PEERS_DIR/build.sh puts the peer (default /tmp/peers)
#   --out FILE            report (default bench/results/controller.md)
#   --cold-start          also measure a cold start after each burst (above)
#   --leader-change       also measure a leader change after each burst (above)
#   --apiserver-args ARGS kube-apiserver flags added to cluster.sh's (e.g. the
#                         in-flight limits of a large cluster), said in the report
#   --repeat K            K bursts of each controller at each N, on fresh
#                         clusters (default 1); the ratios use the median of
#                         each figure (a burst at 1,000 lasts seconds: its CPU
#                         varies by 20 % from one run to the next); the cold
#                         start and the leader change follow the last
#   --append              add this run's section to the end of --out (the
#                         earlier runs' sections stay) and its rows to the
#                         .jsonl next to it, instead of replacing both
#   --keep                keep the work directory (logs, audit logs)
# The peer is built with `bash $PEERS_DIR/build.sh` when PEERS_OUT has no
# binary; PEERS_DIR (the directory of the peer implementations, with cr/ and
# build.sh) must then be set.
# Exit status: 0 when every run converged, 1 otherwise, 2 on set-up failure.
set -euo pipefail
# The controllers' own work is measured: the API server and etcd only, as the
# issue's figures were taken (the whole cluster would add 2 x N simulated pods
# of scheduler and KWOK work to the same 2 cores). E2E_CLUSTER_MODE=full
# overrides.
export E2E_CLUSTER_MODE="${E2E_CLUSTER_MODE:-light}"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

repeat=1 ns_list="300 1000" equal="20:30" defaults=1 only="" build=1 keep=0 cold=0 leader=0 append=0 apiserver_args=""
command="bench/controller/run.sh"
for a in "$@"; do if [[ -z $a || $a =~ [[:space:]] ]]; then command+=" \"$a\""; else command+=" $a"; fi; done
build_dir="$repo/build-bench" peers_out="${PEERS_OUT:-/tmp/peers}" out="$repo/bench/results/controller.md"
peers_dir="${PEERS_DIR:-}"
while (($#)); do
  case "$1" in
    --n) ns_list=$2; shift 2 ;;
    --equal) equal=$2; shift 2 ;;
    --no-defaults) defaults=0; shift ;;
    --only) only=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --peers-out) peers_out=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --cold-start) cold=1; shift ;;
    --leader-change) leader=1; shift ;;
    --apiserver-args) apiserver_args=$2; shift 2 ;;
    --append) append=1; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { say "ERROR: $*"; exit 2; }

# ---- binaries ------------------------------------------------------------------
if ((build)); then
  say "building modelservice-controller (Release) in $build_dir"
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMS_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build_dir" --target modelservice-controller >&2
fi
ours_bin="$build_dir/controller/modelservice-controller"
[[ -x $ours_bin ]] || die "no $ours_bin"
cr_bin="$peers_out/bin/cr-modelservice"
if [[ $only != ours && ! -x $cr_bin ]]; then
  [[ -n $peers_dir && -f $peers_dir/build.sh ]] \
    || die "no peer binary in $peers_out: set PEERS_DIR to the peer implementations (with build.sh), or --only ours"
  say "building the controller-runtime peer into $peers_out"
  PEERS_OUT="$peers_out" bash "$peers_dir/build.sh" >&2 || die "building the peer failed"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ms-ctrl-bench.XXXXXX")
cluster_dir="$work/cluster"
ctrl_pid=""
replica_pids=()
cleanup() {
  if [[ -n $ctrl_pid ]] && kill -0 "$ctrl_pid" 2>/dev/null; then kill -KILL "$ctrl_pid" 2>/dev/null || true; fi
  local p
  for p in "${replica_pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  "$repo/test/e2e/cluster.sh" --dir "$cluster_dir" down >/dev/null 2>&1 || true
  if ((keep)); then say "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { python3 "$here/../../test/e2e/free-port.py"; }  # below the ephemeral range

manifest() {  # manifest N FILE: N ModelServices, as a user would write them (the controllers default the rest)
  local n=$1 f=$2 i
  for ((i = 0; i < n; i++)); do
    printf -- '---\napiVersion: modelops.dev/v1\nkind: ModelService\nmetadata:\n  name: m-%04d\n  namespace: bench\n' "$i"
    printf 'spec:\n  model: model-%d\n  image: registry.local/serve:1.4\n  replicas: 2\n' "$i"
  done >"$f"
}

converged() {  # converged N: N Deployments and Services, every ModelService with its status for its generation
  python3 "$here/watch.py" converged --n "$1" 2>/dev/null
}

# The controller under test for a burst: start_controller LOG starts
# "${cargs[@]}" (set by run_one) and sets ctrl_pid; stop_controller sends
# SIGTERM, then SIGKILL after 10 s.
start_controller() {
  "${cargs[@]}" >"$1" 2>&1 &
  ctrl_pid=$!
}
stop_controller() {
  local i
  kill -TERM "$ctrl_pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$ctrl_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$ctrl_pid" 2>/dev/null || true
  wait "$ctrl_pid" 2>/dev/null || true
  ctrl_pid=""
}

# cold_start WHO N LABEL: the controller (stopped) started again against the N
# ModelServices it converged; one line appended to $work/results.jsonl.
cold_start() {
  local who=$1 n=$2 label=$3 log="$work/$1-$2-$3-cold.log" synced ok=1
  # The line each writes once its informers have synced and its workers start.
  if [[ $who == ours ]]; then synced='caches synced; starting'; else synced='Starting workers'; fi
  say "== $who, N=$n, $label: cold start"
  sleep 2
  # watch.py starts the controller, so that it samples it from its first moment, and stops it.
  python3 "$here/watch.py" coldstart --log "$log" --metrics "http://127.0.0.1:$mport/metrics" --n "$n" \
    --synced "$synced" --timeout $((300 + n / 10)) -- "${cargs[@]}" >"$work/$who-$n-$label-cold.json" || ok=0
  python3 "$here/analyze.py" record-cold --audit "$E2E_AUDIT_LOG" --ua "$ua_prefix" --who "$who" \
    --n "$n" --label "$label" --watch "$work/$who-$n-$label-cold.json" >>"$work/results.jsonl"
  tail -n 1 "$work/results.jsonl" | python3 "$here/analyze.py" line >&2
  return $((1 - ok))
}

# controller_args WHO MPORT PPORT QPS BURST: sets cargs (the controller's command line) and ua_prefix.
controller_args() {
  local who=$1 mport=$2 pport=$3 qps=$4 burst=$5
  if [[ $who == ours ]]; then
    cargs=("$ours_bin" --kubeconfig "$KUBECONFIG" --concurrency 2 --log-format text --cert-mode provided
      --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$pport")
    [[ -n $qps ]] && cargs+=(--kube-api-qps "$qps" --kube-api-burst "$burst")
    ua_prefix=modelservice-controller
  else
    cargs=("$cr_bin" --mode controller --kubeconfig "$KUBECONFIG" --concurrency 2
      --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$pport")
    # The peer's own flag defaults to 20/30; controller-runtime's default is no limit (-1).
    cargs+=(--qps "${qps:--1}" --burst "${burst:-30}")
    ua_prefix=cr-modelservice
  fi
  return 0
}

# leader_change WHO N LABEL QPS BURST SIGNAL: two replicas with leader election
# over the N converged ModelServices, the leader stopped by SIGNAL (TERM or
# KILL); one line appended to $work/results.jsonl.
leader_change() {
  local who=$1 n=$2 label=$3 qps=$4 burst=$5 sig=$6 ok=1 i
  local ma pa mb pb a_pid b_pid base="$work/$1-$2-$3-leader-$6"
  say "== $who, N=$n, $label: leader change (SIG$sig)"
  ma=$(free_port) pa=$(free_port) mb=$(free_port) pb=$(free_port)
  controller_args "$who" "$ma" "$pa" "$qps" "$burst"
  "${cargs[@]}" --leader-elect --leader-election-namespace bench >"$base-a.log" 2>&1 &
  a_pid=$!
  replica_pids+=("$a_pid")
  for ((i = 0; i < 300 + n / 20; i++)); do
    python3 "$here/watch.py" reconciled --metrics "http://127.0.0.1:$ma/metrics" --n "$n" 2>/dev/null && break
    kill -0 "$a_pid" 2>/dev/null || { say "$who replica a exited (see $base-a.log)"; return 1; }
    sleep 1
  done
  controller_args "$who" "$mb" "$pb" "$qps" "$burst"
  "${cargs[@]}" --leader-elect --leader-election-namespace bench >"$base-b.log" 2>&1 &
  b_pid=$!
  replica_pids+=("$b_pid")
  # The standby: ours says when its caches have synced (/readyz); controller-runtime's
  # starts its informers only when it leads. Either is given 20 s more.
  for ((i = 0; i < 600; i++)); do
    curl -fsS -o /dev/null "http://127.0.0.1:$pb/readyz" 2>/dev/null && break
    sleep 0.5
  done
  sleep 20
  python3 "$here/watch.py" failover --kill "$a_pid" --signal "$sig" --pid "$b_pid" --metrics "http://127.0.0.1:$mb/metrics" \
    --n "$n" --timeout $((300 + n / 10)) >"$base.json" || ok=0
  kill -TERM "$b_pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$b_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$a_pid" "$b_pid" 2>/dev/null || true
  wait "$a_pid" "$b_pid" 2>/dev/null || true
  replica_pids=()
  python3 "$here/analyze.py" record-leader --audit "$E2E_AUDIT_LOG" --ua "$ua_prefix" --who "$who" \
    --n "$n" --label "$label" --watch "$base.json" >>"$work/results.jsonl"
  tail -n 1 "$work/results.jsonl" | python3 "$here/analyze.py" line >&2
  return $((1 - ok))
}

# run CONTROLLER N QPS BURST LABEL REP: one measurement, appended to
# $work/results.jsonl; the cold start and leader change after the last REP.
run_one() {
  local who=$1 n=$2 qps=$3 burst=$4 label=$5 rep=${6:-1}
  say "== $who, N=$n, $label$( ((repeat > 1)) && echo ", run $rep of $repeat")"
  # A /16 of ClusterIPs: the default /24 runs out at 254 Services.
  E2E_AUDIT=1 E2E_APISERVER_ARGS="--service-cluster-ip-range=10.0.0.0/16 $apiserver_args ${E2E_APISERVER_ARGS:-}" \
    "$repo/test/e2e/cluster.sh" --dir "$cluster_dir" up >"$work/cluster-up.log" 2>&1 ||
    die "cluster.sh up failed (see $work/cluster-up.log)"
  # shellcheck disable=SC1091
  source "$cluster_dir/env"
  "$KUBECTL" apply -f "$repo/manifests/crd/modelservices.modelops.dev.yaml" >/dev/null
  "$KUBECTL" wait --for condition=Established --timeout=60s crd/modelservices.modelops.dev >/dev/null
  "$KUBECTL" create namespace bench >/dev/null
  local pport log="$work/$who-$n-$label-$rep.log"
  mport=$(free_port) pport=$(free_port)
  controller_args "$who" "$mport" "$pport" "$qps" "$burst"
  start_controller "$log"
  local i
  for ((i = 0; i < 300; i++)); do
    curl -fsS -o /dev/null "http://127.0.0.1:$pport/readyz" 2>/dev/null && break
    kill -0 "$ctrl_pid" 2>/dev/null || die "$who exited at start (see $log)"
    sleep 0.1
  done
  sleep 2  # caches synced, workers idle
  local cpu0 samples="$work/$who-$n-$label-$rep.cpu"
  python3 "$here/watch.py" cpu --pid "$ctrl_pid" --out "$samples" &  # ends with the controller
  cpu0=$(awk '{ print $14 + $15 }' "/proc/$ctrl_pid/stat")
  manifest "$n" "$work/ms.yaml"
  local t0 ok=1
  t0=$(date +%s.%N)
  "$KUBECTL" apply -f "$work/ms.yaml" >/dev/null
  # Checking costs the API server a full list of ModelServices: less often for many.
  local deadline=$((SECONDS + 900 + n / 10)) every=3
  ((n > 2000)) && every=10
  until converged "$n"; do
    if ((SECONDS > deadline)); then say "$who N=$n $label: not converged after $((900 + n / 10)) s"; ok=0; break; fi
    kill -0 "$ctrl_pid" 2>/dev/null || { say "$who exited (see $log)"; ok=0; break; }
    sleep "$every"
  done
  local t_check
  t_check=$(date +%s.%N)
  # Until the controller has written nothing for 5 s (Events included): the CPU window's end.
  python3 "$here/watch.py" quiet --audit "$E2E_AUDIT_LOG" --ua "$ua_prefix" --seconds 5 --timeout 600 >/dev/null ||
    say "$who N=$n $label: still writing 600 s after convergence"
  local hwm rss cpu1 hz
  hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$ctrl_pid/status")
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$ctrl_pid/status")
  cpu1=$(awk '{ print $14 + $15 }' "/proc/$ctrl_pid/stat")
  hz=$(getconf CLK_TCK)
  # What it did (reconciles, queue adds, API requests), from its /metrics.
  local metrics="$work/$who-$n-$label-$rep.metrics"
  curl -fsS -o "$metrics" "http://127.0.0.1:$mport/metrics" 2>/dev/null || rm -f "$metrics"
  stop_controller
  local db
  db=$(curl -fsS "$E2E_ETCD_URL/metrics" 2>/dev/null |
    awk '/^etcd_mvcc_db_total_size_in_bytes / { printf "%.1f", $2 / 1048576 }')
  python3 "$here/analyze.py" record --audit "$E2E_AUDIT_LOG" --ua "$ua_prefix" --t0 "$t0" \
    --who "$who" --n "$n" --label "$label" --qps "${qps:-}" --burst "${burst:-}" --ok "$ok" \
    --hwm-kib "$hwm" --rss-kib "$rss" --cpu-s "$(awk -v a="$cpu0" -v b="$cpu1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')" \
    --cpu-total-s "$(awk -v b="$cpu1" -v hz="$hz" 'BEGIN { printf "%.2f", b / hz }')" \
    --cpu-samples "$samples" --t-check "$t_check" \
    --rep "$rep" ${db:+--etcd-db-mib "$db"} --metrics "$( [[ -f $metrics ]] && echo "$metrics")" >>"$work/results.jsonl"
  tail -n 1 "$work/results.jsonl" | python3 "$here/analyze.py" line >&2
  if ((rep == repeat && cold && ok)); then cold_start "$who" "$n" "$label" || ok=0; fi
  if ((rep == repeat && leader && ok)); then
    leader_change "$who" "$n" "$label" "$qps" "$burst" TERM || ok=0
    leader_change "$who" "$n" "$label" "$qps" "$burst" KILL || ok=0
  fi
  "$repo/test/e2e/cluster.sh" --dir "$cluster_dir" down >/dev/null 2>&1 || true
  return $((1 - ok))
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
failed=0
controllers=(ours cr)
[[ -n $only ]] && controllers=("$only")
for n in $ns_list; do
  settings=()
  ((defaults)) && settings+=("default")
  for e in $equal; do settings+=("$e"); done
  for s in "${settings[@]}"; do
    for who in "${controllers[@]}"; do
      for ((rep = 1; rep <= repeat; rep++)); do
        if [[ $s == default ]]; then
          run_one "$who" "$n" "" "" "default" "$rep" || failed=1
        else
          run_one "$who" "$n" "${s%%:*}" "${s##*:}" "qps${s%%:*}" "$rep" || failed=1
        fi
      done
    done
  done
done

mkdir -p "$(dirname "$out")"
nmax=$(tr ' ' '\n' <<<"$ns_list" | sort -n | tail -n 1)
plot_label=default
((defaults)) || plot_label="qps${equal%%:*}"
plot="${out%.md}-convergence-$nmax.svg"
python3 "$here/analyze.py" plot --results "$work/results.jsonl" --n "$nmax" --label "$plot_label" --out "$plot" || plot=""
commit=$(git -C "$repo" rev-parse --short HEAD)
[[ -z $(git -C "$repo" status --porcelain -- controller shared bench/controller) ]] || commit+=" (with uncommitted changes)"
report=(python3 "$here/analyze.py" report --results "$work/results.jsonl" --machine "$(nproc) cores, $(uname -r)"
  --title "Run of $(date -u +%Y-%m-%d): N = ${ns_list// /, }$( ((cold)) && echo ', bursts and cold starts')$( ((leader)) && echo ', leader changes')"
  --commit "$commit" --load "$load_before / $(cut -d' ' -f1 /proc/loadavg)" --command "$command"
  --apiserver "$apiserver_args" ${plot:+--plot "$(basename "$plot")"})
if ((append)) && [[ -f $out ]]; then
  { echo; "${report[@]}" --section; } >>"$out"
  cat "$work/results.jsonl" >>"${out%.md}.jsonl"
else
  "${report[@]}" >"$out"
  cp "$work/results.jsonl" "${out%.md}.jsonl"
fi
say "wrote $out${plot:+ and $plot}"
cat "$out"
exit "$failed"
