"""Tests of tools/ci-time.py: the table .ci/run prints at its end."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "ci-time.py")


def run(stamps, budgets):
    with tempfile.TemporaryDirectory() as d:
        s, b = os.path.join(d, "stamps"), os.path.join(d, "budgets")
        with open(s, "w", encoding="utf-8") as f:
            f.write(stamps)
        with open(b, "w", encoding="utf-8") as f:
            f.write(budgets)
        p = subprocess.run([sys.executable, SCRIPT, s, b], capture_output=True, text=True, check=False)
        return p.returncode, p.stdout.splitlines()


BUDGETS = """# step warm cold
build   100  200   # a comment
e2e     300  400
total   500  900
"""


class CiTimeTest(unittest.TestCase):
    def test_each_step_against_its_budgets(self):
        rc, lines = run(
            "1000 build begin\n1150 build end\n1150 e2e begin\n1200 lint begin\n1210 lint end\n1650 e2e end\n",
            BUDGETS,
        )
        self.assertEqual(rc, 0)
        self.assertEqual(lines[0].split(), ["step", "began", "took", "warm", "cold", "verdict"])
        self.assertEqual(lines[1].split(), ["build", "0", "150", "100", "200", "ok", "(cold)"])
        self.assertEqual(lines[2].split(), ["e2e", "150", "500", "300", "400", "OVER"])
        self.assertEqual(lines[3].split(), ["lint", "200", "10", "-", "-"])
        self.assertEqual(lines[4].split(), ["total", "0", "650", "500", "900", "ok", "(cold)"])

    def test_a_step_that_did_not_end(self):
        rc, lines = run("10 build begin\n20 e2e begin\n30 e2e end\n", BUDGETS)
        self.assertEqual(rc, 0)
        self.assertEqual(lines[1].split(), ["build", "0", "-", "100", "200", "did", "not", "end"])
        self.assertEqual(lines[2].split(), ["e2e", "10", "10", "300", "400", "ok"])
        self.assertEqual(lines[3].split(), ["total", "0", "20", "500", "900", "ok"])

    def test_a_repeated_begin_keeps_the_first(self):
        rc, lines = run("0 fuzz begin\n5 fuzz begin\n9 fuzz end\n", "fuzz 10 20\n")
        self.assertEqual(lines[1].split(), ["fuzz", "0", "9", "10", "20", "ok"])

    def test_no_stamps(self):
        rc, lines = run("", BUDGETS)
        self.assertEqual((rc, lines), (0, ["ci-time: no steps were stamped"]))

    def test_a_missing_file(self):
        p = subprocess.run([sys.executable, SCRIPT, "/nonexistent/stamps", "/nonexistent/budgets"],
                           capture_output=True, text=True, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("ci-time:", p.stderr)


if __name__ == "__main__":
    unittest.main()
