#!/usr/bin/env bash
# modelservice-webhook and the controller-runtime peer's webhook side by side
# in one run: the same certificates, fixtures and wrk load (bench/review.lua,
# every answer checked), each server at its defaults (ours: an event loop per usable CPU;
# the peer: Go's GOMAXPROCS = the cores), one after the other on the same
# 2 cores. Prints a markdown table with the ratio ours / peer per row, this
# webhook's own TLS + HTTP baselines in the same run (GET /validate answered
# 405, and the valid review's bytes POSTed to a path with no handler, 404: no
# admission work) with each row's ratio to them, and the instructions
# per review counted by callgrind (bench/admission_profile), so that every
# figure issue 27 names comes from one run. Each row also says how busy the
# server's CPU and wrk's CPU 0 were while it ran (meaningful with --pin): a
# row whose server CPU is well under 100 % was limited by the client, so it
# also gives the server's CPU time per request (its CPU's busy share over the
# rate) and the ratio of the baselines' to the row's: the fraction of the
# baseline's rate the row would reach with the server's CPU the limit.
#
# When nginx is installed (scripts/setup.sh installs nginx-light), a reference
# row too: nginx, one worker, on the same CPU, certificates and TLS 1.3,
# answering the same GET with a 405 and no work: what this machine's tail
# is for a TLS server that is not this project's.
# Each row also gives the share of the two CPUs' time the hypervisor took
# ("steal" in /proc/stat): on a virtual machine a vCPU that halts when idle
# can wait milliseconds to run again, and those waits are the latency tail.
#
# Usage: bench/webhook-peer.sh [--duration SEC] [--connections 4,8,16] [--build-dir DIR] [--pin]
#                              [--cpu-latency-qos] [--repeat N]
#   --repeat N  N rounds, each starting every server afresh and running all
#          its rows; a row's figures are each the median of its N (the
#          machine's run-to-run noise is larger than the differences the
#          ratios are about on a shared virtual machine); each ratio of two
#          rates is the median of the N ratios of two rows of the same round
#          (paired, so that a round on a slow stretch of the machine counts
#          as one round, not as a slow numerator against another round's
#          fast denominator), while the ratios by server CPU are of the
#          medians; errors are summed.
#   --pin  the server on the last CPU, wrk on the others (taskset): each server's
#          default then sizes itself to the one CPU it is given (ours: one event
#          loop; Go: GOMAXPROCS 1), as in a container with a cpuset, and the
#          client no longer takes turns with the server on the same cores.
#   --cpu-latency-qos  hold the kernel's CPU latency QoS request at 0 for the
#          run (/dev/cpu_dma_latency open with 0 written, needs root; what
#          tuned's latency-performance profile does): an idle CPU polls
#          instead of halting, so a wake-up costs no trip through the
#          hypervisor. For both servers alike; the table says which was used.
# Needs: wrk, curl, the peer's binary ($PEERS_OUT/bin/cr-modelservice,
# PEERS_OUT default /tmp/peers, built by `bash $PEERS_DIR/build.sh` as in
# bench/controller/run.sh), and
# $build_dir/webhook/modelservice-webhook and $build_dir/bench/admission_profile
# (a Release build: bench/run.sh makes both), valgrind for the instructions.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
duration=10 warmup=2 conns=4,8,16 repeat=1 build_dir="$repo/build-bench"
server_cpus=() client_cpus=()
while (($#)); do
  case $1 in
    --pin)
      last=$(($(nproc) - 1))
      ((last >= 1)) || { echo "webhook-peer.sh: --pin needs 2 CPUs" >&2; exit 2; }
      server_cpus=(taskset -c "$last") client_cpus=(taskset -c "0-$((last - 1))")
      shift ;;
    --duration) duration=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --cpu-latency-qos)
      [[ -w /dev/cpu_dma_latency ]] || { echo "webhook-peer.sh: --cpu-latency-qos needs write access to /dev/cpu_dma_latency" >&2; exit 2; }
      # Held while this shell keeps the file open; "0" is read as ASCII.
      exec {qos_fd}>/dev/cpu_dma_latency
      printf 0 >&"$qos_fd"
      shift ;;
    *) echo "webhook-peer.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
