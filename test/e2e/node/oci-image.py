#!/usr/bin/env python3
"""oci-image.py - write a one-layer OCI image archive (an OCI image layout in
a tar file, what `buildah push IMAGE oci-archive:FILE` writes and
`ctr images import` and `docker load` read) from a few files, without a
container engine. The real node's pause image and the example model server
are static binaries on an empty base, so this is all it takes.

Usage: oci-image.py --out FILE.tar --name NAME:TAG [--entrypoint PATH]
                    [--user UID:GID] [--env K=V]... [--port N]... SRC:DEST...
  SRC:DEST  a file to put at DEST in the image (mode kept, owner root,
            parent directories made), e.g. build/pause:/pause
The archive is reproducible: the same inputs give the same bytes (mtimes 0).
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def add_dirs(tar, path, seen):
    parts = path.strip("/").split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if d in seen:
            continue
        seen.add(d)
        info = tarfile.TarInfo(d)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)


def layer_tar(files):
    buf = io.BytesIO()
    seen = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for src, dest in files:
            add_dirs(tar, dest, seen)
            st = os.stat(src)
            info = tarfile.TarInfo(dest.strip("/"))
            info.size = st.st_size
            info.mode = st.st_mode & 0o7777
            with open(src, "rb") as f:
                tar.addfile(info, f)
    return buf.getvalue()


def blob(tar, data):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}", len(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", required=True, help="image reference, e.g. localhost/pause:e2e")
    ap.add_argument("--entrypoint", action="append", default=[])
    ap.add_argument("--user", default="")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--port", action="append", default=[])
    ap.add_argument("files", nargs="+", metavar="SRC:DEST")
    a = ap.parse_args()
    files = []
    for spec in a.files:
        src, sep, dest = spec.partition(":")
        if not sep or not dest.startswith("/") or not os.path.isfile(src):
            sys.exit(f"oci-image.py: bad file argument {spec!r}: want an existing SRC and an absolute DEST")
        files.append((src, dest))
    name = a.name
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"

    raw = layer_tar(files)
    diff_id = "sha256:" + hashlib.sha256(raw).hexdigest()
    layer = gzip.compress(raw, mtime=0)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Entrypoint": a.entrypoint or None,
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + a.env,
            "User": a.user or None,
            "ExposedPorts": {f"{p}/tcp": {} for p in a.port} or None,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "oci-image.py " + " ".join(d for _, d in files)}],
    }
    config["config"] = {k: v for k, v in config["config"].items() if v is not None}
    tmp = a.out + ".tmp"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        layer_d, layer_n = blob(tar, layer)
        cfg = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        cfg_d, cfg_n = blob(tar, cfg)
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_d, "size": cfg_n},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_d, "size": layer_n}],
        }
        man = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        man_d, man_n = blob(tar, man)
        index = {
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": man_d, "size": man_n,
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag},
            }],
        }
        for fname, data in (("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'),
                            ("index.json", json.dumps(index, sort_keys=True).encode())):
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, a.out)
    print(f"{a.out}: {name} ({man_d})")


if __name__ == "__main__":
    main()
