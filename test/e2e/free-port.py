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


def main():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    rng = random.SystemRandom()
    if ephemeral_low - 1 > LOWEST:
        for _ in range(500):
            port = rng.randint(LOWEST, ephemeral_low - 1)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            print(port)
            return
    with socket.socket() as s:  # no room below the range: the kernel's choice
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])


if __name__ == "__main__":
    main()
