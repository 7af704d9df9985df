#!/usr/bin/env python3
"""Makes the pictures of docs/ from their sources, and checks they are current.

Usage: tools/gen-docs-images.py [--check]

  (no option)  renders docs/architecture.dot to docs/images/architecture.png
               (Graphviz's dot), plots bench/results/webhook.md to
               docs/images/bench-webhook.png, bench/results/controller.md to
               docs/images/bench-controller.png and the timelines
               bench/results/autoscaling-loop-{controller,hpa,gpu}.csv to
               docs/images/autoscaling-loop.png (matplotlib), and records the
               SHA-256 of every input (the .dot file, the results, this script)
               and output in docs/images/SOURCES.sha256.
  --check      needs neither Graphviz nor matplotlib: fails (status 1) when an
               input or an image no longer has the sum recorded, i.e. a source
               changed without the images being made again, or an image was
               changed by hand. PNG bytes differ between versions of Graphviz
               and matplotlib, so the images are never compared with a fresh
               rendering.

Needs (without --check): the Debian packages graphviz and python3-matplotlib
(scripts/setup.sh installs them).
"""
import hashlib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOT = "docs/architecture.dot"
WEBHOOK = "bench/results/webhook.md"
CONTROLLER = "bench/results/controller.md"
LOOP = {"Controller": "bench/results/autoscaling-loop-controller.csv", "HPA": "bench/results/autoscaling-loop-hpa.csv",
        "GPU": "bench/results/autoscaling-loop-gpu.csv"}
SCRIPT = "tools/gen-docs-images.py"
IMAGES = "docs/images"
OUT_ARCH = IMAGES + "/architecture.png"
OUT_WEBHOOK = IMAGES + "/bench-webhook.png"
OUT_CONTROLLER = IMAGES + "/bench-controller.png"
OUT_LOOP = IMAGES + "/autoscaling-loop.png"
SUMS = IMAGES + "/SOURCES.sha256"
INPUTS = [DOT, WEBHOOK, CONTROLLER, *LOOP.values(), SCRIPT]
OUTPUTS = [OUT_ARCH, OUT_WEBHOOK, OUT_CONTROLLER, OUT_LOOP]


def path(rel):
    return os.path.join(ROOT, rel)


def sha256(rel):
    with open(path(rel), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def md_tables(text):
    """Each markdown table of a page as (header cells, rows of cells)."""
    tables, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
            cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]
            header, rows, j = cells(lines[i]), [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(cells(lines[j]))
                j += 1
            tables.append((header, rows))
            i = j
        else:
            i += 1
    return tables


def table_with(text, column):
    for header, rows in md_tables(text):
        if column in header:
            return [dict(zip(header, r)) for r in rows]
    sys.exit("gen-docs-images: no table with a column %r" % column)


def plot_webhook(plt):
    rows = table_with(open(path(WEBHOOK), encoding="utf-8").read(), "requests/s")
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for s in scenarios:
        pts = [(int(r["connections"]), float(r["requests/s"]), float(r["p99 ms"])) for r in rows if r["scenario"] == s]
        conns = [p[0] for p in pts]
        left.plot(conns, [p[1] for p in pts], marker="o", label=s)
        right.plot(conns, [p[2] for p in pts], marker="o", label=s)
    left.axhline(20000, color="grey", linestyle="--", linewidth=1)
    left.text(left.get_xlim()[0], 20500, " goal: 20,000 reviews/s", color="grey", fontsize=8)
    right.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    right.text(right.get_xlim()[0], 1.03, " goal: p99 < 1 ms", color="grey", fontsize=8)
    for ax, title, unit in ((left, "Throughput", "requests/s"), (right, "p99 latency", "ms")):
        ax.set_title(title)
        ax.set_xlabel("connections (one request in flight each)")
        ax.set_ylabel(unit)
        ax.set_xticks(sorted({int(r["connections"]) for r in rows}))
        ax.grid(True, alpha=0.3)
    left.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    right.legend(fontsize=8, loc="upper left")
    fig.suptitle("modelservice-webhook over TLS 1.3, one event loop, 2 shared cores (%s)" % WEBHOOK, fontsize=10)
    fig.tight_layout()
    return fig


def plot_controller(plt):
    rows = table_with(open(path(CONTROLLER), encoding="utf-8").read(), "converged s")
    runs = list(dict.fromkeys((r["N"], r["client limits"]) for r in rows))
    short = lambda limits: "no client limit" if limits.startswith("each at its default") else "QPS 20, burst 30"
    labels = ["N=%s\n%s" % (n, short(l)) for n, l in runs]
    controllers = list(dict.fromkeys(r["controller"] for r in rows))
    metrics = [("converged s", "Convergence time", "s"), ("peak RSS MiB", "Peak RSS", "MiB"),
               ("CPU s", "CPU", "s")]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2))
    width = 0.8 / len(controllers)
    for ax, (col, title, unit) in zip(axes, metrics):
        for k, c in enumerate(controllers):
            values = [float(next(r[col] for r in rows if (r["N"], r["client limits"]) == run and r["controller"] == c))
                      for run in runs]
            xs = [i + (k - (len(controllers) - 1) / 2) * width for i in range(len(runs))]
            ax.bar(xs, values, width, label=c)
        ax.set_title(title)
        ax.set_ylabel(unit)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("This controller and controller-runtime, N ModelServices created at once (%s)" % CONTROLLER,
                 fontsize=10)
    fig.tight_layout()
    return fig


