#!/usr/bin/env python3
"""Write the SPDX 2.3 JSON SBOM of one operator image from its file tree.

Usage: tools/gen-sbom.py ROOTFS --name NAME --digest sha256:... --arch ARCH
                         --version V [--revision R] [--created T] -o FILE

ROOTFS is the image's tree (`buildah mount` of a container of the image). The
image is built by the Dockerfile's scripts/image-rootfs.sh, which records, for
every Debian package a file was copied from, the package's dpkg stanza in
/var/lib/dpkg/status.d/NAME and the copied files in NAME.md5sums (the layout of
distroless images, which image scanners read). The SBOM lists:

  - the image (primaryPackagePurpose CONTAINER, its digest and purl pkg:oci),
  - the project's two programs as the package modelservice-operator
    (APPLICATION, the image's version, Apache-2.0),
  - every Debian package with its version, architecture, source package and
    purl pkg:deb/debian/NAME@VERSION?arch=ARCH&distro=debian-12,
  - every regular file of the image with its SHA-256 and SHA-1 (SPDX 2.3
    requires SHA-1), each CONTAINED by the package it came from (the
    programs by modelservice-operator, the files written by image-rootfs.sh
    itself, /etc/passwd and the like, by the image).

It fails if a file of the tree belongs to no package and is not one of the few
image-rootfs.sh writes, so that nothing in the image escapes the list.
Deterministic: same tree and arguments, same bytes (the creation time is
--created, the image's build date). Standard library only.
"""

import argparse
import hashlib
import json
import os
import re
import sys

PROGRAMS = {"usr/local/bin/modelservice-webhook", "usr/local/bin/modelservice-controller"}
# Written by scripts/image-rootfs.sh, not copied from a package.
OWN_FILES = {"etc/passwd", "etc/group", "etc/nsswitch.conf"}


def spdx_id(kind, name):
    return "SPDXRef-%s-%s" % (kind, re.sub(r"[^A-Za-z0-9.-]", "-", name))


def stanza(path):
    fields, key = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line.rstrip("\n")
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
    return fields


def digests(path):
    sha256, sha1 = hashlib.sha256(), hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha256.update(chunk)
            sha1.update(chunk)
    return sha256.hexdigest(), sha1.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rootfs")
    ap.add_argument("--name", required=True, help="the image's name (repository), e.g. registry/modelservice")
    ap.add_argument("--digest", required=True, help="the image's manifest digest")
    ap.add_argument("--arch", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--revision", default="")
    ap.add_argument("--created", default="1970-01-01T00:00:00Z")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    root = a.rootfs.rstrip("/")
    statusd = os.path.join(root, "var", "lib", "dpkg", "status.d")

    image_id = spdx_id("Image", a.arch)
    app_id = spdx_id("Package", "modelservice-operator")
    packages = [{
        "SPDXID": image_id, "name": a.name, "versionInfo": a.digest,
        "primaryPackagePurpose": "CONTAINER", "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION", "supplier": "NOASSERTION",
        "checksums": [{"algorithm": "SHA256", "checksumValue": a.digest.split(":", 1)[1]}],
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": "pkg:oci/%s@%s?arch=%s&repository_url=%s" % (
                              a.name.rsplit("/", 1)[-1], a.digest.replace(":", "%3A"), a.arch, a.name)}],
    }, {
        "SPDXID": app_id, "name": "modelservice-operator", "versionInfo": a.version,
        "primaryPackagePurpose": "APPLICATION", "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0",
        "copyrightText": "NOASSERTION", "supplier": "NOASSERTION",
        "comment": "modelservice-webhook and modelservice-controller, revision %s" % (a.revision or "unknown"),
    }]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": image_id},
                     {"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": app_id}]
    owner = {p: app_id for p in PROGRAMS}
    debs = sorted(n for n in os.listdir(statusd) if not n.endswith(".md5sums"))
    for name in debs:
        st = stanza(os.path.join(statusd, name))
        pid = spdx_id("Package", "deb-" + name)
        arch = st.get("Architecture", "")
        source = st.get("Source", name).split(" ")[0]
        packages.append({
            "SPDXID": pid, "name": st.get("Package", name), "versionInfo": st["Version"],
            "primaryPackagePurpose": "LIBRARY", "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False, "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "supplier": "Organization: Debian",
            "sourceInfo": "built from the Debian source package %s" % source,
            "comment": "Debian package, Architecture: %s" % arch,
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": "pkg:deb/debian/%s@%s?arch=%s&distro=debian-12" % (
                                  name, st["Version"].replace(":", "%3A"), arch)}],
        })
        relationships.append({"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": pid})
        with open(os.path.join(statusd, name + ".md5sums"), encoding="utf-8") as f:
            for line in f:
                owner[line.split(None, 1)[1].strip()] = pid
        doc = "usr/share/doc/%s/copyright" % name
        if os.path.exists(os.path.join(root, doc)):
            owner.setdefault(os.path.realpath(os.path.join(root, doc))[len(root) + 1:], pid)

    files, orphans = [], []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            full = os.path.join(d, n)
            rel = full[len(root) + 1:]
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            if rel.startswith("var/lib/dpkg/status.d/"):
                pkg = image_id
            elif rel in owner:
                pkg = owner[rel]
            elif rel in OWN_FILES:
                pkg = image_id
            else:
                orphans.append(rel)
                continue
            sha256, sha1 = digests(full)
            fid = spdx_id("File", rel)
            files.append({"SPDXID": fid, "fileName": "./" + rel,
                          "checksums": [{"algorithm": "SHA256", "checksumValue": sha256},
                                        {"algorithm": "SHA1", "checksumValue": sha1}],
                          "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION"})
            relationships.append({"spdxElementId": pkg, "relationshipType": "CONTAINS", "relatedSpdxElement": fid})
    if orphans:
        sys.exit("gen-sbom: files of no package in %s: %s" % (root, ", ".join(orphans)))
    missing = sorted(PROGRAMS - {f["fileName"][2:] for f in files})
    if missing:
        sys.exit("gen-sbom: the image lacks %s" % ", ".join(missing))

    doc = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": "%s@%s" % (a.name, a.digest),
        "documentNamespace": "https://spdx.org/spdxdocs/modelservice-operator-%s-%s-%s" % (
            a.version, a.arch, a.digest.split(":", 1)[1][:16]),
        "creationInfo": {"created": a.created, "creators": ["Tool: modelservice tools/gen-sbom.py"]},
        "packages": packages, "files": files, "relationships": relationships,
    }
    with open(a.output, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("gen-sbom: %s: %d Debian packages, the operator's programs, %d files" % (
        a.output, len(debs), len(files)), file=sys.stderr)


if __name__ == "__main__":
    main()
