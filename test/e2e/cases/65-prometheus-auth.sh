# A secured Prometheus (issue 44): a second Prometheus of this case's own
# ($PROMETHEUS_BIN) serves HTTPS with a web configuration
# (--web.config.file): a server certificate of a CA made here, client
# certificates required and verified (client_auth_type
# RequireAndVerifyClientCert) and basic auth (basic_auth_users, a bcrypt
# hash); it scrapes the suite's queue exporter as the suite's Prometheus does.
# curl without the client certificate is refused at the handshake, without the
# password answered 401. The suite's controller is stopped; controller-b runs
# with --prometheus-url on that Prometheus, --prometheus-ca-file,
# --prometheus-cert-file/--prometheus-key-file,
# --prometheus-basic-auth-username/--prometheus-basic-auth-password-file and
# --prometheus-header X-Scope-OrgID=team-a:
#   L=23, T=5 -> 5 replicas, read through it (Degraded False);
#   the password changed on the Prometheus side (the web configuration is
#   read at each request) -> replicas stay 5, Degraded/MetricsUnavailable
#   with "HTTP 401: Unauthorized" (what kubectl shows);
#   the new password written to the controller's file (as a Secret's update
#   reaches a volume) -> readable again without a restart (the 401 made the
#   controller read its files at once);
#   no password, old or new, in controller-b's log.
# The web configuration's format is the same in Prometheus 2.x and 3.x.
# timeout: 120
# logs: controller-b prometheus-auth
ns=e2e-prom-auth
name=chat
dir="$E2E_WORK/65-prometheus-auth"
rm -rf "$dir" && mkdir -p "$dir"
new_ns "$ns"
cleanup() {
  proc_stop controller-b TERM 10
  proc_stop prometheus-auth TERM 10
  proc_alive controller || start_controller controller
}
trap cleanup EXIT

# bcrypt_hash: a bcrypt hash (cost 4) of the password on stdin, for
# basic_auth_users: Debian's python3-bcrypt (scripts/setup.sh), else Python's
# crypt over libxcrypt (Python < 3.13).
bcrypt_hash() {
  local pw py h
  pw="$(cat)"
  for py in python3 /usr/bin/python3; do
    h="$(printf %s "$pw" | "$py" -c 'import bcrypt, sys; print(bcrypt.hashpw(sys.stdin.buffer.read(), bcrypt.gensalt(4)).decode())' 2>/dev/null)" \
      || h="$(printf %s "$pw" | "$py" -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.stdin.read(), crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' 2>/dev/null)" \
      || true
    [[ "$h" == '$2'* ]] && { echo "$h"; return; }
  done
  fail "no bcrypt: install python3-bcrypt (scripts/setup.sh)"
}

# ------------------------------------------------------------ the secured Prometheus
key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(
  cd "$dir"
  printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
  # shellcheck disable=SC2086
  openssl req -x509 $key -keyout ca.key -out ca.crt -days 1 -subj /CN=prometheus-ca &&
    openssl req $key -keyout server.key -out server.csr -subj /CN=127.0.0.1 &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile san.ext &&
    openssl req $key -keyout client.key -out client.csr -subj /CN=modelservice-controller &&
    openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1
) >"$dir/openssl.log" 2>&1 || fail "openssl: $(tail -n 3 "$dir/openssl.log")"
password="pw-$(openssl rand -hex 12)"
password2="pw-$(openssl rand -hex 12)"
(umask 077 && printf '%s\n' "$password" >"$dir/password")
web_config() {  # web_config PASSWORD: the web configuration with that password's hash
  cat >"$dir/web.yml.new" <<EOF
tls_server_config:
  cert_file: $dir/server.crt
  key_file: $dir/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $dir/ca.crt
basic_auth_users:
  modelservice: $(printf %s "$1" | bcrypt_hash)
EOF
  mv "$dir/web.yml.new" "$dir/web.yml"
}
web_config "$password"
cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
  - job_name: queue-exporter
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$EXPORTER_PORT"]}]
EOF
port="$(free_port)"
url="https://127.0.0.1:$port"
proc_start prometheus-auth "$PROMETHEUS_BIN" --config.file "$dir/prometheus.yml" --web.config.file "$dir/web.yml" \
  --storage.tsdb.path "$dir/data" --web.listen-address "127.0.0.1:$port" --log.level warn
