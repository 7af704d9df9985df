#!/usr/bin/env bash
# node.sh - the real node of the local cluster (test/e2e/cluster.sh up
# --real-node): a real kubelet (v1.34, cached by build-control-plane.sh
# --real-node) driving Debian's containerd and runc, so that Pods run real
# containers, next to KWOK's fake nodes. Called by cluster.sh; the commands
# below are also for people and tests.
#
# Usage: test/e2e/node/node.sh COMMAND DIR [ARGS]   (DIR: the cluster's --dir)
#   certs DIR                  (cluster.sh, before kube-apiserver starts) the
#                              node's certificates in DIR/pki, signed by the
#                              cluster CA: node.{crt,key} (client, CN
#                              system:node:NAME, O system:nodes),
#                              kubelet-serving.{crt,key} (IP:NODE_IP, DNS:NAME),
#                              apiserver-kubelet-client.{crt,key} (O system:masters);
#                              and DIR/egress-selector.yaml for kube-apiserver
#   start DIR API_PORT         builds (cached) and imports the pause image,
#                              starts the node's namespaces, containerd, the
#                              kubelet and the netns proxy; returns once the
#                              node is registered and Ready
#   stop DIR                   stops all of it, every container included, and
#                              removes what it made outside DIR (cgroups)
#   status DIR                 one line per process; exit 1 if one is down
#   exec DIR CMD...            runs CMD in the node's network and mount
#                              namespaces (e.g. `ip addr`, `curl POD_IP:PORT`,
#                              `iptables -S`)
#   registry DIR HOST:PORT CA  lets the node's containerd pull from the
#                              registry at HOST:PORT on the host's loopback
#                              (HOST 127.0.0.1), trusting the CA in file CA:
#                              writes DIR/node/certs.d/HOST:PORT/hosts.toml
#                              (containerd's config_path, read at each pull)
#                              and forwards HOST:PORT inside the node's
#                              network namespace to the host's (netns-proxy.py);
#                              one registry at a time, stopped by `stop`
#   import DIR ARCHIVE...      imports OCI/Docker image archives into the
#                              node's containerd (`ctr -n k8s.io images import`),
#                              for Pods with imagePullPolicy: Never/IfNotPresent
#
# What it does to the host, and what it keeps to itself:
#   - The node lives in a network and a mount namespace of its own (unshare),
#     held by one process (DIR/node/holder.pid). Its addresses are inside:
#     NODE_IP 10.86.0.1 and the `kubernetes` Service's ClusterIP 10.0.0.1 on
#     its loopback, the Pod network 10.88.0.0/24 on a bridge (CNI bridge +
#     host-local). No address is assigned and no route added on the host; two
#     real-node clusters do not see each other.
#   - netns-proxy.py links it to the control plane on the host's loopback:
#     10.0.0.1:443 and NODE_IP:6443 in the namespace forward to kube-apiserver;
#     kube-apiserver's egress selector (its "cluster" traffic: webhooks called
#     through their Service, kubelet logs, the service proxy) goes through a
#     CONNECT proxy on a Unix socket, dialled inside the namespace.
#   - In its mount namespace, /var/lib, /var/log and /run are DIR/node/host/*
#     (the kubelet writes /var/lib/kubelet/device-plugins, /var/log/pods,
#     /var/log/containers; containerd /run/containerd and /run/netns; CNI
#     /var/lib/cni), and the kernel tunables the kubelet insists on
#     (vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
#     kernel.panic_on_oops=1, kernel.keys.root_max{keys,bytes}) are files with
#     those values bound over /proc/sys: the host's sysctls are never written.
#   - iptables chains (the kubelet's, CNI's) are in the node's namespace.
#   - cgroups (v1 or v2): the Pods' under one cgroup per cluster, nested under
#     the starting process's own memory cgroup, removed by `stop`.
#   - containerd's state (images, snapshots, containers) is in DIR/node/containerd.
#
# Environment: KUBELET, KUBECTL (binaries; cluster.sh passes them),
# E2E_NODE_NAME (default real-node-1), E2E_NODE_SYNC_FREQUENCY (the kubelet's
# syncFrequency, default 5s: how soon an updated Secret reaches a mounted volume).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE_IP=10.86.0.1
API_VIP=10.0.0.1
POD_CIDR=10.88.0.0/24
PAUSE_IMAGE=localhost/modelservice-e2e/pause:1
NAME="${E2E_NODE_NAME:-real-node-1}"
TAINT_KEY=modelops.dev/real-node

