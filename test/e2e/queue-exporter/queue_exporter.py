#!/usr/bin/env python3
"""A stand-in for a model server's queue metrics, for the autoscaling e2e case.

Serves, on GET /metrics (Prometheus text format 0.0.4):

    # TYPE modelservice_queue_length gauge
    modelservice_queue_length{namespace="NS",modelservice="NAME"} V

one line per (namespace, modelservice) that was set. Values are set with
    POST /set?namespace=NS&modelservice=NAME&value=V
and removed with
    POST /delete?namespace=NS&modelservice=NAME
GET /values returns the current table as JSON. Standard library only.

Usage: queue_exporter.py [--port 9100] [--bind 127.0.0.1] [--state FILE]
(--state: the table is also loaded from / saved to FILE as JSON, so that a
restarted exporter keeps its values.)
"""
import argparse
import json
import math
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

_lock = threading.Lock()
_values = {}  # (namespace, modelservice) -> float
_state_file = None


def _escape(v):
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if v != int(v) else str(int(v))


def _save():
    if _state_file:
        tmp = _state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump([[ns, ms, v] for (ns, ms), v in _values.items()], f)
        os.replace(tmp, _state_file)


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
                "# HELP modelservice_queue_length Requests waiting in the model server's queue.",
                "# TYPE modelservice_queue_length gauge",
            ]
            with _lock:
                for (ns, ms), v in sorted(_values.items()):
                    lines.append('modelservice_queue_length{namespace="%s",modelservice="%s"} %s'
                                 % (_escape(ns), _escape(ms), _fmt(v)))
            self._send(200, "\n".join(lines) + "\n", "text/plain; version=0.0.4; charset=utf-8")
        elif path == "/values":
            with _lock:
                table = [{"namespace": ns, "modelservice": ms, "value": v}
                         for (ns, ms), v in sorted(_values.items())]
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
        ns, ms = q.get("namespace", ""), q.get("modelservice", "")
        if not ns or not ms:
            self._send(400, "namespace and modelservice are required\n")
            return
        if url.path == "/set":
            try:
                v = float(q.get("value", ""))
            except ValueError:
                self._send(400, "value must be a number\n")
                return
            with _lock:
                _values[(ns, ms)] = v
                _save()
            self._send(200, "ok\n")
        elif url.path == "/delete":
            with _lock:
                _values.pop((ns, ms), None)
                _save()
            self._send(200, "ok\n")
        else:
            self._send(404, "not found\n")

    def log_message(self, fmt, *args):  # quiet: one line per change only
        if self.command == "POST":
            super().log_message(fmt, *args)


def main():
    global _state_file
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=9100)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--state", default=None)
    a = p.parse_args()
    _state_file = a.state
    if _state_file and os.path.exists(_state_file):
        with open(_state_file) as f:
            for ns, ms, v in json.load(f):
                _values[(ns, ms)] = float(v)
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    print("queue-exporter listening on %s:%d" % (a.bind, a.port), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
