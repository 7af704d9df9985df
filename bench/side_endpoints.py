#!/usr/bin/env python3
"""Probes and /metrics under hostile clients (issue 23, item 1).

Starts modelservice-webhook with an empty --cert-dir (it serves /metrics and
the probes while it waits for its certificate: no TLS needed) on free
loopback ports, then:

1. holds --slow connections (1,000) to the probe port, each trickling the
   bytes of a request head it never finishes (one byte per client about
   every 2 s, reconnecting when the server closes it), while a prober sends
   GET /healthz on a new connection every 50 ms for --seconds, with the
   kubelet's 2 s timeout; prints p50/p99/max latency and timeouts;
2. sends a 64 MiB request line without a newline to the probe port, and a
   64 MiB chunked POST to /metrics, each until the server stops reading,
   and prints the RSS before and the peak RSS (VmHWM) after each.

Usage: bench/side_endpoints.py --binary build/webhook/modelservice-webhook [--slow 1000] [--seconds 30]
Prints a markdown table row per binary. Loopback only; bounded in time.
"""
import argparse
import os
import resource
import selectors
import socket
import subprocess
import tempfile
import threading
import time


def status_mib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, deadline=30):
    stop = time.time() + deadline
    while time.time() < stop:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the probe port never opened")


class SlowClients:
    """n connections trickling a request head, one selector thread."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000

    def __init__(self, port, n):
        self.port, self.n = port, n
        self.sel = selectors.DefaultSelector()
        self.conns = {}  # socket -> bytes sent
        self.reconnects = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", self.port))
        self.conns[s] = 0
        self.sel.register(s, selectors.EVENT_READ)

    def drop(self, s):
        self.sel.unregister(s)
        s.close()
        del self.conns[s]
        self.reconnects += 1

    def run(self):
        for _ in range(self.n):
            self.connect()
        turn = 0
        while not self.stop.is_set():
            # Closed by the server (408, or refused): reconnect.
            for key, _ in self.sel.select(timeout=0.02):
                try:
                    if key.fileobj.recv(4096):
                        continue
                except OSError:
                    pass
                self.drop(key.fileobj)
                self.connect()
            # One byte on 1% of the clients per 20 ms: each about every 2 s.
            socks = list(self.conns)
            for s in socks[turn % 100::100]:
                try:
                    sent = self.conns[s]
                    s.send(self.HEAD[sent:sent + 1])
                    self.conns[s] = sent + 1
                except OSError:
                    pass
            turn += 1
        for s in list(self.conns):
            s.close()


def probe(port, timeout=2.0):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        if not data.startswith(b"HTTP/1.1 200"):
            return None
    except OSError:
        return None
    return (time.monotonic() - start) * 1000.0


def flood(port, head, total=64 << 20):
    """Sends `head` then filler until the server stops reading; bytes sent."""
    sent = 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(head)
            chunk = b"a" * 65536 if b"chunked" not in head else (b"10000\r\n" + b"a" * 65536 + b"\r\n")
            while sent < total:
                s.sendall(chunk)
                sent += len(chunk)
    except OSError:
        pass
    return sent


def run(binary, slow, seconds):
    metrics, probes = free_port(), free_port()
    with tempfile.TemporaryDirectory() as certs:
        proc = subprocess.Popen([binary, "--cert-dir", certs, "--metrics-bind-address", "127.0.0.1:%d" % metrics,
                                 "--health-probe-bind-address", "127.0.0.1:%d" % probes, "--log-level", "error"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(probes)
            time.sleep(1)
            rss0 = status_mib(proc.pid, "VmRSS")
            clients = SlowClients(probes, slow)
            clients.thread.start()
            time.sleep(3)  # all connected
            held = 0  # the server's open descriptors, at most, while probing
            latencies, failures = [], 0
            stop = time.time() + seconds
            while time.time() < stop:
                held = max(held, len(os.listdir("/proc/%d/fd" % proc.pid)))
                ms = probe(probes)
                if ms is None:
                    failures += 1
                else:
                    latencies.append(ms)
                time.sleep(0.05)
            clients.stop.set()
            clients.thread.join()
            rss_slow = status_mib(proc.pid, "VmHWM")
            line_sent = flood(probes, b"GET /")
            rss_line = status_mib(proc.pid, "VmHWM")
            chunked_sent = flood(metrics, b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            rss_chunked = status_mib(proc.pid, "VmHWM")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] if latencies else float("nan")
    return {"held": held, "probes": len(latencies) + failures, "failures": failures, "p50": pct(0.5),
            "p99": pct(0.99), "max": latencies[-1] if latencies else float("nan"), "reconnects": clients.reconnects,
            "rss0": rss0, "rss_slow": rss_slow, "line_sent": line_sent / 1048576.0, "rss_line": rss_line,
            "chunked_sent": chunked_sent / 1048576.0, "rss_chunked": rss_chunked}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", action="append", required=True, help="label=path or path; repeatable")
    ap.add_argument("--slow", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=30)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("| binary | server descriptors (max) | probes | timed out (2 s) | p50 ms | p99 ms | max ms | slow reconnects "
          "| RSS before MiB | peak after slow clients | 64 MiB line: MiB sent, peak RSS | 64 MiB chunked: MiB sent, peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b in args.binary:
        label, _, path = b.rpartition("=")
        r = run(path, args.slow, args.seconds)
        print("| %s | %d | %d | %d | %.1f | %.1f | %.1f | %d | %.1f | %.1f | %.1f, %.1f | %.1f, %.1f |" % (
            label or path, r["held"], r["probes"], r["failures"], r["p50"], r["p99"], r["max"], r["reconnects"],
            r["rss0"], r["rss_slow"], r["line_sent"], r["rss_line"], r["chunked_sent"], r["rss_chunked"]), flush=True)


if __name__ == "__main__":
    main()
