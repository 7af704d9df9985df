#!/usr/bin/env python3
"""dashboard.py - the operator's Grafana dashboard: its queries, and its lint.

Usage:
  dashboard.py queries DASHBOARD [--var NAME=VALUE]... [--rate-interval D] [--variable NAME]
      Print every query of the dashboard, one a line:
      "ROW / PANEL / REFID<TAB>EXPR", with $NAME / ${NAME} replaced by VALUE
      and $__rate_interval by D (default 1m), as Grafana sends them. The
      variables' own queries are printed first, as "variable NAME<TAB>QUERY"
      (label_values(SELECTOR, LABEL)); with --variable NAME, only that one.
      Fails on a variable left unreplaced.
  dashboard.py lint DASHBOARD --kustomization FILE [--docs FILE]
      Fail unless the dashboard is well formed: a uid and title; the
      variables datasource, job, namespace and modelservice; unique panel
      ids; every panel under a row, inside the 24-column grid, not
      overlapping another; every non-row panel with a description, the
      ${datasource} data source and at least one query, refIds unique; and
      the kustomization generates the ConfigMap from it with the Grafana
      sidecar's label grafana_dashboard: "1". With --docs, every row title
      appears in that file (what each row answers). With --rules-out FILE,
      also write every query (variables replaced by placeholders) as a
      recording-rule file, for `promtool check rules` to parse them.
"""
import argparse
import json
import re
import sys

VARIABLES = ("datasource", "job", "namespace", "modelservice")
GRID = 24


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rows_and_panels(dash):
    """Yield (row title, panel) for every non-row panel, in order."""
    row = None
    for p in dash.get("panels", []):
        if p.get("type") == "row":
            row = p.get("title", "")
            for inner in p.get("panels", []):  # a collapsed row keeps its panels inside
                yield row, inner
            continue
        yield row, p


def substitute(expr, values, rate_interval):
    out = expr.replace("$__rate_interval", rate_interval).replace("${__rate_interval}", rate_interval)
    for name, value in values.items():
        out = out.replace("${" + name + "}", value)
        out = re.sub(r"\$" + re.escape(name) + r"\b", lambda _: value, out)
    left = re.findall(r"\$\{?[A-Za-z_]\w*", out)
    if left:
        raise SystemExit(f"dashboard.py: unreplaced variable(s) {', '.join(sorted(set(left)))} in: {out}")
    return out


def queries(args):
    dash = load(args.dashboard)
    values = {}
    for v in args.var or []:
        name, sep, value = v.partition("=")
        if not sep:
            raise SystemExit(f"dashboard.py: --var {v!r}: want NAME=VALUE")
        values[name] = value
    for var in dash["templating"]["list"]:
        if var.get("type") == "query" and args.variable in (None, var["name"]):
            q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            # A variable's query sees the variables before it, as in Grafana.
            print(f"variable {var['name']}\t{substitute(q, {k: v for k, v in values.items() if k != var['name']}, args.rate_interval)}")
    if args.variable is not None:
        return 0
    for row, p in rows_and_panels(dash):
        for t in p.get("targets", []):
            expr = substitute(t["expr"], values, args.rate_interval)
            print(f"{row} / {p['title']} / {t['refId']}\t{expr}")
    return 0


def overlaps(a, b):
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def lint_dashboard(dash, problems):
    for key in ("uid", "title"):
        if not dash.get(key):
            problems.append(f"no {key}")
    names = [v.get("name") for v in dash.get("templating", {}).get("list", [])]
    for want in VARIABLES:
        if want not in names:
            problems.append(f"no variable {want}")
    ids, boxes, rows = set(), [], []
    if dash.get("panels", [{}])[0].get("type") != "row":
        problems.append("the first panel is not a row")
    for p in dash.get("panels", []):
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(p.get("id"))
        g = p.get("gridPos") or {}
        if not all(isinstance(g.get(k), int) for k in ("x", "y", "w", "h")) or g["x"] < 0 or g["x"] + g["w"] > GRID:
            problems.append(f"{where}: gridPos {g} outside the {GRID}-column grid")
            continue
        for other_where, other in boxes:
            if overlaps(g, other):
                problems.append(f"{where}: overlaps {other_where}")
        boxes.append((where, g))
        if p.get("type") == "row":
            rows.append(p.get("title", ""))
            continue
        if not p.get("description"):
            problems.append(f"{where}: no description")
        if p.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
            problems.append(f"{where}: data source is not ${{datasource}}")
        targets = p.get("targets") or []
        if not targets or not all(str(t.get("expr", "")).strip() for t in targets):
            problems.append(f"{where}: no query, or an empty one")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            problems.append(f"{where}: duplicate refId")
    return rows


def lint_kustomization(path, problems):
    # The ConfigMap generator, read as text (the file is ours and small):
    # name, the file, no hash suffix, and the sidecar's label.
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for want, why in ((r"configMapGenerator:", "a configMapGenerator"),
                      (r"-\s+modelservice\.json=dashboard/modelservice\.json", "the file dashboard/modelservice.json"),
                      (r"disableNameSuffixHash:\s*true", "disableNameSuffixHash: true"),
                      (r"grafana_dashboard:\s*\"1\"", 'the label grafana_dashboard: "1"')):
        if not re.search(want, text):
            problems.append(f"{path}: no {why}")


def rules_file(dash, out):
    placeholders = {"job": "modelservice-metrics", "namespace": ".*", "modelservice": ".*", "datasource": "x"}
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write("groups:\n  - name: dashboard-queries\n    rules:\n")
        for _, p in rows_and_panels(dash):
            for t in p.get("targets", []):
                n += 1
                expr = substitute(t["expr"], placeholders, "5m")
                f.write(f"      - record: dashboard:query:{n}\n        expr: {json.dumps(expr)}\n")
    return n


def lint(args):
    dash = load(args.dashboard)
    problems = []
    rows = lint_dashboard(dash, problems)
    lint_kustomization(args.kustomization, problems)
    if args.docs:
        with open(args.docs, encoding="utf-8") as f:
            doc = f.read()
        for r in rows:
            if r not in doc:
                problems.append(f"row {r!r} is not described in {args.docs}")
    if args.rules_out:
        rules_file(dash, args.rules_out)
    for p in problems:
        print("dashboard.py lint: " + p, file=sys.stderr)
    if problems:
        return 1
    n = sum(len(p.get("targets", [])) for _, p in rows_and_panels(dash))
    print(f"dashboard.py lint: {len(rows)} rows, {n} queries, ConfigMap generator with the sidecar label")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("queries")
    q.add_argument("dashboard")
    q.add_argument("--var", action="append")
    q.add_argument("--rate-interval", default="1m")
    q.add_argument("--variable", metavar="NAME")
    l = sub.add_parser("lint")
    l.add_argument("dashboard")
    l.add_argument("--kustomization", required=True)
    l.add_argument("--docs")
    l.add_argument("--rules-out")
    args = p.parse_args()
    return queries(args) if args.cmd == "queries" else lint(args)


if __name__ == "__main__":
    sys.exit(main())
