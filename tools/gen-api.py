#!/usr/bin/env python3
"""Generate everything the ModelService API definition gives.

The one definition is shared/api/schema/modelservice.schema.json: the CRD's
openAPIV3Schema with `x-ms-*` annotations (tools/apigen/model.py lists them).
From it this tool writes, all committed:

  shared/api/types.gen.h     the resource's names, status phases, condition
                             types and reasons as constants
  shared/api/spec.gen.h      the typed spec: structs, enums, field rules
  shared/api/spec.gen.cc     its parser, JSON form and defaults
  shared/api/schema.gen.cc   the schema as text (no annotations): pruning, tests
  manifests/crd/modelservices.modelops.dev.yaml   the CRD
  docs/user/api-reference.md                      the API reference

When the CRD changes, it then runs tools/gen-manifests.py, which copies it
into the Helm chart (charts/modelservice-operator/files/crds/, which
templates/crds/ renders) and renders
dist/install.yaml (--no-manifests: not).

Usage:
  python3 tools/gen-api.py           write every output
  python3 tools/gen-api.py --check   exit 1 if a committed output differs from
                                     what would be generated (CI)
  python3 tools/gen-api.py --definition FILE --cpp-out DIR --namespace NS --name NAME [--no-format]
                                     only the C++ of another definition, into
                                     DIR/NAME_{types,spec}.gen.h, NAME_spec.gen.cc, and its
                                     schema, DIR/NAME.schema.json (the generator's own
                                     test, test/shared/api)

Needs python3 and clang-format (the C++ is formatted with the repository's
.clang-format, so it passes the format check).
"""

import argparse
import difflib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apigen import cpp, crd, docs  # noqa: E402
from apigen.kinds import DefinitionError  # noqa: E402
from apigen.model import Model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFINITION = "shared/api/schema/modelservice.schema.json"
CRD = "manifests/crd/modelservices.modelops.dev.yaml"


def clang_format(text, path, root):
    try:
        out = subprocess.run(["clang-format", "--style=file", "--assume-filename=" + path], input=text,
                             capture_output=True, text=True, cwd=root, check=True)
    except FileNotFoundError:
        sys.exit("gen-api: clang-format is needed (scripts/setup.sh installs it)")
    except subprocess.CalledProcessError as e:
        sys.exit("gen-api: clang-format failed on %s: %s" % (path, e.stderr))
    return out.stdout


def outputs(model, root):
    """{repository path: text} of every output of the definition."""
    t = cpp.Target()
    files = {
        "shared/api/types.gen.h": cpp.types_header(model, t),
        "shared/api/spec.gen.h": cpp.spec_header(model, t),
        "shared/api/spec.gen.cc": cpp.spec_source(model, t),
        "shared/api/schema.gen.cc": cpp.schema_source(model, t),
    }
    files = {p: clang_format(text, p, root) for p, text in files.items()}
    files[CRD] = crd.generate(model)
    files["docs/user/api-reference.md"] = docs.generate(model)
    return files


def load(path):
    with open(path, encoding="utf-8") as f:
        return Model(json.load(f))


def check(files, root):
    stale = []
    for path, text in files.items():
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            sys.stderr.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                       path + " (committed)", path + " (generated)"))
            stale.append(path)
    if stale:
        print("gen-api: out of date: %s; run `python3 tools/gen-api.py`" % ", ".join(stale), file=sys.stderr)
        return 1
    print("gen-api: %d outputs of %s are up to date" % (len(files), DEFINITION))
    return 0


def write(files, root):
    """Writes the outputs that differ; returns the paths written."""
    written = []
    for path, text in files.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            with open(target, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        except FileNotFoundError:
            pass
        with open(target, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("gen-api: wrote %s" % path)
        written.append(path)
    return written


def render_chart(root):
    """The chart carries a copy of the CRD, and dist/install.yaml renders it:
    tools/gen-manifests.py (Helm) writes both."""
    print("gen-api: the CRD changed: running tools/gen-manifests.py")
    return subprocess.run([sys.executable, os.path.join(root, "tools", "gen-manifests.py")], cwd=root).returncode


def cpp_only(args):
    model = load(args.definition)
    t = cpp.Target(args.namespace, os.path.relpath(args.definition, ROOT), "%s_spec.gen.h" % args.name)
    os.makedirs(args.cpp_out, exist_ok=True)
    for suffix, text in (("types.gen.h", cpp.types_header(model, t)), ("spec.gen.h", cpp.spec_header(model, t)),
                         ("spec.gen.cc", cpp.spec_source(model, t))):
        path = os.path.join(args.cpp_out, "%s_%s" % (args.name, suffix))
        if not args.no_format:
            text = clang_format(text, "shared/api/" + os.path.basename(path), ROOT)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    with open(os.path.join(args.cpp_out, "%s.schema.json" % args.name), "w", encoding="utf-8") as f:
        json.dump(model.schema, f, indent=2)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if an output is not up to date")
    parser.add_argument("--root", default=ROOT, help="repository root (default: %(default)s)")
    parser.add_argument("--definition", help="another definition: writes its C++ only (with --cpp-out)")
    parser.add_argument("--cpp-out", help="directory for the C++ of --definition")
    parser.add_argument("--namespace", default="ms::api", help="C++ namespace of --definition's C++")
    parser.add_argument("--name", default="api", help="file name prefix of --definition's C++")
    parser.add_argument("--no-format", action="store_true", help="do not clang-format --definition's C++")
    parser.add_argument("--no-manifests", action="store_true",
                        help="do not run tools/gen-manifests.py when the CRD changed")
    args = parser.parse_args(argv)
    try:
        if args.definition:
            if not args.cpp_out:
                parser.error("--definition needs --cpp-out")
            return cpp_only(args)
        files = outputs(load(os.path.join(args.root, DEFINITION)), args.root)
    except DefinitionError as e:
        sys.exit("gen-api: %s: %s" % (args.definition or DEFINITION, e))
    if args.check:
        return check(files, args.root)
    written = write(files, args.root)
    if CRD in written and not args.no_manifests:
        return render_chart(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
