#!/usr/bin/env python3
"""bench/register_flood.py URL [options] - stream latency while `register`
is flooded, as issue 12 measured it (32 and 128 concurrent registrations of a
taken name from one address took the stream's median from 1 ms to 490 ms and
2.1 s when each one hashed the password before looking at the name).

For each concurrency: the median and p90 of N sequential `stream` requests
alone, then again while that many clients register a taken name from one
address, back to back. With --fresh-names the flood registers new names
instead, each client from its own loopback address (every one costs a
password hash: the load the hashing gate bounds).

Bounded: at most --requests streams per measurement, every flooding client
stops after --max-per-client registrations or --seconds, whichever comes
first. Loopback only (127.x.y.z source addresses).

    python3 bench/register_flood.py http://127.0.0.1:8080/iReporter/ --concurrency 32 128

Needs a server whose `login.pass` holds hashes (`make up` does) for the
numbers to mean anything; registers `flood-target` if it does not exist.
"""
from __future__ import annotations

import argparse
import http.client
import statistics
import threading
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor


def post(url, fields: dict[str, str], source: str | None = None, timeout: float = 60) -> bytes:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request("POST", u.path, urllib.parse.urlencode(fields),
                     {"Content-Type": "application/x-www-form-urlencoded"})
        return conn.getresponse().read()
    finally:
        conn.close()


def stream_latencies(url: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        body = post(url, {"command": "stream"})
        times.append((time.monotonic() - t0) * 1000)
        assert body.startswith(b'{"result":['), body[:200]
    return times


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    return f"median {statistics.median(ordered):7.1f} ms, p90 {ordered[int(len(ordered) * 0.9) - 1]:7.1f} ms"


def flood(url: str, concurrency: int, args) -> tuple[list[float], dict[bytes, int]]:
    stop = threading.Event()
    deadline = time.monotonic() + args.seconds
    answers: dict[bytes, int] = {}
    lock = threading.Lock()

    def client(index: int):
        source = f"127.0.{100 + index // 250}.{1 + index % 250}" if args.fresh_names else "127.0.99.1"
        for n in range(args.max_per_client):
            if stop.is_set() or time.monotonic() > deadline:
                return
            name = f"flood-{uuid.uuid4().hex[:12]}" if args.fresh_names else "flood-target"
            body = post(url, {"command": "register", "username": name, "password": "x" * 40}, source)
            key = b'{"result":...}' if body.startswith(b'{"result":') else body.split(b" try again")[0][:60]
            with lock:
                answers[key] = answers.get(key, 0) + 1

    with ThreadPoolExecutor(concurrency) as pool:
        clients = [pool.submit(client, i) for i in range(concurrency)]
        time.sleep(args.warmup)
        times = stream_latencies(url, args.requests)
        stop.set()
        for c in clients:
            c.result(timeout=args.seconds + 60)
    return times, answers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    ap.add_argument("--requests", type=int, default=50, help="streams per measurement")
    ap.add_argument("--seconds", type=float, default=30, help="longest a flood runs")
    ap.add_argument("--max-per-client", type=int, default=40)
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds of flood before measuring")
    ap.add_argument("--fresh-names", action="store_true", help="register new names, one address per client")
    args = ap.parse_args()
    if not args.fresh_names:
        post(args.url, {"command": "register", "username": "flood-target", "password": "x" * 40})
    for concurrency in args.concurrency:
        alone = stream_latencies(args.url, args.requests)
        print(f"stream alone:                         {summary(alone)}")
        times, answers = flood(args.url, concurrency, args)
        kind = "new names, one address each" if args.fresh_names else "a taken name, one address"
        print(f"stream, {concurrency:4d} clients registering {kind}: {summary(times)}")
        for answer, count in sorted(answers.items(), key=lambda kv: -kv[1]):
            print(f"    {count:6d} x {answer.decode(errors='replace')}")
        time.sleep(1)


if __name__ == "__main__":
    main()
