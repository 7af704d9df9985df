#!/usr/bin/env python3
"""No tenant pod can lock the API server out of the webhook (issue 41).

For each binary, for each attack below, starts modelservice-webhook at its
default limits (certificates from certs-scripts/gen-certs.sh) on loopback,
runs the attack from hostile loopback addresses (127.0.0.2 and up) and,
once it holds what it can, the API server from 127.0.0.9: a valid review
every 5 ms on a kept-alive connection replaced every 20 reviews, for
--seconds. The attacks renew what the server takes from them, as a client
in a pod would:

  idle-2       500 idle TLS connections from each of two addresses
  idle-6       300 idle TLS connections from each of six addresses (the
               total of 1,000 is reached: who gives way)
  no-hello     with --client-ca: 500 plain TCP connections from each of two
               addresses that never send a ClientHello
  bodies       6 connections from each of two addresses announcing a
               2,796,202-byte body (16 MiB per address) and sending nothing
  unread       8 clients sending the review with 110,000 invalid podLabels
               keys (1.5 MB) and never reading the answers
  probes       2,000 idle connections from one address to the probe port,
               while the kubelet (127.0.0.9) GETs /healthz every 5 ms

Prints one markdown row per binary and attack: the API server's reviews
(or probes) answered, refused and failed, their p50/p99 latency, and the
webhook's peak RSS (VmHWM).

Usage: bench/lockout.py --binary label=build/webhook/modelservice-webhook [--binary ...] [--seconds 10]
       [--attack NAME ...]
Loopback only (127.0.0.0/8 is loopback on Linux); bounded in time.
"""
import argparse
import json
import os
import resource
import select
import socket
import ssl
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_SERVER = "127.0.0.9"


def status_mib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def review(uid, labels=0):
    spec = {"model": "bert-base-uncased", "replicas": 2}
    if labels:
        spec["podLabels"] = {"-bad-%d" % i: "v" for i in range(labels)}
    obj = {"apiVersion": "modelops.dev/v1", "kind": "ModelService",
           "metadata": {"name": "x", "namespace": "default"}, "spec": spec}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "operation": "CREATE", "namespace": "default", "name": "x",
                                   "kind": {"group": "modelops.dev", "version": "v1", "kind": "ModelService"},
                                   "object": obj}}).encode()


