#!/usr/bin/env python3
"""probe.py - sequential requests to our server with its access log on: where
a single request's time goes, without any concurrency.

  probe.py --url http://127.0.0.1:8088/iReporter/ --users users.txt \\
           --small small.jpg --big big.jpg --access-log access.log --out probe.json

One keep-alive connection, one request at a time: N x stream, stream with
IdPhoto, login, upload 640x640, upload 4032x3024 (one logged-in session).
Reads back the server's access-log lines for them (total_ms, parse_ms,
db_ms, image_ms: the server's own timings, wall clock) and reports medians
next to the client-side latency. image_ms of an upload is the whole
preparePhoto step: decode + 180x180 thumbnail + the metadata-stripped copy
of the photo. bench/run.sh turns the access log on for this (config
access_log, reloaded with SIGUSR2) and off again afterwards.
"""
import argparse
import http.client
import json
import re
import statistics
import time
import urllib.parse

BOUNDARY = "Boundary+0xAbCdEfGbOuNdArY"


def multipart(data):
    b = BOUNDARY.encode()
    return (b"--" + b + b'\r\nContent-Disposition: form-data; name="command"\r\n\r\nupload\r\n'
            + b"--" + b + b'\r\nContent-Disposition: form-data; name="title"\r\n\r\nprobe upload\r\n'
            + b"--" + b + b'\r\nContent-Disposition: form-data; name="file"; filename="photo.jpg"\r\n'
            + b"Content-Type: image/jpeg\r\n\r\n" + data + b"\r\n--" + b + b"--\r\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--users", required=True)
    ap.add_argument("--small", required=True)
    ap.add_argument("--big", required=True)
    ap.add_argument("--access-log", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--n-small", type=int, default=40)
    ap.add_argument("--n-big", type=int, default=20)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    users = [l.split() for l in open(a.users) if l.strip()]
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

    def post(body, ctype, cookie=None):
        h = {"Content-Type": ctype}
        if cookie:
            h["Cookie"] = cookie
        t = time.perf_counter()
        conn.request("POST", u.path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        dt = (time.perf_counter() - t) * 1000
        if r.status != 200 or data.startswith(b'{"error"'):
            raise SystemExit(f"probe: HTTP {r.status} {data[:200]!r}")
        return dt, r

    form = "application/x-www-form-urlencoded"
    client = {}
    # warm-up (new workers after the reload)
    for _ in range(20):
        post(b"command=stream", form)
    client["stream"] = [post(b"command=stream", form)[0] for _ in range(a.n)]
    client["stream_id"] = [post(f"command=stream&IdPhoto={2 + (i * 37) % 10000}".encode(), form)[0] for i in range(a.n)]
    client["login"] = []
    cookie = None
    for i in range(a.n):
        name, pw = users[i % len(users)]
        dt, r = post(f"command=login&username={name}&password={pw}".encode(), form)
        client["login"].append(dt)
        c = r.getheader("Set-Cookie") or ""
        m = re.match(r"(PHPSESSID=[^;]+)", c)
        if m and i == 0:
            cookie = m.group(1)
    ctype = "multipart/form-data; boundary=" + BOUNDARY
    small, big = multipart(open(a.small, "rb").read()), multipart(open(a.big, "rb").read())
    client["upload_small"] = [post(small, ctype, cookie)[0] for _ in range(a.n_small)]
    client["upload_big"] = [post(big, ctype, cookie)[0] for _ in range(a.n_big)]
    conn.close()
    time.sleep(0.5)

    # the server's access log: the same requests, in the same order
    kinds = (["stream"] * (20 + a.n) + ["stream_id"] * a.n + ["login"] * a.n
             + ["upload_small"] * a.n_small + ["upload_big"] * a.n_big)
    lines = [l for l in open(a.access_log) if " command=" in l]
    server = {}
    if len(lines) >= len(kinds):
        for i, (kind, line) in enumerate(zip(kinds, lines[-len(kinds):])):
            if i < 20:
                continue  # the warm-up
            f = dict(re.findall(r"(\w+)=(\S+)", line))
            d = server.setdefault(kind, {})
            for k in ("total_ms", "parse_ms", "db_ms", "image_ms"):
                if k in f:
                    d.setdefault(k, []).append(float(f[k]))
    else:
        print(f"probe: only {len(lines)} access-log lines for {len(kinds)} requests; server timings left out")
    out = {"client_ms": {}, "server_ms": {}}
    print(f"{'request':14} {'client p50':>10} {'p90':>7} | server: {'total':>7} {'parse':>7} {'db':>7} {'image':>7}  (median ms, n)")
    for kind, v in client.items():
        s = server.get(kind, {})
        med = {k: round(statistics.median(x), 3) for k, x in s.items() if x}
        out["client_ms"][kind] = {"p50": round(statistics.median(v), 3),
                                  "p90": round(statistics.quantiles(v, n=10)[-1], 3), "n": len(v)}
        out["server_ms"][kind] = med
        print(f"{kind:14} {out['client_ms'][kind]['p50']:10.2f} {out['client_ms'][kind]['p90']:7.2f} | "
              f"        {med.get('total_ms', float('nan')):7.2f} {med.get('parse_ms', float('nan')):7.2f} "
              f"{med.get('db_ms', float('nan')):7.2f} {med.get('image_ms', float('nan')):7.2f}  ({len(v)})")
    json.dump(out, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
