#!/usr/bin/env python3
"""Checks the links of README.md, CHANGELOG.md, SECURITY.md and docs/**/*.md.

Usage: tools/check-links.py [FILE.md ...]   (default: README.md, CHANGELOG.md, SECURITY.md and docs/**/*.md)

Every relative link and image ([text](path), ![alt](path), [ref]: path, and
href/src in HTML tags) must point at a file or folder of the repository that
exists, without leaving the repository; a #anchor must name a heading of the
target page (or of the page itself for a bare #anchor), with GitHub's rules:
the heading's text lower-cased, everything but letters, digits, spaces,
hyphens and underscores dropped, each space made a hyphen, and -1, -2, ...
added to repeated anchors; <a id=...>/<a name=...> count too. Links in code
blocks and code spans are not links. http(s) and mailto links are not
fetched.

Before checking, the script checks its own rules on known examples (the
anchors of headings GitHub renders, a missing file, a missing anchor, a link
out of the repository) and stops with status 2 if one gives the wrong answer.

Exit status: 0 all links resolve, 1 some do not (one line each:
FILE:LINE: ...), 2 the self-test failed or a file cannot be read.
"""
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ATTR = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*\"([^\"]+)\"", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*\"([^\"]+)\"", re.I)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def strip_code_spans(line):
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * 3
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading's markdown text."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "")
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w: letters, digits, underscore (Unicode)
    return text.replace(" ", "-")


def anchors(text):
    seen = {}
    out = set()
    for _, line in prose_lines(text):
        for a in HTML_ANCHOR.findall(line):
            out.add(a)
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(text):
    for n, line in prose_lines(text):
        plain = strip_code_spans(line)
        for target in INLINE_LINK.findall(plain):
            yield n, target
        m = REF_DEF.match(plain)
        if m:
            yield n, m.group(1)
        for target in HTML_ATTR.findall(plain):
            yield n, target


class Checker:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.cache = {}

    def anchors_of(self, path):
        if path not in self.cache:
            with open(path, encoding="utf-8") as f:
                self.cache[path] = anchors(f.read())
        return self.cache[path]

    def check_file(self, path):
        """Yields (line, problem) for each broken link of one page."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        here = os.path.dirname(os.path.realpath(path))
        for n, target in links(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto:, ...
            file_part, _, anchor = target.partition("#")
            if file_part:
                dest = os.path.realpath(os.path.join(here, file_part.split("?")[0]))
                if dest != self.root and not dest.startswith(self.root + os.sep):
                    yield n, "%s: leaves the repository" % target
                    continue
                if not os.path.exists(dest):
                    yield n, "%s: no such file" % target
                    continue
            else:
                dest = os.path.realpath(path)
            if anchor:
                if os.path.isdir(dest) or not dest.endswith(".md"):
                    yield n, "%s: an anchor into a file that is not a page" % target
                elif anchor not in self.anchors_of(dest):
                    yield n, "%s: no heading with anchor #%s in %s" % (
                        target, anchor, os.path.relpath(dest, self.root))


def self_test():
    """The rules above on known cases; returns a list of failures."""
    failures = []
    expect = {
        "Mode HPA: a HorizontalPodAutoscaler scales": "mode-hpa-a-horizontalpodautoscaler-scales",
        "The local cluster (`test/e2e/cluster.sh`)": "the-local-cluster-teste2eclustersh",
        "Defaults (`/mutate`)": "defaults-mutate",
        "1. Create": "1-create",
        "Certificates (`--cert-mode=self`)": "certificates---cert-modeself",
        "Flags (controller)": "flags-controller",
        "What [status.md](status.md) says": "what-statusmd-says",
        "Über `snake_case` names": "über-snake_case-names",
    }
    for heading, want in expect.items():
        if slug(heading) != want:
            failures.append("slug(%r) = %r, GitHub gives %r" % (heading, slug(heading), want))
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "docs"))
        with open(os.path.join(d, "docs", "a.md"), "w", encoding="utf-8") as f:
            f.write("# A\n\n## Twice\n\n## Twice\n\n```\n# not a heading\n[x](nowhere.md)\n```\n"
                    "[ok](b.md#b-section) [ok](#twice-1) [ok](../docs/) `[x](nowhere.md)`\n"
                    "[bad](b.md#nowhere) [bad](missing.md) [bad](#not-a-heading) [bad](../../out.md)\n"
                    "[ok](https://example.com/x.md#y)\n")
        with open(os.path.join(d, "docs", "b.md"), "w", encoding="utf-8") as f:
            f.write("# B\n\n### B section\n")
        got = sorted(p.split(":")[0] for _, p in Checker(d).check_file(os.path.join(d, "docs", "a.md")))
        want = sorted(["b.md#nowhere", "missing.md", "#not-a-heading", "../../out.md"])
        if got != want:
            failures.append("broken links found %s, expected %s" % (got, want))
    return failures


def main(argv):
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    failures = self_test()
    if failures:
        for f in failures:
            print("check-links: self-test: " + f, file=sys.stderr)
        return 2
    files = argv or ["README.md", "CHANGELOG.md", "SECURITY.md"] + sorted(
        os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(ROOT, "docs")) for f in fs if f.endswith(".md"))
    checker = Checker(ROOT)
    broken = checked = 0
    for path in files:
        path = path if os.path.isabs(path) else os.path.join(ROOT, path)
        try:
            problems = list(checker.check_file(path))
        except OSError as e:
            print("check-links: %s" % e, file=sys.stderr)
            return 2
        checked += 1
        for n, problem in problems:
            print("%s:%d: %s" % (os.path.relpath(path, ROOT), n, problem))
            broken += 1
    if broken:
        print("check-links: %d broken links in %d pages" % (broken, checked), file=sys.stderr)
        return 1
    print("check-links: every link of %d pages resolves" % checked, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