def post(body, length=None):
    return (b"POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body) if length is None else length).encode() + b"\r\n\r\n" + body)


def tls(ctx, port, source, timeout=10):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    try:
        return ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    except Exception:
        raw.close()
        raise


def read_answer(s):
    """(status, head, body) of one answer, or (0, b"", b"") when the connection ended first."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(65536)
        if not chunk:
            return 0, b"", b""
        got += chunk
    h, _, rest = got.partition(b"\r\n\r\n")
    length = 0
    for line in h.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(h.split(b" ")[1]), h, rest


def alive(s):
    """Whether the server still holds `s` open (no FIN or reset has come)."""
    poller = select.poll()
    poller.register(s.fileno(), select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    return not poller.poll(0)


class Attack:
    """Holds `per_source` connections from each source, reopening those the server closes."""

    def __init__(self, opener, sources, per_source):
        self.opener, self.sources, self.per_source = opener, sources, per_source
        self.stop = threading.Event()
        self.held = {src: [] for src in sources}
        self.threads = [threading.Thread(target=self.keep, args=(src,), daemon=True) for src in sources]

    def keep(self, src):
        conns = self.held[src]
        while not self.stop.is_set():
            conns[:] = [c for c in conns if alive(c) or c.close()]
            while len(conns) < self.per_source and not self.stop.is_set():
                try:
                    conns.append(self.opener(src))
                except (OSError, ssl.SSLError, ValueError):
                    break
            self.stop.wait(0.2)

    def start(self):
        for t in self.threads:
            t.start()

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        for conns in self.held.values():
            for c in conns:
                c.close()


def unread_flood(port, ctx, stop):
    body = post(review("amplify", labels=110000))
    clients = []
    while not stop.is_set():
        clients = [c for c in clients if alive(c) or c.close()]
        while len(clients) < 8:
            try:
                c = tls(ctx, port, "127.0.0.2")
                c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                c.settimeout(2)
                c.sendall(body * 4)  # never read
                clients.append(c)
            except (OSError, ssl.SSLError):
                break
        stop.wait(0.2)
    for c in clients:
        c.close()


def api_server(ctx, port, seconds, result, probe_port=0):
    body = review("uid-1")
    request = post(body) if not probe_port else b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    ok, refused, failed, latencies = 0, 0, 0, []
    s = None
    stop = time.time() + seconds
    n = 0
    while time.time() < stop:
        time.sleep(0.005)
        n += 1
        if n % 20 == 0 and s is not None:
            s.close()
            s = None
        start = time.monotonic()
        try:
            if s is None:
                s = (socket.create_connection(("127.0.0.1", probe_port), timeout=10, source_address=(API_SERVER, 0))
                     if probe_port else tls(ctx, port, API_SERVER))
            s.sendall(request)
            status, h, answer = read_answer(s)
            if status == 200 and (probe_port or b'"allowed":true' in answer):
                ok += 1
                latencies.append((time.monotonic() - start) * 1000.0)
            elif status:
                refused += 1
            else:
                failed += 1
            if not status or b"Connection: close" in h:
                s.close()
                s = None
        except (OSError, ssl.SSLError):
            failed += 1
            if s is not None:
                s.close()
            s = None
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] if latencies else float("nan")
    result.update(ok=ok, refused=refused, failed=failed, p50=pct(0.5), p99=pct(0.99))


def run(binary, attack, seconds):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["bash", os.path.join(ROOT, "certs-scripts/gen-certs.sh"), "--out", d, "--ip", "127.0.0.1",
                        "--client", "kube-apiserver"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ports = []
        for _ in range(2):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                ports.append(probe.getsockname()[1])
        port, probe_port = ports
        args = [binary, "--port", str(port), "--bind-address", "127.0.0.1", "--cert-dir", d,
                "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:%d" % probe_port,
                "--log-level", "error"]
        ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
        if attack == "no-hello":
            args += ["--client-ca", os.path.join(d, "ca.crt")]
            ctx.load_cert_chain(os.path.join(d, "kube-apiserver.crt"), os.path.join(d, "kube-apiserver.key"))
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        result, stop = {}, threading.Event()
        held = None
        flood = None
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", probe_port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            hostile = ["127.0.0.%d" % i for i in range(2, 8)]
            plain = lambda port_: (lambda src: socket.create_connection(("127.0.0.1", port_), timeout=5,
                                                                        source_address=(src, 0)))
            if attack == "idle-2":
                held = Attack(lambda src: tls(ctx, port, src, 5), hostile[:2], 500)
            elif attack == "idle-6":
                held = Attack(lambda src: tls(ctx, port, src, 5), hostile[:6], 300)
            elif attack == "no-hello":
                held = Attack(plain(port), hostile[:2], 500)
            elif attack == "bodies":
                def announce(src):
                    c = tls(ctx, port, src, 5)
                    c.sendall(post(b"", length=2796202))
                    return c
                held = Attack(announce, hostile[:2], 6)
            elif attack == "probes":
                held = Attack(plain(probe_port), hostile[:1], 2000)
            if held:
                held.start()
            if attack == "unread":
                flood = threading.Thread(target=unread_flood, args=(port, ctx, stop), daemon=True)
                flood.start()
            time.sleep(3)  # the attack holds what it can
            api_server(ctx, port, seconds, result, probe_port if attack == "probes" else 0)
            peak = status_mib(p.pid, "VmHWM")
        finally:
            stop.set()
            if held:
                held.end()
            if flood:
                flood.join()
            p.terminate()
            p.wait(timeout=30)
    return peak, result


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--binary", action="append", required=True, help="label=path; repeatable")
    a.add_argument("--seconds", type=float, default=10)
    a.add_argument("--attack", action="append",
                   choices=["idle-2", "idle-6", "no-hello", "bodies", "unread", "probes"])
    args = a.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    attacks = args.attack or ["idle-2", "idle-6", "no-hello", "bodies", "unread", "probes"]
    print("| attack | binary | answered | refused | failed | p50 ms | p99 ms | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for attack in attacks:
        for b in args.binary:
            label, _, path = b.rpartition("=")
            peak, r = run(path, attack, args.seconds)
            print("| %s | %s | %d | %d | %d | %.1f | %.1f | %.1f |" % (
                attack, label or path, r["ok"], r["refused"], r["failed"], r["p50"], r["p99"], peak), flush=True)


if __name__ == "__main__":
    main()
