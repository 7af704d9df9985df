#!/usr/bin/python3
"""Differential check of HTTP/1.1 request framing: shared/transport/http1.h
(through the http1_frames driver) against h11, an independent strict parser
(Debian's python3-h11).

On each random or mutated client stream, ours must decide the same as h11 or
more strictly, never more loosely:
  - every request ours hands to its handler, h11 also parses, in the same
    place of the stream, with the same method, target and body bytes;
  - where h11 parses more requests than ours, ours has refused (or waits for
    more bytes, serving nothing).
A request ours serves that h11 refuses, or a different boundary or body, is
a failure. Prints the counts and exits 1 on the first disagreement (the case
is written to --out for test/fuzz/corpus/http1).

Usage: h11_diff.py --driver build/test/fuzz/http1_frames [--cases N]
                   [--seed S] [--seconds T] [--corpus DIR] [--out FILE]
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import time

import h11

MAX_BODY = 1 << 20


def keeps_alive_10(event):
    """An HTTP/1.0 request asking for keep-alive: h11 closes after every
    HTTP/1.0 request (it does not implement 1.0 keep-alive, which RFC 9112
    9.3 allows), so the rest of the stream is framed as on a new connection."""
    if event.http_version != b"1.0":
        return False
    tokens = set()
    for name, value in event.headers:
        if name == b"connection":
            tokens.update(t.strip().lower() for t in value.split(b","))
    return b"keep-alive" in tokens and b"close" not in tokens


def skip_empty_lines(data):
    """RFC 9112 2.2: a server SHOULD ignore at least one empty line before a
    request line; ours ignores any number (CRLF or LF), h11 none. That one
    difference is taken out here: h11 sees each request without them."""
    while True:
        if data.startswith(b"\n"):
            data = data[1:]
        elif data.startswith(b"\r\n"):
            data = data[2:]
        else:
            return data


def h11_frames(data):
    """The requests h11 parses from `data`, and how it ends: 'error',
    'pending' (needs more bytes), 'closed' (the connection must close) or
    'idle'."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=16 * 1024)
    conn.receive_data(skip_empty_lines(data))
    requests = []
    current = None
    keep_alive_10 = False
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            return requests, "error"
        if isinstance(event, h11.Request):
            current = {"method": event.method.decode("latin-1"), "target": event.target.decode("latin-1"), "body": b""}
            keep_alive_10 = keeps_alive_10(event)
            length = dict(event.headers).get(b"content-length")
            if length is not None and int(length) > MAX_BODY:
                return requests, "error"  # ours refuses with 413: counted as a refusal
        elif isinstance(event, h11.Data):
            current["body"] += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            current["body"] = current["body"].hex()
            requests.append(current)
            current = None
            conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
            conn.send(h11.EndOfMessage())
            if not keep_alive_10 and (conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE):
                return requests, "closed"
            # The next request on a new h11 connection (the same framing),
            # without the empty lines before it.
            rest = conn.trailing_data[0]
            conn = h11.Connection(h11.SERVER, max_incomplete_event_size=16 * 1024)
            conn.receive_data(skip_empty_lines(bytes(rest)))
        elif event is h11.NEED_DATA:
            return requests, "pending" if current is not None or conn.trailing_data[0] else "idle"
        elif event is h11.PAUSED:
            return requests, "closed"
        elif isinstance(event, h11.ConnectionClosed):
            return requests, "closed"


def ours(driver, cases):
    payload = b"".join(struct.pack("<I", len(c)) + c for c in cases)
    out = subprocess.run([driver], input=payload, stdout=subprocess.PIPE, check=True).stdout
    return [json.loads(line) for line in out.decode().splitlines()]


HEADS = [
    b"POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /a HTTP/1.0\r\n\r\n",
    b"POST /m HTTP/1.1\nHost: h\nContent-Length: 5\n\nhello",
    b"POST /m HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"POST /m HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
    b"GET /k HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    b"POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nz",
    b"GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
]
TOKENS = [b"\r", b"\n", b"\r\n", b"\0", b" ", b"\t", b":", b"0", b"9", b"-", b"+", b",", b"\x7f", b"\xff", b"\x01",
          b"Host: y\r\n", b"Content-Length: 4\r\n", b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n",
          b"Connection: close\r\n", b"HTTP/1.1", b"HTTP/1.0", b"\r\n\r\n", b" HTTP/1.1\r\n", b"GET / HTTP/1.1\r\n"]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(data))
        if op == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[pos:pos] = rng.choice(TOKENS)
        elif op == 2 and data:
            del data[pos:pos + rng.randint(1, 4)]
        elif op == 3:
            data[pos:pos] = rng.choice(HEADS)
        elif op == 4 and data:
            end = rng.randint(pos, len(data))
            data[pos:pos] = data[pos:end]
        else:
            data += rng.choice(HEADS)
    return bytes(data)


def random_case(rng, seeds):
    r = rng.random()
    if r < 0.05:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
    base = b"".join(rng.choice(seeds) for _ in range(rng.randint(1, 3)))
    return mutate(rng, base) if r < 0.9 else base


def compare(mine, data):
    theirs, end = h11_frames(data)
    served = mine["requests"]
    if len(served) > len(theirs):
        return "ours served %d requests, h11 parsed %d (%s)" % (len(served), len(theirs), end)
    for i, (a, b) in enumerate(zip(served, theirs)):
        if a != b:
            return "request %d differs: ours %r, h11 %r" % (i, a, b)
    if len(served) < len(theirs) and not mine["refused"] and not mine["pending"]:
        return "h11 parsed %d requests, ours served %d without refusing" % (len(theirs), len(served))
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--driver", required=True)
    p.add_argument("--cases", type=int, default=10000)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--corpus", default=None)
    p.add_argument("--out", default="h11-diff-failure.bin")
    a = p.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    seeds = list(HEADS)
    if a.corpus and os.path.isdir(a.corpus):
        for name in sorted(os.listdir(a.corpus)):
            with open(os.path.join(a.corpus, name), "rb") as f:
                seeds.append(f.read()[:4096])
    start = time.time()
    total = same = stricter = 0
    while total < a.cases or (a.seconds and time.time() - start < a.seconds):
        batch = [random_case(rng, seeds) for _ in range(500)]
        if total == 0:
            batch = seeds + batch
        for data, mine in zip(batch, ours(a.driver, batch)):
            total += 1
            failure = compare(mine, data)
            if failure:
                with open(a.out, "wb") as f:
                    f.write(data)
                print("h11 differential: LOOSER than h11 (seed %d): %s\ncase %r (written to %s)" %
                      (seed, failure, data, a.out))
                return 1
            theirs, _ = h11_frames(data)
            if len(mine["requests"]) == len(theirs) and (bool(mine["refused"]) == (_ == "error")):
                same += 1
            else:
                stricter += 1
        if a.seconds == 0 and total >= a.cases:
            break
    print("h11 differential: %d cases (seed %d): %d decided the same, %d stricter than h11, 0 looser" %
          (total, seed, same, stricter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