# scurl ARGS...: curl to it with the CA, the client certificate and the password (from a file, not argv).
scurl() {
  printf 'user = "modelservice:%s"\n' "$(<"$dir/password")" |
    curl -sS --max-time 5 --cacert "$dir/ca.crt" --cert "$dir/client.crt" --key "$dir/client.key" -K - "$@"
}
wait_for 60 "the secured Prometheus ready (HTTPS, client certificate, basic auth)" scurl -f -o /dev/null "$url/-/ready"
code="$(curl -s --max-time 5 --cacert "$dir/ca.crt" -o /dev/null -w '%{http_code}' "$url/-/ready" || true)"
assert_eq "$code" 000 "curl without a client certificate (refused at the handshake)"
code="$(curl -s --max-time 5 --cacert "$dir/ca.crt" --cert "$dir/client.crt" --key "$dir/client.key" -o /dev/null \
  -w '%{http_code}' "$url/-/ready")"
assert_eq "$code" 401 "curl with the client certificate, without the password"

# ------------------------------------------------------------ controller-b reads through it
set_queue "$ns" "$name" 23
proc_stop controller TERM 10  # only controller-b reconciles meanwhile
t0="$(now)"
start_controller controller-b --prometheus-url "$url" --prometheus-ca-file "$dir/ca.crt" \
  --prometheus-cert-file "$dir/client.crt" --prometheus-key-file "$dir/client.key" \
  --prometheus-basic-auth-username modelservice --prometheus-basic-auth-password-file "$dir/password" \
  --prometheus-header X-Scope-OrgID=team-a
ms_yaml "$name" 'model: gpt2' 'replicas: 1' 'autoscaling: {minReplicas: 1, maxReplicas: 10, targetQueueLength: 5}' |
  k -n "$ns" apply -f - >/dev/null
wait_for 30 "L=23 read through the secured Prometheus: Deployment scaled to 5" deploy_replicas_is "$ns" "$name" 5
log "started and scaled in $(elapsed "$t0")s (the new Prometheus' first scrapes included)"
degraded() {  # degraded: the Degraded condition's "status reason: message"
  k -n "$ns" get ms "$name" -o json | jq -r '.status.conditions[]? | select(.type == "Degraded") | "\(.status) \(.reason): \(.message)"'
}
ok() { [[ "$(degraded)" == "False "* ]]; }
wait_for 10 "Degraded False while the queue length is readable" ok
assert_eq "$(jp "ms/$name" '{.status.desiredReplicas}' -n "$ns")" 5 "status.desiredReplicas"

# ------------------------------------------------------------ wrong credentials: what the user sees
t0="$(now)"
web_config "$password2"  # Prometheus' password rotated; the controller's file still has the old one
unauthorized() { [[ "$(degraded)" == "True MetricsUnavailable: "*"HTTP 401: Unauthorized"* ]]; }
wait_for 30 "Degraded/MetricsUnavailable with HTTP 401 once the password is wrong" unauthorized
log "$(elapsed "$t0")s later, kubectl shows: $(degraded)"
assert_eq "$(jp "deployment/$name" '{.spec.replicas}' -n "$ns")" 5 "replicas while Prometheus answers 401"

# The Secret updated: the new password in the file; the next 401 makes the
# controller read it at once (no restart, no waiting out the minute).
t0="$(now)"
printf '%s\n' "$password2" >"$dir/password.new" && mv "$dir/password.new" "$dir/password"
wait_for 15 "readable again with the rotated password" ok
log "readable again $(elapsed "$t0")s after the password file changed"
logf="$E2E_WORK/logs/controller-b.log"
assert_contains "$(cat "$logf")" "HTTP 401: Unauthorized" "controller-b's log"
for pw in "$password" "$password2"; do
  if grep -qF "$pw" "$logf"; then fail "a password is in controller-b's log"; fi
done
log "ok: neither password in controller-b's log ($(wc -l <"$logf") lines)"
k -n "$ns" delete ms "$name" --wait=false >/dev/null
