#!/usr/bin/env python3
"""The timeline of an autoscaling run (e2e case 92-autoscaling-loop): one row
per second of the load, from what each part recorded.

Usage: timeline.py START REQUESTS_CSV WATCH QUEUE_JSON OUT_CSV
  START         epoch seconds of the load's start (second 0)
  REQUESTS_CSV  `vegeta encode --to csv` of every request: epoch ns, HTTP
                code, latency ns, bytes out, bytes in, error, body (base64), ...
  WATCH         the ModelService's watch events, one a line, each prefixed
                with the epoch seconds it arrived at
  QUEUE_JSON    a Prometheus query_range answer of the queue length L, step 1s
  OUT_CSV       written: second,sent,ok,failed,queue,desired,ready

Prints to stdout, one per line: "requests N", "failed N", "pods P1=N1 P2=N2 ..."
(who answered how many), "first-answer POD SECOND" per pod, "desired
FROM->TO@SECOND ..." (every change of status.desiredReplicas), "flapping N"
(rises after the first fall: 0 for one step up and down), "scale-out SECOND"
(the first rise), "all-ready SECOND" (ready first reaches the peak desired),
"scale-in SECOND" (the first fall) and "queue-peak L".
"""
import base64
import csv
import json
import math
import sys


def read_requests(path, start):
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.reader(f):
            t = int(r[0]) / 1e9 - start
            code = int(r[1])
            body = base64.b64decode(r[6]) if len(r) > 6 and r[6] else b""
            try:
                pod = json.loads(body).get("pod", "") if code == 200 else ""
            except ValueError:
                pod = ""
            rows.append((t, code, pod))
    return rows


def read_replicas(path, start):
    """(second, desired, ready) at each watch event of the ModelService."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            stamp, _, event = line.partition(" ")
            try:
                obj = json.loads(event)["object"]
            except (ValueError, KeyError):
                continue  # a last line still being written
            status = obj.get("status", {})
            out.append((float(stamp) - start, status.get("desiredReplicas", 0), status.get("readyReplicas", 0)))
    return out


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__)
    start = float(argv[1])
    requests = read_requests(argv[2], start)
    replicas = read_replicas(argv[3], start)
    queue = {}
    for series in json.load(open(argv[4], encoding="utf-8"))["data"]["result"]:
        for t, v in series["values"]:
            queue[round(float(t) - start)] = float(v)
    end = max([t for t, _, _ in requests] + [0])
    seconds = int(math.ceil(end)) + 1
    with open(argv[5], "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["second", "sent", "ok", "failed", "queue", "desired", "ready"])
        desired = ready = 0
        events = iter(replicas)
        pending = next(events, None)
        for s in range(seconds):
            while pending is not None and pending[0] < s + 1:
                _, desired, ready = pending
                pending = next(events, None)
            sent = [r for r in requests if s <= r[0] < s + 1]
            ok = sum(1 for r in sent if r[1] == 200)
            q = queue.get(s, "")
            w.writerow([s, len(sent), ok, len(sent) - ok, q if q == "" else "%g" % q, desired, ready])
    pods = {}
    for t, code, pod in requests:
        if pod:
            n, first = pods.get(pod, (0, t))
            pods[pod] = (n + 1, min(first, t))
    changes, last = [], None
    for t, d, _ in replicas:
        if last is not None and d != last:
            changes.append((last, d, t))
        last = d
    fell = False
    flapping = 0
    for a, b, _ in changes:
        if b < a:
            fell = True
        elif fell:
            flapping += 1
    rises = [t for a, b, t in changes if b > a]
    falls = [t for a, b, t in changes if b < a]
    peak_desired = max([d for _, d, _ in replicas] + [0])
    all_ready = [t for t, _, r in replicas if peak_desired and r >= peak_desired]
    print("requests %d" % len(requests))
    print("failed %d" % sum(1 for r in requests if r[1] != 200))
    print("pods " + " ".join("%s=%d" % (p, n) for p, (n, _) in sorted(pods.items())))
    for p, (_, first) in sorted(pods.items(), key=lambda kv: kv[1][1]):
        print("first-answer %s %.1f" % (p, first))
    print("desired " + " ".join("%d->%d@%.1f" % c for c in changes))
    print("flapping %d" % flapping)
    print("scale-out %s" % ("%.1f" % rises[0] if rises else "-"))
    print("all-ready %s" % ("%.1f" % all_ready[0] if all_ready else "-"))
    print("scale-in %s" % ("%.1f" % falls[0] if falls else "-"))
    print("queue-peak %g" % max(list(queue.values()) + [0]))


if __name__ == "__main__":
    main(sys.argv)