ours="$build_dir/webhook/modelservice-webhook"
peer="${PEERS_OUT:-/tmp/peers}/bin/cr-modelservice"
for f in "$ours" "$peer"; do [[ -x $f ]] || { echo "webhook-peer.sh: no $f" >&2; exit 2; }; done
command -v wrk >/dev/null || { echo "webhook-peer.sh: wrk is required" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ms-peer-bench.XXXXXX")
pid=""
stop() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=""; }
trap 'stop; rm -rf "$tmp"' EXIT
"$repo/certs-scripts/gen-certs.sh" --out "$tmp/certs" --ip 127.0.0.1 >/dev/null
free_port() { python3 "$repo/test/e2e/free-port.py"; }

nginx_conf() {  # the reference server's configuration, everything under $tmp
  cat <<CONF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log stderr;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx-body;
  proxy_temp_path $tmp/nginx-proxy;
  fastcgi_temp_path $tmp/nginx-fastcgi;
  uwsgi_temp_path $tmp/nginx-uwsgi;
  scgi_temp_path $tmp/nginx-scgi;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $tmp/certs/tls.crt;
    ssl_certificate_key $tmp/certs/tls.key;
    ssl_protocols TLSv1.3;
    keepalive_requests 1000000000;
    location / { return 405 "accepts POST only"; }
  }
}
CONF
}

start() {  # start ours|peer|nginx: the server on $port, ready on $probe (nginx: on $port)
  port=$(free_port) probe=$(free_port) metrics=$(free_port)
  if [[ $1 == nginx ]]; then
    nginx_conf >"$tmp/nginx.conf"
    "${server_cpus[@]}" nginx -c "$tmp/nginx.conf" -e stderr >"$tmp/$1.log" 2>&1 &
  elif [[ $1 == ours ]]; then
    "${server_cpus[@]}" "$ours" --port "$port" --bind-address 127.0.0.1 --cert-dir "$tmp/certs" --log-level warn \
      --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$probe" >"$tmp/$1.log" 2>&1 &
  else
    "${server_cpus[@]}" "$peer" --mode webhook --host 127.0.0.1 --port "$port" --cert-dir "$tmp/certs" \
      --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$probe" >"$tmp/$1.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 100); do
    { [[ $1 == nginx ]] || curl -fsS "http://127.0.0.1:$probe/readyz" >/dev/null 2>&1; } &&
      curl -ksS -o /dev/null "https://127.0.0.1:$port/" 2>/dev/null && return
    sleep 0.1
  done
  cat "$tmp/$1.log" >&2; echo "webhook-peer.sh: $1 never became ready" >&2; exit 1
}

# CPU n's busy, total and stolen jiffies (user nice system irq softirq steal /
# all but guest / steal); "cpu" for all CPUs together.
cpu_ticks() { awk -v c="cpu$1" '$1 == c {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9}' /proc/stat; }
# The percentage of the time between two cpu_ticks readings that CPU n was
# busy (field 1) or that the hypervisor took (field 3).
share() { awk -v a="$1" -v b="$2" -v f="$3" -v fmt="$4" 'BEGIN{split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; printf fmt, (t > 0) ? 100 * (y[f] - x[f]) / t : 0}'; }
busy_pct() { share "$1" "$2" 1 "%.0f"; }
steal_pct() { share "$1" "$2" 3 "%.1f"; }
server_cpu=$(($(nproc) - 1))

run() {  # run fixture expect path connections seconds method status -> the RESULT line
  BENCH_BODY="$here/fixtures/$1" BENCH_EXPECT="$2" BENCH_METHOD="$6" BENCH_STATUS="$7" \
    "${client_cpus[@]}" wrk -t 1 -c "$4" -d "${5}s" --timeout 2s -s "$here/review.lua" "https://127.0.0.1:$port$3" >"$tmp/wrk.out" 2>&1
  grep '^RESULT ' "$tmp/wrk.out"
}

# name | fixture | substring every answer must contain | path | method | status
scenarios=("valid|validate-valid.json|\"allowed\":true|/validate|POST|200"
           "denied|validate-invalid.json|\"allowed\":false|/validate|POST|200"
           "mutate|mutate-defaults.json|\"patchType\":\"JSONPatch\"|/mutate|POST|200")
# The transport baselines: GET /validate (405, no body), and the valid review's
# own 1.8 KB POSTed to a path with no handler (404): TLS + HTTP for the same
# bytes in, no admission work.
baselines=("baseline|validate-valid.json|accepts POST only|/validate|GET|405"
           "baseline-body|validate-valid.json|404 page not found|/no-handler|POST|404")
