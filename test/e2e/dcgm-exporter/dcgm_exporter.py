#!/usr/bin/env python3
"""A stand-in for NVIDIA's DCGM exporter, for the GPU utilization e2e case.

Serves, on GET /metrics (Prometheus text format 0.0.4), the DCGM exporter's
GPU utilization gauge with the labels its Kubernetes mode adds (the pod
using the GPU, its namespace and container):

    # TYPE DCGM_FI_DEV_GPU_UTIL gauge
    DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-...",device="nvidia0",modelName="Fake GPU",Hostname="NODE",container="model",namespace="NS",pod="POD"} V

one line per (namespace, pod, gpu) that was set. Values are set with
    POST /set?namespace=NS&pod=POD&value=V[&gpu=N][&node=NODE]
and removed with
    POST /delete?namespace=NS&pod=POD
GET /values returns the current table as JSON. Standard library only.

With --kubernetes it sets the values itself, as the real exporter does on a
GPU node: every 2 s it lists the Running pods of --node that request
nvidia.com/gpu (the real exporter asks the kubelet's pod-resources socket
which pod holds which GPU; the stand-in asks the API server), gives each of
its GPUs a series labelled with the pod, and every 100 ms reads the pod's
--busy-metric gauge (requests in progress, on the pod's port named http):
a GPU's utilization is the share of the last second's samples in which its
pod was busy (gauge >= 1), in percent. So the load the pods really serve is
what Prometheus sees.

Usage: dcgm_exporter.py [--port 9400] [--bind 127.0.0.1]
         [--kubernetes API_SERVER --token-file F --ca-file F --node NODE
          [--busy-metric modelservice_queue_length]]
"""
import argparse
import collections
import hashlib
import json
import re
import ssl
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

_lock = threading.Lock()
_values = {}  # (namespace, pod, gpu) -> (value, node)


def _escape(v):
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _uuid(ns, pod, gpu):
    h = hashlib.sha256(("%s/%s/%s" % (ns, pod, gpu)).encode()).hexdigest()
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _send(self, code, body, ctype="text/plain; charset=utf-8"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/metrics":
            lines = [
                "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
                "# TYPE DCGM_FI_DEV_GPU_UTIL gauge",
            ]
            with _lock:
                for (ns, pod, gpu), (v, node) in sorted(_values.items()):
                    lines.append(
                        'DCGM_FI_DEV_GPU_UTIL{gpu="%s",UUID="%s",device="nvidia%s",modelName="Fake GPU",'
                        'Hostname="%s",container="model",namespace="%s",pod="%s"} %s'
                        % (gpu, _uuid(ns, pod, gpu), gpu, _escape(node), _escape(ns), _escape(pod), repr(float(v))))
            self._send(200, "\n".join(lines) + "\n", "text/plain; version=0.0.4; charset=utf-8")
        elif path == "/values":
            with _lock:
                table = [{"namespace": ns, "pod": pod, "gpu": gpu, "value": v}
                         for (ns, pod, gpu), (v, _) in sorted(_values.items())]
            self._send(200, json.dumps(table) + "\n", "application/json")
        elif path in ("/healthz", "/"):
            self._send(200, "ok\n")
        else:
            self._send(404, "not found\n")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        url = urlparse(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        ns, pod = q.get("namespace", ""), q.get("pod", "")
        if not ns or not pod:
            self._send(400, "namespace and pod are required\n")
            return
        if url.path == "/set":
            try:
                v = float(q.get("value", ""))
                gpu = int(q.get("gpu", "0"))
            except ValueError:
                self._send(400, "value must be a number, gpu an integer\n")
                return
            with _lock:
                _values[(ns, pod, gpu)] = (v, q.get("node", "gpu-node"))
            self._send(200, "ok\n")
        elif url.path == "/delete":
            with _lock:
                for k in [k for k in _values if k[0] == ns and k[1] == pod]:
                    del _values[k]
            self._send(200, "ok\n")
        else:
            self._send(404, "not found\n")

    def log_message(self, fmt, *args):  # quiet: one line per change only
        if self.command == "POST":
            super().log_message(fmt, *args)


def _gpu_pods(a, ctx):
    """{(namespace, pod): (gpus, "ip:port")} of the node's Running pods that request GPUs."""
    url = "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s,status.phase%%3DRunning" % (a.kubernetes, a.node)
    token = open(a.token_file, encoding="utf-8").read().strip()
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
        items = json.load(r)["items"]
    out = {}
    for p in items:
        gpus, port = 0, None
        for c in p["spec"].get("containers", []):
            gpus += int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", "0"))
            for cp in c.get("ports", []):
                if cp.get("name") == "http":
                    port = cp["containerPort"]
        ip = p.get("status", {}).get("podIP")
        if gpus and port and ip and not p["metadata"].get("deletionTimestamp"):
            out[(p["metadata"]["namespace"], p["metadata"]["name"])] = (gpus, "%s:%d" % (ip, port))
    return out


def _busy(addr, metric):
    try:
        with urllib.request.urlopen("http://%s/metrics" % addr, timeout=0.5) as r:
            text = r.read().decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r"^%s(?:\{[^}]*\})? (\S+)$" % re.escape(metric), text, re.M)
    return None if m is None else float(m.group(1)) >= 1


def _watch_node(a):
    ctx = ssl.create_default_context(cafile=a.ca_file)
    pods, samples, listed = {}, {}, 0.0
    while True:
        now = time.monotonic()
        if now - listed >= 2:
            try:
                pods = _gpu_pods(a, ctx)
            except (OSError, ValueError, KeyError) as e:
                print("dcgm-exporter: listing the node's pods: %s" % e, flush=True)
            listed = now
        for key in list(samples):
            if key not in pods:
                del samples[key]
        for key, (gpus, addr) in pods.items():
            b = _busy(addr, a.busy_metric)
            if b is None:
                continue
            window = samples.setdefault(key, collections.deque(maxlen=10))
            window.append(1 if b else 0)
        with _lock:
            _values.clear()
            for (ns, pod), window in samples.items():
                util = round(100.0 * sum(window) / len(window))
                for gpu in range(pods[(ns, pod)][0]):
                    _values[(ns, pod, gpu)] = (util, a.node)
        time.sleep(max(0.0, 0.1 - (time.monotonic() - now)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=9400)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--kubernetes", metavar="API_SERVER")
    p.add_argument("--token-file")
    p.add_argument("--ca-file")
    p.add_argument("--node")
    p.add_argument("--busy-metric", default="modelservice_queue_length")
    a = p.parse_args()
    if a.kubernetes:
        if not (a.token_file and a.ca_file and a.node):
            p.error("--kubernetes needs --token-file, --ca-file and --node")
        threading.Thread(target=_watch_node, args=(a,), daemon=True).start()
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    print("dcgm-exporter listening on %s:%d" % (a.bind, a.port), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