log() { echo "node.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

(( $# >= 2 )) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
cmd="$1" dir="$2"; shift 2
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
node="$dir/node"
pki="$dir/pki"
case "$dir/" in
  /var/lib/*|/var/log/*|/run/*|/var/run/*) die "DIR ($dir) must not be under /var/lib, /var/log or /run (the node's mount namespace replaces those)" ;;
esac

# ---------------------------------------------------------------- certificates

sign() {  # sign NAME SUBJECT EXTENSIONS... (inside pki/)
  local name="$1" subj="$2"; shift 2
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" "$@" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile "$name.ext" -out "$name.crt"
  rm -f "$name.csr" "$name.ext" ca.srl
}

do_certs() {
  [[ -s "$pki/ca.key" ]] || die "no cluster CA in $pki"
  (
    cd "$pki"
    exec 2>"$pki/node-openssl.log"
    sign node "/O=system:nodes/CN=system:node:$NAME" "extendedKeyUsage=clientAuth"
    sign kubelet-serving "/CN=$NAME" "extendedKeyUsage=serverAuth" "subjectAltName=IP:$NODE_IP,DNS:$NAME"
    sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  ) || { cat "$pki/node-openssl.log" >&2; die "node certificates"; }
  rm -f "$pki/node-openssl.log"
  mkdir -p "$node"
  cat >"$dir/egress-selector.yaml" <<EOF
# kube-apiserver's traffic to the cluster (webhooks called through their
# Service, kubelets, aggregated API servers, the service proxy) goes to
# test/e2e/node/netns-proxy.py, which dials inside the real node's network
# namespace (or on the host's loopback for loopback addresses).
apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: $node/egress.sock
EOF
}

# ---------------------------------------------------------------- processes

pid_ok() {  # pid_ok FILE: the pid in FILE if alive (not a zombie) and ours (DIR on its command line)
  local pid
  [[ -s "$1" ]] || return 1
  pid="$(<"$1")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir" || return 1
  echo "$pid"
}

holder_pid() { pid_ok "$node/holder.pid"; }

# ns_procs KIND INODE_FILE: pids of the processes in the namespace recorded
# in INODE_FILE. Only while the holder lives: a namespace's inode number is
# reused once the namespace is gone (e.g. by a container build's), so a
# recorded one says nothing after that.
ns_procs() {
  local want p
  [[ -s "$2" ]] || return 0
  want="$(<"$2")"
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/ns/$1" 2>/dev/null)" == "$want" ]] && echo "${p#/proc/}"
  done
  return 0
}

# cgroup_dirs: every cgroup directory of the node (deepest first).
cgroup_dirs() {
  local root
  [[ -s "$node/cgroup-root" ]] || return 0
  root="$(<"$node/cgroup-root")"
  for m in /sys/fs/cgroup /sys/fs/cgroup/*; do
    [[ -d "$m$root" ]] && find "$m$root" -depth -type d
  done
  return 0
}

kill_cgroup_procs() {
  local d p
  while read -r d; do
    [[ -r "$d/cgroup.procs" ]] || continue
    while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$d/cgroup.procs"
  done < <(cgroup_dirs)
}

# make_cgroup_root: the Pods' cgroup root, one per cluster, nested under the
# current memory cgroup (v1) or the current cgroup (v2), so that the Pods stay
# accounted where whoever started the cluster is.
make_cgroup_root() {
  local base m d rel
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    base="$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)"
  else
    base="$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)"
  fi
  base="${base%/}"
  rel="$base/modelservice-node-$(echo -n "$dir" | sha256sum | cut -c1-12)"
  echo "$rel" >"$node/cgroup-root"
  : >"$node/cgroup-made"
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    mkdir -p "/sys/fs/cgroup$rel"
    return
  fi
  for m in /sys/fs/cgroup/*; do
    [[ -d "$m" && "$(stat -fc %T "$m")" == cgroupfs ]] || continue
    [[ "$m" == */unified ]] && continue
    d="$m"
    local part
    for part in ${rel//\// }; do
      local parent="$d"
      d="$d/$part"
      if [[ ! -d "$d" ]]; then
        mkdir "$d"
        echo "$d" >>"$node/cgroup-made"
        if [[ -f "$d/cpuset.cpus" ]]; then
          cat "$parent/cpuset.cpus" >"$d/cpuset.cpus"
          cat "$parent/cpuset.mems" >"$d/cpuset.mems"
        fi
      fi
    done
  done
}

remove_cgroups() {
  local d i
  for (( i = 0; i < 3; i++ )); do
    kill_cgroup_procs
    while read -r d; do rmdir "$d" 2>/dev/null || true; done < <(cgroup_dirs)
    [[ -z "$(cgroup_dirs)" ]] && break
    sleep 0.5
  done
  # The parents this script made (deepest first), if empty.
  if [[ -s "$node/cgroup-made" ]]; then
    tac "$node/cgroup-made" | while read -r d; do rmdir "$d" 2>/dev/null || true; done
  fi
  rm -f "$node/cgroup-made"
}

# ---------------------------------------------------------------- configuration

write_config() {
  local api_port="$1" root
  root="$(<"$node/cgroup-root")"
  mkdir -p "$node/cni" "$node/host/var-lib/cni" "$node/host/var-lib/kubelet" "$node/host/var-log" \
    "$node/host/run" "$node/sysctl" "$node/containerd" "$node/kubelet"
  cat >"$node/containerd.toml" <<EOF
# containerd of the real node (test/e2e/node/node.sh): all state under $node.
version = 2
root = "$node/containerd/root"
state = "$node/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$node/containerd.sock"
[ttrpc]
  address = "$node/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$node/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Without CAP_SYS_RESOURCE (as in this sandbox) a sandbox asked for a lower
  # oom_score_adj than containerd's own fails with "can't get final child's
  # PID from pipe: EOF"; this clamps it to containerd's.
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  # Registries: DIR/node/certs.d/HOST:PORT/hosts.toml (node.sh registry).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$node/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$node/cni"
    max_conf_num = 1
EOF
  cat >"$node/cni/10-modelservice.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "modelservice-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$node/host/var-lib/cni/networks"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  local f v
  for f in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
           kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    v="${f#*=}"; f="${f%=*}"
    echo "$v" >"$node/sysctl/${f//\//.}"
  done
  local b64="base64 -w0"
  cat >"$node/kubelet.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    # netns-proxy.py's forward to kube-apiserver, inside the node's namespace;
    # kube-apiserver's certificate names "kubernetes".
    server: https://$NODE_IP:6443
    tls-server-name: kubernetes
    certificate-authority-data: $($b64 <"$pki/ca.crt")
users:
- name: node
  user:
    client-certificate-data: $($b64 <"$pki/node.crt")
    client-key-data: $($b64 <"$pki/node.key")
contexts:
- name: local
  context: {cluster: local, user: node}
current-context: local
EOF
  chmod 600 "$node/kubelet.kubeconfig"
  cat >"$node/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$node/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: $root
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
# How soon a changed Secret or ConfigMap reaches a mounted volume (the pods'
# periodic sync; default 1m).
syncFrequency: ${E2E_NODE_SYNC_FREQUENCY:-5s}
resolvConf: ""
maxPods: 40
serializeImagePulls: false
# Images are imported, never pulled: no garbage collection of them, and no
# eviction on the shared disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
registerWithTaints:
- {key: $TAINT_KEY, value: "true", effect: NoSchedule}
EOF
  printf '%s\n' \
    "--config=$node/kubelet.yaml" \
    "--kubeconfig=$node/kubelet.kubeconfig" \
    "--root-dir=$node/kubelet" \
    "--cert-dir=$node/kubelet/pki" \
    "--hostname-override=$NAME" \
    "--node-ip=$NODE_IP" \
    "--node-labels=$TAINT_KEY=true" \
    "--v=1" >"$node/kubelet.args"
  echo "$api_port" >"$node/api-port"
}

# ---------------------------------------------------------------- inside the namespaces

# The holder: runs in the node's new network and mount namespaces (unshare,
# private propagation), sets them up, runs containerd and the kubelet, and
# on SIGTERM stops both and every container.
do_inside() {
  ip link set lo up
  ip addr add "$NODE_IP/32" dev lo
  ip addr add "$API_VIP/32" dev lo
  mount --bind "$node/host/var-lib" /var/lib
  mount --bind "$node/host/var-log" /var/log
  mount --bind "$node/host/run" /run
  local f
  for f in "$node"/sysctl/*; do
    mount --bind "$f" "/proc/sys/$(basename "$f" | tr . /)"
  done
  readlink /proc/self/ns/net >"$node/netns-inode"
  readlink /proc/self/ns/mnt >"$node/mntns-inode"
  containerd --config "$node/containerd.toml" >>"$node/containerd.log" 2>&1 &
  local cpid=$! kpid=""
  echo "$cpid" >"$node/containerd.pid"
  stopping() {
    trap - TERM INT
    log "stopping the kubelet, the containers and containerd"
    [[ -n "$kpid" ]] && kill -TERM "$kpid" 2>/dev/null
    local i
    for (( i = 0; i < 100; i++ )); do kill -0 "$kpid" 2>/dev/null || break; sleep 0.1; done
    kill_cgroup_procs
    kill -TERM "$cpid" 2>/dev/null || true
    for (( i = 0; i < 100; i++ )); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
    local p
    for p in $(ns_procs mnt "$node/mntns-inode"); do [[ "$p" != $$ ]] && kill -KILL "$p" 2>/dev/null; done
    exit 0
  }
  trap stopping TERM INT
  local i
  for (( i = 0; i < 300; i++ )); do [[ -S "$node/containerd.sock" ]] && break; sleep 0.1; done
  [[ -S "$node/containerd.sock" ]] || { log "containerd did not start (see $node/containerd.log)"; exit 1; }
  mapfile -t kargs <"$node/kubelet.args"
  "$KUBELET" "${kargs[@]}" >>"$node/kubelet.log" 2>&1 &
  kpid=$!
  echo "$kpid" >"$node/kubelet.pid"
  while kill -0 "$cpid" 2>/dev/null && kill -0 "$kpid" 2>/dev/null; do wait -n || true; done
  log "containerd or the kubelet exited"
  stopping
}

# ---------------------------------------------------------------- commands

pause_image() {  # the pause image archive, built once per cache
  local cache="${MODELSERVICE_TOOLS_CACHE:-$HOME/.cache/modelservice-tools}/pause-$(sha256sum "$here/pause.c" "$here/oci-image.py" | sha256sum | cut -c1-12)"
  if [[ ! -s "$cache/pause.tar" ]]; then
    mkdir -p "$cache"
    gcc -static -Os -Wall -Wextra -Werror -o "$cache/pause" "$here/pause.c" || die "building pause.c (gcc -static)"
    python3 "$here/oci-image.py" --out "$cache/pause.tar" --name "$PAUSE_IMAGE" --entrypoint /pause \
      --user 65535:65535 "$cache/pause:/pause" >&2
  fi
  echo "$cache/pause.tar"
}

ctr_() { ctr --address "$node/containerd.sock" -n k8s.io "$@"; }

do_import() {
  local a
  for a in "$@"; do
    [[ -s "$a" ]] || die "no image archive $a"
    ctr_ images import --no-unpack=false "$a" >&2 || die "ctr images import $a"
  done
}

kc() { "$KUBECTL" --kubeconfig "$dir/kubeconfig" --request-timeout=20s "$@"; }

do_registry() {
  (( $# == 2 )) || die "registry DIR HOST:PORT CA"
  local hostport="$1" ca="$2" hp pid
  [[ $hostport =~ ^127\.0\.0\.1:[0-9]+$ ]] || die "registry: HOST:PORT must be 127.0.0.1:PORT (the host's loopback), not $hostport"
  [[ -s $ca ]] || die "registry: no CA file $ca"
  hp="$(holder_pid)" || die "the node is not running"
  mkdir -p "$node/certs.d/$hostport"
  cp "$ca" "$node/certs.d/$hostport/ca.crt"
  cat >"$node/certs.d/$hostport/hosts.toml" <<EOF
server = "https://$hostport"
[host."https://$hostport"]
  capabilities = ["pull", "resolve"]
  ca = "$node/certs.d/$hostport/ca.crt"
EOF
  if pid="$(pid_ok "$node/registry-proxy.pid")"; then kill -TERM "$pid"; tail --pid="$pid" -f /dev/null; fi
  # The unused CONNECT socket names DIR on the proxy's command line, by which
  # pid_ok and `stop` know the process as this node's.
  : >"$node/registry-proxy.log"
  setsid nohup python3 "$here/netns-proxy.py" --netns "/proc/$hp/ns/net" --connect "$node/registry-proxy.sock" \
    --forward "$hostport=$hostport" </dev/null >>"$node/registry-proxy.log" 2>&1 &
  pid=$!
  echo "$pid" >"$node/registry-proxy.pid"
  timeout 20 grep -q -m1 '^netns-proxy: forwarding' <(tail --pid="$pid" -n +1 -F "$node/registry-proxy.log" 2>/dev/null) \
    || { cat "$node/registry-proxy.log" >&2; die "the forward of $hostport into the node did not start"; }
  log "the node pulls from https://$hostport (CA $ca)"
}

do_start() {
  local api_port="$1" t0=$SECONDS i
  [[ -x "${KUBELET:-}" ]] || die "KUBELET is not set to the kubelet binary"
  holder_pid >/dev/null && die "a node is already running in $dir (stop it first)"
  local pause; pause="$(pause_image)"
  rm -rf "$node/containerd/state" "$node/kubelet" "$node/host"
  rm -f "$node"/*.pid "$node/egress.sock" "$node/containerd.sock" "$node"/*-inode
  mkdir -p "$node"
  make_cgroup_root
  write_config "$api_port"
  setsid nohup unshare --mount --net --propagation private -- env KUBELET="$KUBELET" \
    bash "$here/node.sh" _inside "$dir" </dev/null >>"$node/holder.log" 2>&1 &
  local holder=$!
  echo "$holder" >"$node/holder.pid"
  # Until the holder writes its namespace's inode it is still going through
  # setsid, nohup, unshare and env to bash, and while the kernel replaces a
  # program /proc/PID/cmdline reads empty (holder_pid would call it gone):
  # this shell's own child is watched by its pid instead, which cannot be
  # reused before this shell reaps it.
  for (( i = 0; i < 300; i++ )); do
    [[ -s "$node/mntns-inode" ]] && break
    if ! kill -0 "$holder" 2>/dev/null || [[ "$(awk '{print $3}' "/proc/$holder/stat" 2>/dev/null)" == Z ]]; then
      local st=0; wait "$holder" || st=$?
      die "the node's namespaces did not start: the holder exited with status $st (see $node/holder.log)"
    fi
    sleep 0.1
  done
  local hp; hp="$(holder_pid)" || die "the node's holder exited (see $node/holder.log)"
  setsid nohup python3 "$here/netns-proxy.py" --netns "/proc/$hp/ns/net" --connect "$node/egress.sock" \
    --forward "$API_VIP:443=127.0.0.1:$api_port" --forward "$NODE_IP:6443=127.0.0.1:$api_port" \
    </dev/null >>"$node/proxy.log" 2>&1 &
  echo $! >"$node/proxy.pid"
  for (( i = 0; i < 300; i++ )); do
    [[ -S "$node/containerd.sock" && -S "$node/egress.sock" ]] && break
    holder_pid >/dev/null || die "the node stopped (see $node/holder.log, $node/containerd.log)"
    sleep 0.1
  done
  [[ -S "$node/containerd.sock" ]] || die "containerd did not start (see $node/containerd.log)"
  [[ -S "$node/egress.sock" ]] || die "netns-proxy.py did not start (see $node/proxy.log)"
  do_import "$pause"
  local deadline=$(( SECONDS + ${E2E_READY_TIMEOUT:-60} ))
  until [[ "$(kc get node "$NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]; do
    holder_pid >/dev/null || die "the node stopped (see $node/kubelet.log, $node/holder.log)"
    (( SECONDS < deadline )) || { tail -n 20 "$node/kubelet.log" >&2; die "node $NAME not Ready after ${E2E_READY_TIMEOUT:-60}s (see $node/kubelet.log)"; }
    sleep 0.2
  done
  log "real node $NAME Ready at $NODE_IP ($(( SECONDS - t0 ))s; pods $POD_CIDR; taint $TAINT_KEY=true:NoSchedule)"
}

do_stop() {
  local hp pid i
  if hp="$(holder_pid)"; then
    kill -TERM "$hp" 2>/dev/null || true
    for (( i = 0; i < 300; i++ )); do holder_pid >/dev/null || break; sleep 0.1; done
  fi
  # Whatever is left (the holder killed hard): the containers (in the node's
  # cgroups) and containerd, its shims and the kubelet, known by the paths
  # under DIR/node on their command lines (never by a namespace's inode
  # number, which another namespace may have taken since).
  kill_cgroup_procs
  local p
  for p in /proc/[0-9]*; do
    pid="${p#/proc/}"
    [[ "$pid" == $$ ]] && continue
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$node/"; then
      case "$(readlink "$p/exe" 2>/dev/null)" in
        */containerd|*/containerd-shim*|*/kubelet|*/runc) kill -KILL "$pid" 2>/dev/null || true ;;
      esac
    fi
  done
  rm -f "$node/mntns-inode" "$node/netns-inode"
  local f
  for f in "$node/proxy.pid" "$node/registry-proxy.pid"; do
    if pid="$(pid_ok "$f")"; then
      kill -TERM "$pid" 2>/dev/null || true
      for (( i = 0; i < 50; i++ )); do pid_ok "$f" >/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$node/registry-proxy.sock"
  remove_cgroups
  rm -f "$node"/*.pid "$node/egress.sock" "$node/containerd.sock" "$node/containerd.sock.ttrpc"
}

do_status() {
  local rc=0 p n
  for n in holder containerd kubelet proxy; do
    if p="$(pid_ok "$node/$n.pid")"; then printf '  %-24s pid %-8s running\n' "node $n" "$p"
    else printf '  %-24s %-12s NOT RUNNING\n' "node $n" "-"; rc=1
    fi
  done
  return $rc
}

do_exec() {
  local hp
  hp="$(holder_pid)" || die "the node is not running in $dir"
  exec nsenter --target "$hp" --net --mount -- "$@"
}

case "$cmd" in
  certs) do_certs ;;
  start) (( $# == 1 )) || die "start DIR API_PORT"; do_start "$1" ;;
  stop) do_stop ;;
  status) do_status ;;
  exec) do_exec "$@" ;;
  import) do_import "$@" ;;
  registry) do_registry "$@" ;;
  _inside) do_inside ;;
  *) die "unknown command $cmd" ;;
esac
