"""test/e2e/free-port.py chooses a free loopback port below the ephemeral
range, and falls back to the kernel's choice when there is no room there.

Run by ctest (e2e_free_port): python3 -m unittest -v free_port_test
"""

import importlib.util
import os
import socket
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("free_port", os.path.join(HERE, "free-port.py"))
free_port = importlib.util.module_from_spec(spec)
spec.loader.exec_module(free_port)


class FreePort(unittest.TestCase):
    def test_below_the_ephemeral_range_and_free(self):
        low = free_port.ephemeral_low()
        for _ in range(50):
            port = free_port.choose(low)
            self.assertGreaterEqual(port, free_port.LOWEST)
            self.assertLess(port, low)
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))  # nobody holds it

    def test_a_port_in_use_is_not_chosen(self):
        # The one port below the "range" is held: the kernel's choice (any
        # free port) comes back instead.
        with socket.socket() as held:
            held.bind(("127.0.0.1", 0))
            port = held.getsockname()[1]
            saved = free_port.LOWEST
            free_port.LOWEST = port
            try:
                self.assertNotEqual(free_port.choose(port + 1), port)
            finally:
                free_port.LOWEST = saved

    def test_no_room_below_the_range(self):
        port = free_port.choose(free_port.LOWEST)
        self.assertGreater(port, 0)


if __name__ == "__main__":
    unittest.main()
