#!/usr/bin/env bash
# Makes a CA and a serving certificate for the ModelService webhook with
# openssl, and prints the base64 caBundle for the webhook configurations on
# its last line.
#
# Usage:
#   certs-scripts/gen-certs.sh --out DIR [options]
# Options:
#   --service NAME      Service name (default modelservice-webhook)
#   --namespace NS      Service namespace (default modelservice-system)
#   --ip ADDR           add an IP SAN (repeatable; e.g. 127.0.0.1 for a local webhook)
#   --dns NAME          add a DNS SAN (repeatable)
#   --days N            validity of the serving certificate (default 365)
#   --reuse-ca          keep DIR/ca.crt and DIR/ca.key if present (rotate the leaf only)
#   --client NAME       also make a client certificate DIR/NAME.crt/.key (CN=NAME)
#   --rsa               RSA 2048 keys instead of ECDSA P-256
#
# Files written in DIR: ca.crt ca.key tls.crt tls.key (and the client pair).
# The serving key and certificate are written to temporary files and renamed
# into place, key first, so a reader never sees a half-written file.
set -euo pipefail

out="" service="modelservice-webhook" namespace="modelservice-system" days=365
reuse_ca=0 rsa=0 client=""
ips=() dns=()
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --service) service=$2; shift 2 ;;
    --namespace) namespace=$2; shift 2 ;;
    --ip) ips+=("$2"); shift 2 ;;
    --dns) dns+=("$2"); shift 2 ;;
    --days) days=$2; shift 2 ;;
    --reuse-ca) reuse_ca=1; shift ;;
    --client) client=$2; shift 2 ;;
    --rsa) rsa=1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen-certs: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || { echo "gen-certs: --out DIR is required" >&2; exit 2; }
mkdir -p "$out"
umask 077

newkey() {  # newkey FILE
  if ((rsa)); then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null
  else
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
  fi
}

issue() {  # issue KEY SUBJECT EXTFILE CRT: a certificate for KEY signed by the CA
  openssl req -new -key "$1" -subj "$2" -out "$tmp/req.csr" 2>/dev/null
  openssl x509 -req -in "$tmp/req.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -days "$days" -sha256 -extfile "$3" -out "$4" 2>/dev/null
  rm -f "$out/ca.srl"
}

if ((reuse_ca)) && [[ -s $out/ca.crt && -s $out/ca.key ]]; then
  :
else
  newkey "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -sha256 -days 3650 -subj "/CN=modelservice-webhook-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt" 2>/dev/null
fi

sans="DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local"
for d in "${dns[@]}"; do sans+=",DNS:$d"; done
for i in "${ips[@]}"; do sans+=",IP:$i"; done

tmp=$(mktemp -d "$out/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ext="$tmp/ext.cnf"
cat >"$ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=${sans}
EXT
newkey "$tmp/tls.key"
issue "$tmp/tls.key" "/CN=${service}.${namespace}.svc" "$ext" "$tmp/tls.crt"
chmod 0644 "$tmp/tls.crt"
mv -f "$tmp/tls.key" "$out/tls.key"
mv -f "$tmp/tls.crt" "$out/tls.crt"

if [[ -n $client ]]; then
  cat >"$tmp/client.cnf" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
EXT
  newkey "$out/$client.key"
  issue "$out/$client.key" "/CN=$client" "$tmp/client.cnf" "$out/$client.crt"
fi

base64 -w0 "$out/ca.crt"
echo