declare -A rps p99 errs busy sbusy cbusy cpu_us steal round_rps r_peer r_get r_body
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0) ? a / b : 0}'; }
reference=("reference|validate-valid.json|accepts POST only|/validate|GET|405")
IFS=',' read -ra conn_list <<<"$conns"
servers=(ours peer)
command -v nginx >/dev/null && servers+=(nginx)
for round in $(seq "$repeat"); do
for server in "${servers[@]}"; do
  start "$server"
  rows=("${scenarios[@]}")
  [[ $server == ours ]] && rows+=("${baselines[@]}")
  [[ $server == nginx ]] && rows=("${reference[@]}")
  # Connections outer, rows inner: the rows a ratio compares run next to
  # each other in time (seconds apart, not minutes), so a drift of the
  # machine's speed within a round moves both sides of the ratio alike.
  for c in "${conn_list[@]}"; do
    for s in "${rows[@]}"; do
      IFS='|' read -r name fixture expect path method status <<<"$s"
      run "$fixture" "$expect" "$path" "$c" "$warmup" "$method" "$status" >/dev/null
      s0=$(cpu_ticks "$server_cpu") c0=$(cpu_ticks 0) a0=$(cpu_ticks "")
      line=$(run "$fixture" "$expect" "$path" "$c" "$duration" "$method" "$status")
      s1=$(cpu_ticks "$server_cpu") c1=$(cpu_ticks 0) a1=$(cpu_ticks "")
      declare -A r=()
      for kv in ${line#RESULT }; do r[${kv%%=*}]=${kv#*=}; done
      key="$server $name $c"
      x_rps=$(awk -v x="${r[rps]}" 'BEGIN{printf "%.0f", x}')
      x_p99=$(awk -v u="${r[p99_us]}" 'BEGIN{printf "%.3f", u/1000}')
      x_sbusy=$(busy_pct "$s0" "$s1") x_cbusy=$(busy_pct "$c0" "$c1") x_steal=$(steal_pct "$a0" "$a1")
      x_cpu_us=$(awk -v p="$x_sbusy" -v r="$x_rps" 'BEGIN{printf "%.1f", (r > 0) ? 1e6 * p / 100 / r : 0}')
      round_rps[$key]=$x_rps
      rps[$key]+=" $x_rps" p99[$key]+=" $x_p99" sbusy[$key]+=" $x_sbusy" cbusy[$key]+=" $x_cbusy"
      steal[$key]+=" $x_steal" cpu_us[$key]+=" $x_cpu_us"
      errs[$key]=$((${errs[$key]:-0} + r[non200] + r[mismatch] + r[connect] + r[read] + r[write] + r[timeout]))
      echo "  round $round, $key: $x_rps/s p99 $x_p99 ms errors ${errs[$key]} CPU busy % (server / wrk) $x_sbusy / $x_cbusy stolen $x_steal %" >&2
      unset r
    done
  done
  stop
done
# This round's ratios, each from two rows of the same round.
for s in "${scenarios[@]}"; do
  IFS='|' read -r name _ <<<"$s"
  for c in "${conn_list[@]}"; do
    o="ours $name $c"
    r_peer[$o]+=" $(ratio "${round_rps[$o]}" "${round_rps[peer $name $c]}")"
    r_get[$o]+=" $(ratio "${round_rps[$o]}" "${round_rps[ours baseline $c]}")"
    r_body[$o]+=" $(ratio "${round_rps[$o]}" "${round_rps[ours baseline-body $c]}")"
  done
done
if [[ " ${servers[*]} " == *" nginx "* ]]; then
  for c in "${conn_list[@]}"; do
    r_get[nginx reference $c]+=" $(ratio "${round_rps[nginx reference $c]}" "${round_rps[ours baseline $c]}")"
  done
fi
done
# Each figure of a row: its median over the rounds (each figure on its own).
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for key in "${!r_get[@]}"; do r_get[$key]=$(median "${r_get[$key]}"); done
for key in "${!r_peer[@]}"; do r_peer[$key]=$(median "${r_peer[$key]}") r_body[$key]=$(median "${r_body[$key]}"); done
for key in "${!rps[@]}"; do
  rps[$key]=$(median "${rps[$key]}") p99[$key]=$(median "${p99[$key]}") steal[$key]=$(median "${steal[$key]}")
  cpu_us[$key]=$(median "${cpu_us[$key]}") busy[$key]="$(median "${sbusy[$key]}") / $(median "${cbusy[$key]}")"
done

pinning="nothing pinned"
((${#server_cpus[@]})) && pinning="servers pinned with \`${server_cpus[*]}\`, wrk with \`${client_cpus[*]}\`"
idle="idle CPUs halt (the kernel's default)"
[[ -n ${qos_fd:-} ]] && idle="CPU latency QoS held at 0 (idle CPUs poll)"
rounds="one round"
((repeat > 1)) && rounds="medians of $repeat rounds"
echo "Run $(date -u +%Y-%m-%dT%H:%MZ), commit \`$(git -C "$repo" rev-parse --short HEAD)\`, $(nproc) cores, $pinning, $idle, $rounds of ${duration} s per row, load before/after as the rows ran: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| case | connections | this webhook /s | p99 ms | controller-runtime /s | p99 ms | ratio to the peer | ratio to the baseline (GET) | ratio to the baseline (same body) | server CPU µs / request (ours) | ratio to the baselines by server CPU (GET / same body) | errors (ours / peer) | CPU busy %, server's / wrk's (ours; peer) | CPU stolen by the hypervisor % (ours; peer) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
for s in "${scenarios[@]}"; do
  IFS='|' read -r name _ <<<"$s"
  for c in "${conn_list[@]}"; do
    o="ours $name $c" q="peer $name $c" b="ours baseline $c" bb="ours baseline-body $c"
    echo "| $name | $c | ${rps[$o]} | ${p99[$o]} | ${rps[$q]} | ${p99[$q]} | ${r_peer[$o]} |" \
      "${r_get[$o]} | ${r_body[$o]} | ${cpu_us[$o]} |" \
      "$(ratio "${cpu_us[$b]}" "${cpu_us[$o]}") / $(ratio "${cpu_us[$bb]}" "${cpu_us[$o]}") | ${errs[$o]} / ${errs[$q]} | ${busy[$o]}; ${busy[$q]} | ${steal[$o]}; ${steal[$q]} |"
  done
done
for c in "${conn_list[@]}"; do
  b="ours baseline $c"
  echo "| baseline: TLS + HTTP only (GET → 405), this webhook | $c | ${rps[$b]} | ${p99[$b]} | | | | 1.00 | | ${cpu_us[$b]} | | ${errs[$b]} / | ${busy[$b]} | ${steal[$b]} |"
done
for c in "${conn_list[@]}"; do
  b="ours baseline-body $c"
  echo "| baseline: TLS + HTTP only, the valid review POSTed to a path with no handler (404), this webhook | $c | ${rps[$b]} | ${p99[$b]} | | | | | 1.00 | ${cpu_us[$b]} | | ${errs[$b]} / | ${busy[$b]} | ${steal[$b]} |"
done
if [[ " ${servers[*]} " == *" nginx "* ]]; then
  nginx_version=$(nginx -v 2>&1 | sed 's|.*/||')
  for c in "${conn_list[@]}"; do
    b="nginx reference $c"
    echo "| reference: nginx $nginx_version, one worker, TLS 1.3, the same GET → 405 | $c | ${rps[$b]} | ${p99[$b]} | | | | ${r_get[$b]} | | ${cpu_us[$b]} | | ${errs[$b]} / | ${busy[$b]} | ${steal[$b]} |"
  done
fi

# Instructions per review: (Ir of 51 reviews - Ir of 1) / 50, counted, not
# timed (unaffected by other load).
profile="$build_dir/bench/admission_profile"
if command -v valgrind >/dev/null && [[ -x $profile ]]; then
  ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$profile" "$1" "$2" 2>&1 |
      awk '/I +refs:/ {gsub(",", "", $NF); print $NF}'
  }
  echo
  echo "| instructions per review (callgrind) | valid | invalid | mutate |"
  echo "|---|---:|---:|---:|"
  line="| \`$(git -C "$repo" rev-parse --short HEAD)\`"
  for sc in valid invalid mutate; do line+=" | $((($(ir $sc 51) - $(ir $sc 1)) / 50))"; done
  echo "$line |"
fi
