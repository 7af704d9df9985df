#!/usr/bin/env python3
"""RSS of modelservice-webhook before, right after and after an idle period
following hostile load (issue 9): each run starts the binary, sends for
--load seconds from 8 threads a mix of large valid reviews (up to 2.5 MiB),
large denials, 300 distinct operation strings, malformed JSON and malformed
HTTP on fresh and kept-alive TLS connections, then idles --idle seconds.
Run once as linked (jemalloc with background_thread:true) and once with
MALLOC_CONF=background_thread:false (what the binary did before), and prints
a markdown table. Loopback only; bounded in time.

Usage: bench/rss.py --binary build/webhook/modelservice-webhook [--load 30] [--idle 60]
"""
import argparse
import json
import os
import random
import socket
import ssl
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def review(uid, op, spec, pad=0):
    obj = {"apiVersion": "modelops.dev/v1", "kind": "ModelService",
           "metadata": {"name": "x", "annotations": {"pad": "p" * pad}}, "spec": spec}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "operation": op, "namespace": "default", "name": "x",
                                   "kind": {"group": "modelops.dev", "version": "v1", "kind": "ModelService"},
                                   "object": obj}}).encode()


def request(body, path="/validate"):
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def load(port, ctx, seconds, seed, counter):
    rng = random.Random(seed)
    stop = time.time() + seconds
    while time.time() < stop:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    for _ in range(rng.randint(1, 20)):
                        kind = rng.randrange(5)
                        if kind == 0:
                            data = request(review("u", "CREATE", {"model": "m"}, pad=rng.randint(0, 2_500_000)))
                        elif kind == 1:
                            data = request(review("u", "UPDATE", {"model": "BAD MODEL", "replicas": 0,
                                                                  "port": 0}, pad=rng.randint(0, 1_000_000)))
                        elif kind == 2:
                            data = request(review("u", "OP-%d" % rng.randrange(300), {"model": "m"}))
                        elif kind == 3:
                            data = request(b"{\"apiVersion\": [" * rng.randint(1, 5000) + b"\xff")
                        else:
                            data = b"POST /validate HTTP/1.1\r\nHost: x\r\nX: \x00\r\n\r\n"
                        s.sendall(data)
                        got = b""
                        while b"\r\n\r\n" not in got:
                            chunk = s.recv(65536)
                            if not chunk:
                                break
                            got += chunk
                        head, _, rest = got.partition(b"\r\n\r\n")
                        length = 0
                        for line in head.split(b"\r\n"):
                            if line.lower().startswith(b"content-length:"):
                                length = int(line.split(b":")[1])
                        while len(rest) < length:
                            chunk = s.recv(65536)
                            if not chunk:
                                break
                            rest += chunk
                        counter[0] += 1
                        if b"Connection: close" in head or not got:
                            break
        except OSError:
            pass


def run(binary, env_conf, load_s, idle_s):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["bash", os.path.join(ROOT, "certs-scripts/gen-certs.sh"), "--out", d, "--ip", "127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        env = dict(os.environ)
        if env_conf:
            env["MALLOC_CONF"] = env_conf
        p = subprocess.Popen([binary, "--port", str(port), "--bind-address", "127.0.0.1", "--cert-dir", d,
                              "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
                              "--log-level", "error"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            time.sleep(0.5)
            before = rss_mib(p.pid)
            counter = [0]
            threads = [threading.Thread(target=load, args=(port, ctx, load_s, i, counter)) for i in range(8)]
            for t in threads:
                t.start()
            peak = before
            while any(t.is_alive() for t in threads):
                peak = max(peak, rss_mib(p.pid))
                time.sleep(0.2)
            after = rss_mib(p.pid)
            time.sleep(idle_s)
            idle = rss_mib(p.pid)
            return before, peak, after, idle, counter[0]
        finally:
            p.terminate()
            p.wait(timeout=15)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--binary", required=True)
    a.add_argument("--load", type=float, default=30)
    a.add_argument("--idle", type=float, default=60)
    args = a.parse_args()
    print("| malloc | RSS before (MiB) | peak | right after the load | after %ds idle | requests |" % args.idle)
    print("|---|---|---|---|---|---|")
    for name, conf in (("jemalloc, background_thread:false (before)", "background_thread:false"),
                       ("jemalloc, background_thread:true (the binary's malloc_conf)", "")):
        b, pk, af, idle, n = run(args.binary, conf, args.load, args.idle)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %d |" % (name, b, pk, af, idle, n), flush=True)


if __name__ == "__main__":
    main()
