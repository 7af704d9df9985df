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

Usage: dcgm_exporter.py [--port 9400] [--bind 127.0.0.1]
"""
import argparse
import hashlib
import json
import threading
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=9400)
    p.add_argument("--bind", default="127.0.0.1")
    a = p.parse_args()
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    print("dcgm-exporter listening on %s:%d" % (a.bind, a.port), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
