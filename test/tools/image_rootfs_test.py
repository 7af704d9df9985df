"""Tests of scripts/image-rootfs.sh and tools/gen-sbom.py: the runtime
image's tree and its SBOM, on this machine's own Debian files.

A program of the machine (openssl, which links libssl3 and libcrypto) stands
in for the operator's two programs: image-rootfs.sh lays out its tree, then
the tree must hold the loader and every library the program needs, with
Debian's links, the dpkg records of their packages, and nothing unaccounted
for; gen-sbom.py must list those packages and every file, and refuse a tree
with a file of no package.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROOTFS = os.path.join(ROOT, "scripts", "image-rootfs.sh")
SBOM = os.path.join(ROOT, "tools", "gen-sbom.py")
PROGRAM = shutil.which("openssl")
TRIPLET = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True, text=True,
                         check=False).stdout.strip() if shutil.which("dpkg-architecture") else ""
ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
TRIPLET = TRIPLET or {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[ARCH]


@unittest.skipUnless(PROGRAM and os.path.exists("/etc/ssl/certs/ca-certificates.crt"), "needs openssl and ca-certificates")
class ImageRootfsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        bins = os.path.join(cls.tmp, "bin")
        os.mkdir(bins)
        progs = []
        for name in ("modelservice-webhook", "modelservice-controller"):
            shutil.copy(PROGRAM, os.path.join(bins, name))
            progs.append(os.path.join(bins, name))
        cls.root = os.path.join(cls.tmp, "rootfs")
        p = subprocess.run(["bash", ROOTFS, cls.root, TRIPLET] + progs, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise AssertionError("image-rootfs.sh failed: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def sbom(self, root):
        out = os.path.join(self.tmp, "sbom.json")
        p = subprocess.run([sys.executable, SBOM, root, "--name", "r/modelservice", "--digest", "sha256:" + "0" * 64,
                            "--arch", ARCH, "--version", "1.2.3", "--created", "2026-01-01T00:00:00Z", "-o", out],
                           capture_output=True, text=True, check=False)
        return p, (json.load(open(out, encoding="utf-8")) if p.returncode == 0 else None)

    def test_tree_holds_loader_libraries_and_records(self):
        ldd = subprocess.run(["ldd", PROGRAM], capture_output=True, text=True, check=True).stdout
        for line in ldd.splitlines():
            parts = line.split()
            if "=>" in parts:  # libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3
                name = parts[0]
                self.assertTrue(os.path.exists(os.path.join(self.root, "usr", "lib", TRIPLET, name)), name)
            elif parts and parts[0].startswith("/"):  # the loader
                self.assertTrue(os.path.lexists(self.root + parts[0]), parts[0])
        statusd = os.path.join(self.root, "var", "lib", "dpkg", "status.d")
        pkgs = sorted(n for n in os.listdir(statusd) if not n.endswith(".md5sums"))
        for want in ("libc6", "libssl3", "ca-certificates"):
            self.assertIn(want, pkgs)
        with open(os.path.join(statusd, "libssl3"), encoding="utf-8") as f:
            stanza = f.read()
        self.assertIn("Package: libssl3\n", stanza)
        self.assertNotIn("Status:", stanza)
        with open(os.path.join(self.root, "etc", "passwd"), encoding="utf-8") as f:
            self.assertIn("nonroot:x:65532:65532:", f.read())
        for absent in ("bin/sh", "usr/bin/dpkg", "usr/bin/apt-get"):
            self.assertFalse(os.path.lexists(os.path.join(self.root, absent)), absent)

    def test_sbom_lists_packages_and_every_file(self):
        p, doc = self.sbom(self.root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["spdxVersion"], "SPDX-2.3")
        names = {pkg["name"]: pkg for pkg in doc["packages"]}
        self.assertEqual(names["modelservice-operator"]["versionInfo"], "1.2.3")
        self.assertIn("pkg:deb/debian/libssl3@", names["libssl3"]["externalRefs"][0]["referenceLocator"])
        files = {f["fileName"] for f in doc["files"]}
        self.assertIn("./usr/local/bin/modelservice-webhook", files)
        on_disk = set()
        for d, _, fs in os.walk(self.root):
            for n in fs:
                full = os.path.join(d, n)
                if os.path.isfile(full) and not os.path.islink(full):
                    on_disk.add("./" + os.path.relpath(full, self.root))
        self.assertEqual(files, on_disk)
        contained = {r["relatedSpdxElement"] for r in doc["relationships"] if r["relationshipType"] == "CONTAINS"}
        self.assertTrue(all(f["SPDXID"] in contained for f in doc["files"]))
        again = self.sbom(self.root)[1]
        self.assertEqual(doc, again, "the same tree gives the same SBOM")

    def test_sbom_refuses_a_file_of_no_package(self):
        root = os.path.join(self.tmp, "extra")
        shutil.copytree(self.root, root, symlinks=True)
        with open(os.path.join(root, "usr", "local", "bin", "stray"), "w", encoding="utf-8") as f:
            f.write("x")
        p, _ = self.sbom(root)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("usr/local/bin/stray", p.stderr)


if __name__ == "__main__":
    unittest.main()
