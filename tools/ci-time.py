#!/usr/bin/env python3
"""ci-time.py STAMPS BUDGETS - prints each step of .ci/run with its time
against its warm and cold budgets.

STAMPS holds lines "EPOCH STEP begin|end" (scripts/ci-stamp writes them);
BUDGETS lines "STEP WARM COLD" (.ci/budgets; '#' starts a comment). A step
within its warm budget is "ok", within its cold one "ok (cold)", past both
"OVER". "total" is the first begin to the last end. Exits 0 whatever the
times (CI's own limit is the hard one); 2 if a file cannot be read.
"""
import sys


def read_budgets(path):
    budgets = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) == 3:
                budgets[fields[0]] = (int(fields[1]), int(fields[2]))
    return budgets


def read_stamps(path):
    begins, ends, order = {}, {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) != 3 or fields[2] not in ("begin", "end"):
                continue
            when, step, what = int(fields[0]), fields[1], fields[2]
            if what == "begin":
                begins.setdefault(step, when)
                if step not in order:
                    order.append(step)
            else:
                ends[step] = when
    return begins, ends, order


def verdict(took, budget):
    if budget is None or took is None:
        return ""
    warm, cold = budget
    if took <= warm:
        return "ok"
    return "ok (cold)" if took <= cold else "OVER"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        budgets = read_budgets(argv[2])
        begins, ends, order = read_stamps(argv[1])
    except OSError as e:
        print(f"ci-time: {e}", file=sys.stderr)
        return 2
    if not begins:
        print("ci-time: no steps were stamped")
        return 0
    start = min(begins.values())
    rows = []
    for step in order:
        end = ends.get(step)
        took = end - begins[step] if end is not None else None
        rows.append((step, begins[step] - start, took, budgets.get(step)))
    last = max(list(ends.values()) or [start])
    rows.append(("total", 0, last - start, budgets.get("total")))
    print(f"{'step':<22}{'began':>8}{'took':>8}{'warm':>8}{'cold':>8}  verdict")
    for step, began, took, budget in rows:
        took_s = "-" if took is None else str(took)
        warm_s, cold_s = (str(budget[0]), str(budget[1])) if budget else ("-", "-")
        mark = verdict(took, budget) if took is not None else "did not end"
        print(f"{step:<22}{began:>8}{took_s:>8}{warm_s:>8}{cold_s:>8}  {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
