#!/usr/bin/env python3
"""Print a loopback TCP port nobody listens on, chosen below the kernel's
ephemeral range (net.ipv4.ip_local_port_range).

A port the kernel hands out for `bind(0)` lies inside the ephemeral range, so
between this choice and the moment a program listens on it (a webhook waits
for its certificate first), any outgoing connection on the machine (kubectl,
the API server's clients, a test) can be given the same port as its source,
and the listen fails with EADDRINUSE (seen in CI: case 42). Below the range,
only another listener can take it.

Used by test/e2e/lib.sh, test/e2e/cluster.sh and scripts/run-local.sh.
"""

import random
import socket

LOWEST = 10000


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def choose(low_of_ephemeral):
    """A port in [LOWEST, low_of_ephemeral) nobody has bound on loopback, or
    the kernel's choice when there is no room below the range."""
    rng = random.SystemRandom()
    if low_of_ephemeral > LOWEST:
        for _ in range(500):
            port = rng.randint(LOWEST, low_of_ephemeral - 1)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print(choose(ephemeral_low()))
