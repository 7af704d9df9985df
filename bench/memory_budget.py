#!/usr/bin/env python3
"""The webhook's memory budget under hostile load (issue 23, item 2).

Starts modelservice-webhook (certificates from certs-scripts/gen-certs.sh)
on a free loopback port and, all at once:

- 100 slow uploads from 127.0.0.3: each sends the head of a 3 MiB review
  and 3 MiB - 1 bytes of its body, then stalls until the server answers or
  closes (the read timeout), then starts again (after Retry-After when it
  got a 503);
- 2,000 idle TLS connections from 127.0.0.2, opened and held;
- the API server from 127.0.0.1: valid reviews, one every 5 ms, on a
  kept-alive connection replaced by a new one every 20 reviews, for --seconds.

Prints one markdown row per binary: the peak RSS (VmHWM) and the RSS at the
end, the connections the server held (its descriptors), the slow uploads'
answers, and the reviews answered, refused and failed with their p50/p99.

Usage: bench/memory_budget.py --binary label=build/webhook/modelservice-webhook [--binary ...] [--seconds 30]
Loopback only (127.0.0.2 and .3 are loopback addresses on Linux); bounded in time.
"""
import argparse
import json
import os
import resource
import socket
import ssl
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def status_mib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def review(uid, pad=0):
    obj = {"apiVersion": "modelops.dev/v1", "kind": "ModelService",
           "metadata": {"name": "x", "namespace": "default", "annotations": {"pad": "p" * pad}},
           "spec": {"model": "bert-base-uncased", "replicas": 2}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "operation": "CREATE", "namespace": "default", "name": "x",
                                   "kind": {"group": "modelops.dev", "version": "v1", "kind": "ModelService"},
                                   "object": obj}}).encode()


def head(length):
    return (b"POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(length).encode() + b"\r\n\r\n")


def connect(ctx, port, source, timeout=10):
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


def slow_upload(ctx, port, stop, tally, lock):
    body = b"x" * ((3 << 20) - 1)
    while not stop.is_set():
        outcome = "error"
        try:
            with connect(ctx, port, "127.0.0.3") as s:
                s.sendall(head(3 << 20))
                try:
                    s.settimeout(30)
                    s.sendall(body)  # the last byte never comes
                except OSError:
                    pass
                status, _, _ = read_answer(s)
                outcome = str(status) if status else "closed"
        except (OSError, ssl.SSLError):
            pass
        with lock:
            tally[outcome] = tally.get(outcome, 0) + 1
        stop.wait(1.0)  # Retry-After: 1, and no busy loop after a refusal


def flood(ctx, port, n, held, stop):
    for _ in range(n):
        if stop.is_set():
            return
        try:
            held.append(connect(ctx, port, "127.0.0.2", timeout=5))
        except (OSError, ssl.SSLError):
            pass


def api_server(ctx, port, seconds, result):
    body = review("uid-1")
    request = head(len(body)) + body
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
                s = connect(ctx, port, "127.0.0.1")
            s.sendall(request)
            status, h, answer = read_answer(s)
            if status == 200 and b'"allowed":true' in answer:
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
            time.sleep(0.1)
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] if latencies else float("nan")
    result.update(ok=ok, refused=refused, failed=failed, p50=pct(0.5), p99=pct(0.99))


def run(binary, seconds, extra):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["bash", os.path.join(ROOT, "certs-scripts/gen-certs.sh"), "--out", d, "--ip", "127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        p = subprocess.Popen([binary, "--port", str(port), "--bind-address", "0.0.0.0", "--cert-dir", d,
                              "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
                              "--log-level", "error"] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stop = threading.Event()
        held, tally, lock, result = [], {}, threading.Lock(), {}
        try:
            ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            time.sleep(0.5)
            before = status_mib(p.pid, "VmRSS")
            threads = [threading.Thread(target=slow_upload, args=(ctx, port, stop, tally, lock), daemon=True)
                       for _ in range(100)]
            threads += [threading.Thread(target=flood, args=(ctx, port, 500, held, stop), daemon=True)
                        for _ in range(4)]
            for t in threads:
                t.start()
            time.sleep(2)
            api = threading.Thread(target=api_server, args=(ctx, port, seconds, result))
            api.start()
            conns = 0
            while api.is_alive():
                conns = max(conns, len(os.listdir("/proc/%d/fd" % p.pid)))
                time.sleep(0.5)
            end = status_mib(p.pid, "VmRSS")
            peak = status_mib(p.pid, "VmHWM")
            stop.set()
        finally:
            for s in held:
                s.close()
            p.terminate()
            p.wait(timeout=30)
    return before, peak, end, conns, len(held), tally, result


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--binary", action="append", required=True, help="label=path; repeatable")
    a.add_argument("--seconds", type=float, default=30)
    a.add_argument("--extra", default="", help="more flags for every binary, space-separated")
    args = a.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("| binary | RSS before MiB | peak RSS (VmHWM) | RSS at the end | server descriptors (max) "
          "| flood connections the client held | slow uploads' answers | reviews answered | refused | failed "
          "| p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b in args.binary:
        label, _, path = b.rpartition("=")
        before, peak, end, conns, held, tally, r = run(path, args.seconds, args.extra.split())
        answers = ", ".join("%s: %d" % kv for kv in sorted(tally.items()))
        print("| %s | %.1f | %.1f | %.1f | %d | %d | %s | %d | %d | %d | %.1f | %.1f |" % (
            label or path, before, peak, end, conns, held, answers, r["ok"], r["refused"], r["failed"], r["p50"],
            r["p99"]), flush=True)


if __name__ == "__main__":
    main()
