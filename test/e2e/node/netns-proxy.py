#!/usr/bin/env python3
"""netns-proxy.py - the only links between the real node's network namespace
and the control plane on the host's loopback, so that no address is ever
assigned to the machine's own interfaces and no route is added on the host.

  --connect UDS   an HTTP CONNECT proxy on a Unix socket: kube-apiserver's
                  egress selector sends its "cluster" traffic there (calls to
                  webhooks through their Service, to kubelets, to aggregated
                  API servers, the service proxy). A CONNECT to a loopback
                  address is dialled on the host's loopback (where the host
                  processes of the e2e suite listen), any other address inside
                  the node's network namespace (pod IPs, the node IP).
  --forward LISTEN=UPSTREAM
                  listen on LISTEN (IP:PORT) inside the node's network
                  namespace and forward each connection to UPSTREAM (IP:PORT)
                  on the host: the kubelet's and the pods' way to
                  kube-apiserver (e.g. 10.0.0.1:443, the ClusterIP of the
                  `kubernetes` Service, held as an address of the namespace).

Usage: netns-proxy.py --netns /proc/PID/ns/net [--connect UDS] [--forward L=U]...
The namespace is entered per socket with setns(2) on the thread that creates
it (a socket stays in the namespace it was made in). Runs until SIGTERM.
"""
import argparse
import ctypes
import ipaddress
import os
import signal
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def log(msg):
    print(f"netns-proxy: {msg}", file=sys.stderr, flush=True)


class Namespaces:
    def __init__(self, netns_path):
        self.node = os.open(netns_path, os.O_RDONLY)
        self.host = os.open("/proc/self/ns/net", os.O_RDONLY)

    def _setns(self, fd):
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def socket_in_node(self, family=socket.AF_INET):
        """A TCP socket of the node's namespace (made on this thread)."""
        self._setns(self.node)
        try:
            return socket.socket(family, socket.SOCK_STREAM)
        finally:
            self._setns(self.host)


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass


def splice(a, b):
    t = threading.Thread(target=pump, args=(b, a), daemon=True)
    t.start()
    pump(a, b)
    t.join()
    a.close()
    b.close()


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_connect(ns, conn):
    """One CONNECT request from kube-apiserver."""
    try:
        conn.settimeout(10)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            if not chunk or len(head) > 16384:
                conn.close()
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split()
        if len(parts) != 3 or parts[0] != "CONNECT":
            conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            conn.close()
            return
        host, _, port = parts[1].rpartition(":")
        host = host.strip("[]")
        try:
            if is_loopback(host):
                up = socket.create_connection((host, int(port)), timeout=5)
            else:
                up = ns.socket_in_node(socket.AF_INET6 if ":" in host else socket.AF_INET)
                up.settimeout(5)
                up.connect((host, int(port)))
        except (OSError, ValueError) as e:
            log(f"CONNECT {parts[1]}: {e}")
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
            conn.close()
            return
        up.settimeout(None)
        conn.settimeout(None)
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        rest = head.split(b"\r\n\r\n", 1)[1]
        if rest:
            up.sendall(rest)
        splice(conn, up)
    except OSError as e:
        log(f"CONNECT connection: {e}")
        conn.close()


def serve_forward(conn, upstream):
    try:
        up = socket.create_connection(upstream, timeout=5)
        up.settimeout(None)
    except OSError as e:
        log(f"forward to {upstream[0]}:{upstream[1]}: {e}")
        conn.close()
        return
    splice(conn, up)


def accept_loop(listener, handler, *args):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handler, args=(conn, *args), daemon=True).start()


def host_port(s):
    host, _, port = s.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netns", required=True)
    ap.add_argument("--connect")
    ap.add_argument("--forward", action="append", default=[])
    a = ap.parse_args()
    ns = Namespaces(a.netns)
    threads = []
    if a.connect:
        try:
            os.unlink(a.connect)
        except FileNotFoundError:
            pass
        uds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        uds.bind(a.connect)
        os.chmod(a.connect, 0o600)
        uds.listen(128)
        threads.append(threading.Thread(target=accept_loop, args=(uds, lambda c: serve_connect(ns, c)), daemon=True))
        log(f"CONNECT proxy on {a.connect}")
    for spec in a.forward:
        listen, sep, upstream = spec.partition("=")
        if not sep:
            sys.exit(f"netns-proxy.py: --forward wants LISTEN=UPSTREAM, got {spec!r}")
        lhost, lport = host_port(listen)
        s = ns.socket_in_node(socket.AF_INET6 if ":" in lhost else socket.AF_INET)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((lhost, lport))
        s.listen(128)
        threads.append(threading.Thread(target=accept_loop, args=(s, serve_forward, host_port(upstream)), daemon=True))
        log(f"forwarding {listen} (node namespace) to {upstream} (host)")
    for t in threads:
        t.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    log("stopping")


if __name__ == "__main__":
    main()
