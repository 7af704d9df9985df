#!/usr/bin/env bash
# registry.sh - a real OCI registry on loopback: the CNCF distribution
# registry (github.com/distribution/distribution/v3/cmd/registry, built from
# the Go module proxy at the version test/e2e/registry-tools/go.mod pins, and
# cached, by test/e2e/build-go-tool.sh), serving HTTPS with a certificate of
# a CA of its own. scripts/release.sh pushes and signs there when it is given
# no --registry; the e2e case 99-release-registry installs from it.
#
# Usage: scripts/registry.sh start DIR [--port PORT]
#        scripts/registry.sh stop DIR
#   start  makes (once) DIR/ca.crt and DIR/ca.key (the test CA) and
#          DIR/tls.crt, DIR/tls.key (IP:127.0.0.1, DNS:localhost), writes
#          DIR/config.yml (storage in DIR/data), starts the registry on
#          127.0.0.1:PORT (default: a free port) in the background, waits
#          until it says it listens and /v2/ answers through the CA, and
#          prints on stdout:
#            REGISTRY=127.0.0.1:PORT
#            REGISTRY_CA=DIR/ca.crt
#          (clients: buildah/skopeo --cert-dir, helm --ca-file, cosign and Go
#          programs SSL_CERT_FILE with the system CAs and DIR/ca.crt, which
#          DIR/ca-bundle.crt holds; containerd a hosts.toml naming DIR/ca.crt)
#   stop   stops the registry DIR/registry.pid names (the data stay)
#
# Log: DIR/registry.log. Environment: MODELSERVICE_TOOLS_CACHE (the built
# registry), REGISTRY_BIN (a registry binary to use instead).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "registry.sh: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
(( $# >= 2 )) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
cmd="$1" dir="$2"; shift 2
port=""
while (( $# )); do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

running() { [[ -s "$dir/registry.pid" ]] && kill -0 "$(cat "$dir/registry.pid")" 2>/dev/null; }

case "$cmd" in
  stop)
    if running; then
      pid="$(cat "$dir/registry.pid")"
      kill "$pid"
      # Wait for the process itself to end (it is not this shell's child).
      tail --pid="$pid" -f /dev/null
      say "stopped (pid $pid)"
    fi
    rm -f "$dir/registry.pid"
    exit 0 ;;
  start) ;;
  *) die "unknown command $cmd (start or stop)" ;;
esac

running && die "a registry already runs from $dir (pid $(cat "$dir/registry.pid")): stop it first"
bin="${REGISTRY_BIN:-$("$root/test/e2e/build-go-tool.sh" "$root/test/e2e/registry-tools" \
  github.com/distribution/distribution/v3/cmd/registry registry)}"
[[ -x $bin ]] || die "no registry binary"

# The test CA and the serving certificate (made once per DIR).
if [[ ! -s "$dir/tls.crt" ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=modelservice test registry CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n') \
    -out "$dir/tls.crt" 2>/dev/null
  rm -f "$dir/tls.csr"
fi
cat /etc/ssl/certs/ca-certificates.crt "$dir/ca.crt" >"$dir/ca-bundle.crt"
# containers/image (buildah, skopeo) read every *.crt of --cert-dir as a CA.
mkdir -p "$dir/certs.d"
cp "$dir/ca.crt" "$dir/certs.d/ca.crt"

[[ -n $port ]] || port="$(python3 "$root/test/e2e/free-port.py")"
cat >"$dir/config.yml" <<EOF
# written by scripts/registry.sh
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  tls:
    certificate: $dir/tls.crt
    key: $dir/tls.key
EOF
: >"$dir/registry.log"
setsid nohup "$bin" serve "$dir/config.yml" </dev/null >>"$dir/registry.log" 2>&1 &
echo $! >"$dir/registry.pid"
# Wait for the registry's own word that it listens (or its exit), then check
# that /v2/ answers over TLS through the test CA.
if ! timeout 30 grep -q -m1 'listening on' <(tail --pid="$(cat "$dir/registry.pid")" -n +1 -F "$dir/registry.log" 2>/dev/null); then
  tail -n 20 "$dir/registry.log" >&2
  die "the registry did not start listening (log: $dir/registry.log)"
fi
curl -fsS --cacert "$dir/ca.crt" -o /dev/null "https://127.0.0.1:$port/v2/" \
  || die "https://127.0.0.1:$port/v2/ does not answer through $dir/ca.crt"
say "distribution registry $("$bin" --version 2>/dev/null | awk '{print $3}') on https://127.0.0.1:$port (data $dir/data, pid $(cat "$dir/registry.pid"))"
echo "REGISTRY=127.0.0.1:$port"
echo "REGISTRY_CA=$dir/ca.crt"