def plot_loop(plt):
    import csv
    fig, axes = plt.subplots(2, len(LOOP), figsize=(16, 5.6), sharex="col", sharey="row")
    for col, (mode, src) in enumerate(LOOP.items()):
        with open(path(src), newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        top, bottom = axes[0][col], axes[1][col]
        t = [int(r["second"]) for r in rows]
        top.plot(t, [int(r["sent"]) for r in rows], label="requests sent per second", color="tab:blue")
        failed = [int(r["failed"]) for r in rows]
        top.plot(t, failed, label="failed (%d in all)" % sum(failed), color="tab:red")
        queue = [(int(r["second"]), float(r["queue"])) for r in rows if r["queue"] != ""]
        top.plot([q[0] for q in queue], [q[1] for q in queue], label="queue length L (Prometheus)", color="tab:orange")
        title = "mode Controller on GPU utilization (50 %)" if mode == "GPU" else "mode " + mode
        top.set_title("%s: %s" % (title, os.path.basename(src)), fontsize=9)
        top.legend(fontsize=8, loc="upper right")
        top.grid(True, alpha=0.3)
        top.set_ylim(bottom=0)
        bottom.step(t, [int(r["desired"]) for r in rows], where="post", label="desired replicas", color="tab:purple")
        bottom.step(t, [int(r["ready"]) for r in rows], where="post", label="ready replicas", color="tab:green",
                    linestyle="--")
        bottom.set_xlabel("seconds since the load began")
        bottom.set_yticks(range(0, max(int(r["desired"]) for r in rows) + 2))
        bottom.legend(fontsize=8, loc="upper right")
        bottom.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("requests")
    axes[1][0].set_ylabel("replicas")
    fig.suptitle("Autoscaling on the real node: a pod serves 5 requests/s; target queue 1 per replica (GPU: 100, and 50 % GPU)",
                 fontsize=10)
    fig.tight_layout()
    return fig


def generate():
    os.makedirs(path(IMAGES), exist_ok=True)
    subprocess.run(["dot", "-Tpng", "-Gdpi=96", "-o", path(OUT_ARCH), path(DOT)], check=True)
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "modelservice"
    import matplotlib.pyplot as plt
    for out, plot in ((OUT_WEBHOOK, plot_webhook), (OUT_CONTROLLER, plot_controller), (OUT_LOOP, plot_loop)):
        fig = plot(plt)
        fig.savefig(path(out), dpi=96, metadata={"Software": None})
        plt.close(fig)
    with open(path(SUMS), "w", encoding="utf-8") as f:
        f.write("# SHA-256 of the sources and the images made from them by %s;\n"
                "# `%s --check` (scripts/test.sh) compares them.\n" % (SCRIPT, SCRIPT))
        for rel in INPUTS + OUTPUTS:
            f.write("%s  %s\n" % (sha256(rel), rel))
    for rel in OUTPUTS:
        print("gen-docs-images: wrote %s" % rel)


def check():
    try:
        with open(path(SUMS), encoding="utf-8") as f:
            recorded = dict(reversed(line.split()) for line in f if line.strip() and not line.startswith("#"))
    except OSError as e:
        print("gen-docs-images: %s: run python3 %s" % (e, SCRIPT), file=sys.stderr)
        return 1
    stale = []
    for rel in INPUTS + OUTPUTS:
        if rel not in recorded:
            stale.append("%s: not recorded" % rel)
        elif not os.path.exists(path(rel)):
            stale.append("%s: missing" % rel)
        elif sha256(rel) != recorded[rel]:
            stale.append("%s: changed since the images were made" % rel if rel in INPUTS
                         else "%s: not the image the script made" % rel)
    extra = sorted(set(recorded) - set(INPUTS + OUTPUTS))
    stale += ["%s: recorded but no longer a source or an image" % rel for rel in extra]
    if stale:
        for s in stale:
            print("gen-docs-images: " + s, file=sys.stderr)
        print("gen-docs-images: the images are not current: run python3 %s and commit docs/images/" % SCRIPT,
              file=sys.stderr)
        return 1
    print("gen-docs-images: %d images current with their %d sources" % (len(OUTPUTS), len(INPUTS)), file=sys.stderr)
    return 0


def main(argv):
    if argv == ["--check"]:
        return check()
    if argv in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # Debian's python3-matplotlib belongs to Debian's python3; another
        # python3 first on the PATH (pyenv, a venv) does not see it.
        debian = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(debian) and os.access(debian, os.X_OK):
            os.execv(debian, [debian, os.path.abspath(__file__)] + argv)
        sys.exit("gen-docs-images: matplotlib is missing: scripts/setup.sh installs python3-matplotlib")
    generate()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
