#!/usr/bin/env python3
"""bench/sizes/measure.py - the measurements of bench/sizes.sh on its running
stack: sizes made on first request (one at a time), then the same URLs as
nginx's static files against nginx's plain photo location (wrk)."""
import argparse
import http.client
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import requests

LETTER_NAMES = {"s": "s (75 square)", "q": "q (150 square)", "t": "t (100)", "m": "m (240)", "n": "n (320)",
                "w": "w (400)", "": "medium (500)", "z": "z (640)", "c": "c (800)", "b": "b (1024)", "o": "o (the photo)"}


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def make_photo(path: Path):
    """A 12 MP baseline JPEG with detail everywhere (a camera's size and layout)."""
    subprocess.run(["convert", "-seed", "12", "-size", "4000x3000", "plasma:fractal", "-blur", "0x1",
                    "-sampling-factor", "4:2:0", "-quality", "90", str(path)], check=True, timeout=300)


def main():
    a = argparse.ArgumentParser()
    for name in ("--api", "--upload-dir", "--mysql", "--sizes", "--duration", "--lua", "--res", "--command"):
        a.add_argument(name, required=True)
    for name in ("--count", "--conns", "--rounds"):
        a.add_argument(name, type=int, required=True)
    args = a.parse_args()
    res, upload = Path(args.res), Path(args.upload_dir)
    letters = ["" if s in ("-", "medium") else s for s in args.sizes.split(",")]
    load_before = os.getloadavg()

    photo = Path("/tmp/ireporter-sizes-bench-12mp.jpg")
    if not photo.exists():
        make_photo(photo)
    session = requests.Session()
    r = session.post(args.api, data={"command": "register", "username": "bench", "password": "bench-pass-1"})
    assert b"IdUser" in r.content, r.content
    r = session.post(args.api, data={"command": "upload", "title": "12 MP"},
                     files={"file": ("photo.jpg", photo.read_bytes(), "image/jpeg")})
    assert r.content == b'{"successful":1}', r.content
    first = session.post(args.api, data={"command": "stream", "extras": "secret,server,width,height"}).json()["result"][0]
    assert (first["width"], first["height"]) == ("4000", "3000"), first
    original = upload / "photos/000/000" / f"2_{first['secret']}_o.jpg"

    # One photo per (size, run): the same 12 MP original under other ids, each with its secret.
    total = args.count * len(letters)
    ids = list(range(3, 3 + total))
    sql = []
    made = {}
    for i in ids:
        made[i] = secrets.token_hex(5)
        sql.append(f"INSERT INTO photos (IdPhoto, IdUser, title) VALUES ({i}, 1, 'clone');"
                   f"INSERT INTO photo_secrets (IdPhoto, secret) VALUES ({i}, '{made[i]}');"
                   f"INSERT INTO photo_details (IdPhoto, created, width, height) VALUES ({i}, 0, 4000, 3000);")
    subprocess.run(args.mysql.split(), input="\n".join(sql).encode(), check=True, timeout=300)
    for i in ids:
        folder = upload / "photos" / f"{i // 1000 // 1000:03d}" / f"{i // 1000 % 1000:03d}"
        if not folder.exists():
            folder.mkdir(parents=True)
            shutil.chown(folder, "www-data", "www-data")
        os.link(original, folder / f"{i}_{made[i]}_o.jpg")

    api = urllib.parse.urlsplit(args.api)
    connection = http.client.HTTPConnection(api.hostname, api.port, timeout=60)

    def get(path):
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        return time.perf_counter() - started, response.status, response.getheader("Last-Modified"), body

    def size_path(i, letter):
        return f"/iReporter/photos/{i // 1000:06d}/{i}_{made[i]}{'_' + letter if letter else ''}.jpg"

    records = []
    first_request = {}
    for n, letter in enumerate(letters):
        latencies = []
        for i in ids[n * args.count:(n + 1) * args.count]:
            seconds, status, modified, body = get(size_path(i, letter))
            assert status == 200 and body[:2] == b"\xff\xd8" and modified is None, (letter, status, modified)
            latencies.append(seconds * 1000)
        row = {"test": "first request", "size": LETTER_NAMES[letter], "count": len(latencies),
               "p50_ms": round(percentile(latencies, 50), 1), "p90_ms": round(percentile(latencies, 90), 1),
               "p99_ms": round(percentile(latencies, 99), 1), "max_ms": round(max(latencies), 1),
               "mean_ms": round(statistics.mean(latencies), 1), "bytes": len(body)}
        first_request[letter] = row
        records.append(row)
        print(json.dumps(row), flush=True)
    connection.close()

    # (2) the static answer, against nginx's plain photo location serving the same bytes.
    letter = "z" if "z" in letters else letters[0]
    i = ids[letters.index(letter) * args.count]
    sized = size_path(i, letter)
    rendered = (upload / "photos" / "000" / "000" / sized.rsplit("/", 1)[1]).read_bytes()
    plain = upload / "900000.jpg"
    plain.write_bytes(rendered)
    plain.chmod(0o644)
    base = f"http://{api.hostname}:{api.port}"
    runs = {"size URL (try_files)": base + sized, "plain file (upload/<id>.jpg)": base + "/iReporter/upload/900000.jpg"}
    static = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, url in runs.items():
            out = subprocess.run(["wrk", "-t2", f"-c{args.conns}", f"-d{args.duration}", "-s", args.lua, url],
                                 capture_output=True, text=True, timeout=600, env=dict(os.environ, EXPECT="")).stdout
            result = json.loads(next(line for line in out.splitlines() if line.startswith("WRKJSON "))[8:])
            assert result["bad_status"] == 0 and result["bad_body"] == 0, result
            rate = result["requests"] / (result["duration_us"] / 1e6)
            static[name].append(rate)
            row = {"test": "static", "url": name, "bytes": len(rendered), "conns": args.conns, "duration": args.duration,
                   "req_per_s": round(rate), "p50_us": result["p50_us"], "p99_us": result["p99_us"]}
            records.append(row)
            print(json.dumps(row), flush=True)
    load_after = os.getloadavg()

    with open(res / "sizes.jsonl", "w") as f:
        for row in records:
            f.write(json.dumps(row) + "\n")
    medians = {name: statistics.median(rates) for name, rates in static.items()}
    names = list(runs)
    ratio = medians[names[0]] / medians[names[1]]
    lines = [f"# Photo sizes: made on first request, then static ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             "Command (as root, from the repository):", "", "```sh", args.command, "```", "",
             f"Machine: {os.cpu_count()} CPUs; load average before {load_before[0]:.2f} {load_before[1]:.2f} "
             f"{load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} "
             "(other engineers' builds and tests share it).", "",
             "## A missing size of a 12 MP photo (4000x3000 baseline JPEG), first request", "",
             f"{args.count} photos per size, each asked once, one request at a time (nginx try_files miss -> "
             "FastCGI size route: secret checked, DCT-scaled decode of the original, resample, encode, "
             "fsync + rename into the tree, answer). Target p99 <= 40 ms.", "",
             "| size | requests | p50 ms | p90 ms | p99 ms | max ms | mean ms | bytes |", "|---|---|---|---|---|---|---|---|"]
    for row in first_request.values():
        lines.append(f"| {row['size']} | {row['count']} | {row['p50_ms']} | {row['p90_ms']} | {row['p99_ms']} | "
                     f"{row['max_ms']} | {row['mean_ms']} | {row['bytes']} |")
    lines += ["", f"## The same URL afterwards: nginx's static file, against a plain static file of the same {len(rendered)} bytes", "",
              f"wrk -t2 -c{args.conns} -d{args.duration}, {args.rounds} alternating rounds; requests/s (median of the rounds).", "",
              "| URL | rounds (req/s) | median req/s |", "|---|---|---|"]
    for name in names:
        lines.append(f"| {name} | {', '.join(str(round(r)) for r in static[name])} | {round(medians[name])} |")
    lines += ["", f"Size URL / plain file: {ratio:.3f} (target: within 10%, i.e. >= 0.90).", ""]
    (res / "sizes.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
