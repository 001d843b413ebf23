#!/usr/bin/env python3
"""reactions.py - the benchmarks of issue 15, side by side in one run, on
a stack that bench/reactions.sh started (scripts/stack.sh: MariaDB, the
server, nginx with Nchan):

  seed       PHOTOS photos (default 1 000 000), VOTES_PER_PHOTO votes each
             (10: 10 M), COMMENTS_PER_PHOTO comments (1: 1 M), USERS users,
             counts and details as the commands keep them; SQL only (seq engine)
  stream            the plain stream (cached by each worker)
  stream_uncached   the same 50 photos by a cursor query (count=50)
  stream_since      `since` = the newest id: nothing new (polling)
  stream_before     `before` = a random id: pages anywhere in the table (cursors)
  stream_before_1conn  the same over one connection (no queueing)
  stream_extras     extras=likes,dislikes,comments,myvote, 32 phones logged in
  stream_one        one photo by id (IdPhoto cycling), one call per request
  rpc_batch10       a JSON-RPC batch of 10 such calls per request
  live              SUBSCRIBERS (1000: the live location's total, 20 per
                    loopback address) idle EventSource subscribers on nginx's
                    Nchan, one upload, the delay until each got it; nginx
                    memory per subscriber; workers busy meanwhile
  effects           each effect on a 640x640 and a 12 MP upload, the image
                    time the server's access log records against no effect

  python3 bench/reactions.py --run-dir DIR --port PORT --out RESULTS_DIR

Every wrk run is checked (HTTP 200 and the expected start of each body).
Results: RESULTS_DIR/results.json and results.md (with the commands).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import selectors
import shlex
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "Tests" / "EndToEnd"))
from appclient import AppClient, Endpoint, jpeg_size  # noqa: E402

PHOTOS = int(os.environ.get("PHOTOS", 1_000_000))
VOTES_PER_PHOTO = int(os.environ.get("VOTES_PER_PHOTO", 10))
COMMENTS_PER_PHOTO = int(os.environ.get("COMMENTS_PER_PHOTO", 1))
USERS = int(os.environ.get("USERS", 10_000))
SUBSCRIBERS = int(os.environ.get("SUBSCRIBERS", 1000))
# deploy/nginx/ireporter-live.conf's subscribers per client address.
PER_ADDRESS = 20
DUR = os.environ.get("DUR", "10s")
CONNS = int(os.environ.get("CONNS", 32))
EFFECT_REPS = int(os.environ.get("EFFECT_REPS", 3))
EPOCH = 1_764_547_200


class Stack:
    def __init__(self, run_dir: Path, port: int):
        self.run_dir = run_dir
        self.port = port
        self.base = f"http://127.0.0.1:{port}/iReporter/"
        self.sql_prefix = ["mariadb", f"--defaults-file={run_dir}/mariadb/my.cnf", "-u", "root", "iReport"]

    def sql(self, text: str) -> list[list[str]]:
        p = subprocess.run(self.sql_prefix + ["-N", "-B"], input=text.encode(), capture_output=True, timeout=3600)
        if p.returncode:
            raise RuntimeError(f"SQL failed: {text[:200]}: {p.stderr.decode()}")
        return [line.split("\t") for line in p.stdout.decode("latin-1").splitlines()]


def seed(stack: Stack) -> dict:
    started = time.monotonic()
    schema = (REPO / "sql" / "schema.sql").read_text()
    migrations = "".join(p.read_text() for p in sorted((REPO / "sql" / "migrations").glob("*.sql")))
    stack.sql("DROP TABLE IF EXISTS login, photos, photo_details, photo_counts, votes, comments;\n" + schema + migrations)
    votes = PHOTOS * VOTES_PER_PHOTO
    comments = PHOTOS * COMMENTS_PER_PHOTO

    def chunks(first: int, last: int, size: int = 1_000_000):
        """first..last in ranges of `size` (one statement, one transaction each)."""
        return [(a, min(a + size - 1, last)) for a in range(first, last + 1, size)]

    steps = [("users", [f"INSERT INTO login (username, pass) SELECT CONCAT('user', seq), SHA1(CONCAT('pass', seq)) "
                        f"FROM seq_1_to_{USERS}"]),
             ("photos", [f"INSERT INTO photos (IdUser, title) SELECT 1 + seq % {USERS}, CONCAT('Photo ', seq) "
                         f"FROM seq_{a}_to_{b}" for a, b in chunks(1, PHOTOS)]),
             ("details", [f"INSERT INTO photo_details SELECT IdPhoto, {EPOCH} + IdPhoto, 640, 640 FROM photos "
                          f"WHERE IdPhoto BETWEEN {a} AND {b}" for a, b in chunks(2, PHOTOS + 1)]),
             # For photo p the voters 1 + (13 p + 1009 k) mod USERS, k < VOTES_PER_PHOTO: all different.
             ("votes", [f"INSERT INTO votes (IdPhoto, IdUser, vote) SELECT 2 + seq DIV {VOTES_PER_PHOTO}, "
                        f"1 + ((seq DIV {VOTES_PER_PHOTO}) * 13 + (seq MOD {VOTES_PER_PHOTO}) * 1009) MOD {USERS}, "
                        f"IF(seq MOD 4 = 0, -1, 1) FROM seq_{a}_to_{b}" for a, b in chunks(0, votes - 1)]),
             ("comments", [f"INSERT INTO comments (IdPhoto, IdUser, text, created) SELECT 2 + seq DIV {COMMENTS_PER_PHOTO}, "
                           f"1 + seq % {USERS}, CONCAT('comment ', seq), {EPOCH} + seq FROM seq_{a}_to_{b}"
                           for a, b in chunks(0, comments - 1)]),
             ("counts", [f"INSERT INTO photo_counts (IdPhoto, likes, dislikes, comments) SELECT IdPhoto, SUM(vote = 1), "
                         f"SUM(vote = -1), {COMMENTS_PER_PHOTO} FROM votes WHERE IdPhoto BETWEEN {a} AND {b} "
                         f"GROUP BY IdPhoto" for a, b in chunks(2, PHOTOS + 1)]),
             ("analyze", ["ANALYZE TABLE login, photos, photo_details, photo_counts, votes, comments"])]
    timings = {}
    for name, statements in steps:
        t0 = time.monotonic()
        stack.sql("SET SESSION unique_checks = 0;\n" + ";\n".join(statements) + ";")
        timings[name] = round(time.monotonic() - t0, 1)
        print(f"[reactions] seeded {name} in {timings[name]} s", flush=True)
    counts = {t: int(stack.sql(f"SELECT COUNT(*) FROM {t}")[0][0])
              for t in ("login", "photos", "votes", "comments", "photo_counts", "photo_details")}
    return {"seconds": round(time.monotonic() - started, 1), "steps": timings, "rows": counts}


def wrk(name: str, stack: Stack, template: str, expect: str, conns: int = CONNS, path: str = "/iReporter/",
        **env) -> dict:
    command = ["wrk", f"-t{min(2, conns)}", f"-c{conns}", f"-d{DUR}", "--latency", "-s", str(HERE / "lua" / "template.lua"),
               f"http://127.0.0.1:{stack.port}{path}"]
    full_env = {**os.environ, "TEMPLATE": template, "EXPECT": expect, **{k: str(v) for k, v in env.items()}}
    p = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=600)
    line = next((x for x in p.stdout.splitlines() if x.startswith("WRKJSON ")), None)
    if line is None:
        raise RuntimeError(f"{name}: no WRKJSON line:\n{p.stdout}\n{p.stderr}")
    result = json.loads(line[len("WRKJSON "):])
    result["rps"] = round(result["requests"] / (result["duration_us"] / 1e6), 1)
    shown = {"TEMPLATE": template, "EXPECT": expect, **env}
    if "COOKIES" in shown:
        shown["COOKIES"] = f"<{len(str(env['COOKIES']).split())} session cookies>"
    shown_env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in shown.items())
    result["command"] = f"{shown_env} {' '.join(shlex.quote(c) for c in command)}"
    bad = result["bad_status"] + result["bad_body"] + result["err_connect"] + result["err_read"] + result["err_timeout"]
    print(f"[reactions] {name:16} {result['rps']:9.1f} req/s  p50 {result['p50_us'] / 1000:6.2f} ms  "
          f"p99 {result['p99_us'] / 1000:6.2f} ms  bad {bad} {result['bad_sample'][:80]}", flush=True)
    if bad:
        raise RuntimeError(f"{name}: {bad} bad answers, e.g. {result['bad_sample']}")
    return result


def login_cookies(stack: Stack, count: int = 32) -> str:
    """Sessions of `count` users, as wrk's COOKIES (one session per phone: a
    session's file is locked while it is read)."""
    cookies = []
    for i in range(count):
        with AppClient(Endpoint(stack.base)) as phone:
            name = f"viewer{i}"
            r = phone.register(name, "0" * 40)
            if b'"error"' in r.body:
                r = phone.login(name, "0" * 40)
            assert b'"result"' in r.body, r.body
            cookies.append(f"PHPSESSID={phone.session_id}")
    return " ".join(cookies)


def explain_before(stack: Stack) -> list:
    rows = stack.sql("EXPLAIN SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username FROM photos p "
                     "JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto > 0 AND p.IdPhoto < 500000 "
                     "ORDER BY p.IdPhoto DESC LIMIT 50")
    return rows


def nginx_pids(stack: Stack) -> list[int]:
    master = int((stack.run_dir / "nginx" / "nginx.pid").read_text())
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True).stdout.split()
    return [master] + [int(x) for x in out]


def rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def status(stack: Stack) -> dict:
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{stack.port}/ireporter-status?json", timeout=10).read())


def live(stack: Stack, jpeg: bytes) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, SUBSCRIBERS + 256), max(hard, SUBSCRIBERS + 256)))
    rss_before = rss_kib(nginx_pids(stack))
    request = (f"GET /iReporter/live HTTP/1.1\r\nHost: 127.0.0.1:{stack.port}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    selector = selectors.DefaultSelector()
    buffers: dict[socket.socket, bytes] = {}
    t0 = time.monotonic()
    for n in range(SUBSCRIBERS):
        source = f"127.0.{8 + n // PER_ADDRESS // 250}.{n // PER_ADDRESS % 250 + 1}"
        s = socket.create_connection(("127.0.0.1", stack.port), timeout=10, source_address=(source, 0))
        s.sendall(request)
        s.setblocking(False)
        buffers[s] = b""
        selector.register(s, selectors.EVENT_READ)
    subscribed = set()
    while len(subscribed) < SUBSCRIBERS and time.monotonic() - t0 < 60:
        for key, _ in selector.select(timeout=1):
            s = key.fileobj
            chunk = s.recv(65536)
            buffers[s] += chunk
            if b"\r\n\r\n" in buffers[s]:
                subscribed.add(s)
    connect_seconds = time.monotonic() - t0
    assert len(subscribed) == SUBSCRIBERS, f"only {len(subscribed)} of {SUBSCRIBERS} subscribed"
    for s in buffers:
        buffers[s] = buffers[s].split(b"\r\n\r\n", 1)[1]
    time.sleep(1)
    rss_with = rss_kib(nginx_pids(stack))
    busy_workers = status(stack)["active processes"] - 1  # the one answering
    with AppClient(Endpoint(stack.base)) as phone:
        assert b'"result"' in phone.register("benchlive", "1" * 40).body
        published = time.monotonic()
        assert phone.upload(jpeg, "live").body == b'{"successful":1}'
        upload_answered = time.monotonic() - published
    delays: dict[socket.socket, float] = {}
    while len(delays) < SUBSCRIBERS and time.monotonic() - published < 10:
        for key, _ in selector.select(timeout=0.5):
            s = key.fileobj
            try:
                buffers[s] += s.recv(65536)
            except BlockingIOError:
                continue
            if s not in delays and b'"title":"live"' in buffers[s]:
                delays[s] = time.monotonic() - published
    for s in buffers:
        selector.unregister(s)
        s.close()
    got = sorted(delays.values())
    within = sum(d <= 1.0 for d in got)
    result = {"subscribers": SUBSCRIBERS, "connect_seconds": round(connect_seconds, 2),
              "busy_workers_while_subscribed": busy_workers,
              "nginx_rss_kib_before": rss_before, "nginx_rss_kib_with": rss_with,
              "nginx_kib_per_subscriber": round((rss_with - rss_before) / SUBSCRIBERS, 2),
              "upload_answered_s": round(upload_answered, 3), "received": len(got),
              "within_1s": within, "within_1s_pct": round(100 * within / SUBSCRIBERS, 2),
              "delay_p50_ms": round(1000 * got[len(got) // 2], 1) if got else None,
              "delay_p99_ms": round(1000 * got[max(0, int(len(got) * 0.99) - 1)], 1) if got else None,
              "delay_max_ms": round(1000 * got[-1], 1) if got else None}
    print(f"[reactions] live {result}", flush=True)
    return result


def effects(stack: Stack, images: dict[str, bytes], access_log: Path) -> dict:
    with AppClient(Endpoint(stack.base), timeout=120) as phone:
        assert b'"result"' in phone.register("benchfx", "2" * 40).body
        names = [None] + [e["effect"] for e in json.loads(phone.call({"command": "effects"}).body)["result"]]
        out = {}
        for size, jpeg in images.items():
            out[size] = {}
            for effect in names:
                times = []
                for rep in range(EFFECT_REPS):
                    marker = f"fx-{size}-{effect}-{rep}"
                    fields = {"command": "upload", "title": marker}
                    if effect:
                        fields["effect"] = effect
                    r = phone.request("POST", f"/iReporter/?{marker}", *multipart(fields, jpeg))
                    assert r.body == b'{"successful":1}', (effect, r.body[:200])
                    line = wait_for_line(access_log, marker)
                    times.append(int(re.search(r" image_ms=(\d+)", line).group(1)))
                out[size][effect or "none"] = statistics.median(times)
            base = out[size]["none"]
            out[size] = {name: {"image_ms": ms, "added_ms": ms - base} for name, ms in out[size].items()}
            print(f"[reactions] effects {size}: {json.dumps(out[size])}", flush=True)
        return out


def multipart(fields: dict, jpeg: bytes):
    from appclient import FilePart, multipart_body, multipart_content_type
    return multipart_body(sorted(fields.items()), [FilePart(jpeg)]), multipart_content_type()


def wait_for_line(path: Path, marker: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in path.read_text(errors="replace").splitlines():
            if marker in line:
                return line
        time.sleep(0.05)
    raise RuntimeError(f"no access log line with {marker} in {path}")


def make_jpeg(path: Path, size: str) -> bytes:
    subprocess.run(["convert", "-seed", "42", "-size", size, "plasma:fractal", "-sampling-factor", "4:2:0",
                    "-quality", "85", str(path)], check=True, timeout=300)
    return path.read_bytes()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-dir", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--access-log", required=True, type=Path)
    args = parser.parse_args()
    stack = Stack(args.run_dir, args.port)
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict = {"sizes": {"photos": PHOTOS, "votes": PHOTOS * VOTES_PER_PHOTO,
                               "comments": PHOTOS * COMMENTS_PER_PHOTO, "users": USERS},
                     "wrk": {"duration": DUR, "connections": CONNS, "threads": 2}}
    results["seed"] = seed(stack)
    newest = PHOTOS + 1
    cookies = login_cookies(stack)
    stream_expect = '{"result":[{"IdPhoto":'
    runs = {}
    runs["stream"] = wrk("stream", stack, "command=stream", stream_expect)
    # The same 50 photos by a cursor query (not from the cache): what the stream costs uncached.
    runs["stream_uncached"] = wrk("stream_uncached", stack, "command=stream&count=50", stream_expect)
    runs["stream_since"] = wrk("stream_since", stack, f"command=stream&since={newest}", '{"result":[]}')
    runs["stream_before"] = wrk("stream_before", stack, "command=stream&before={n}", stream_expect,
                                LO=1000, HI=newest, RANDOM=1)
    # The same pages one at a time: what a deep page costs without queueing behind 31 others.
    runs["stream_before_1conn"] = wrk("stream_before_1conn", stack, "command=stream&before={n}", stream_expect,
                                      conns=1, LO=1000, HI=newest, RANDOM=1)
    runs["stream_extras"] = wrk("stream_extras", stack, "command=stream&extras=likes,dislikes,comments,myvote",
                                stream_expect, COOKIES=cookies)
    runs["stream_one"] = wrk("stream_one", stack, "command=stream&IdPhoto={n}", stream_expect, LO=2, HI=newest)
    call = '{"jsonrpc":"2.0","method":"stream","params":{"IdPhoto":{n}},"id":{n}}'
    runs["rpc_batch10"] = wrk("rpc_batch10", stack, "[" + ",".join([call] * 10) + "]", '[{"jsonrpc":"2.0","result":[{',
                              path="/iReporter/rpc", CTYPE="application/json", LO=2, HI=newest)
    results["runs"] = runs
    results["explain_before"] = explain_before(stack)
    work = args.out / "images"
    work.mkdir(exist_ok=True)
    images = {"640x640": make_jpeg(work / "small.jpg", "640x640"), "12MP": make_jpeg(work / "big.jpg", "4000x3000")}
    results["live"] = live(stack, images["640x640"])
    results["effects"] = effects(stack, images, args.access_log)
    for p in work.iterdir():
        p.unlink()
    work.rmdir()
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (args.out / "results.md").write_text(report(results))
    print((args.out / "results.md").read_text())


def report(r: dict) -> str:
    runs = r["runs"]
    rps = {name: run["rps"] for name, run in runs.items()}
    lines = [
        "# Issue 15 benchmarks (bench/reactions.sh)", "",
        f"Data: {r['seed']['rows']['photos']:,} photos, {r['seed']['rows']['votes']:,} votes, "
        f"{r['seed']['rows']['comments']:,} comments, {r['seed']['rows']['login']:,} users; seeded in "
        f"{r['seed']['seconds']} s ({r['seed']['steps']}). wrk -t2 -c{r['wrk']['connections']} -d{r['wrk']['duration']}, "
        "every answer checked. One machine (2 cores) for wrk, nginx, the server (4 workers) and MariaDB.", "",
        "| scenario | req/s | p50 ms | p99 ms | target | met |", "|---|---|---|---|---|---|",
    ]
    targets = {
        "stream": ("(the reference: cached full stream)", None),
        "stream_uncached": ("(the same 50 photos by a query)", None),
        "stream_since": ("≥ the cached stream's rate", rps["stream_since"] >= rps["stream"] * 0.95),
        "stream_before": ("p99 ≤ 10 ms, index range only", runs["stream_before"]["p99_us"] <= 10_000),
        "stream_before_1conn": ("(the same, 1 connection: the page's own cost)", None),
        "stream_extras": ("≥ half the plain stream's rate", rps["stream_extras"] >= rps["stream"] / 2),
        "stream_one": ("(10 calls one by one: req/s ÷ 10 per 10 calls)", None),
        "rpc_batch10": ("≥ 4x the calls/s of one by one", rps["rpc_batch10"] * 10 >= 4 * rps["stream_one"]),
    }
    for name, run in runs.items():
        target, met = targets[name]
        lines.append(f"| {name} | {run['rps']:,.0f} | {run['p50_us'] / 1000:.2f} | {run['p99_us'] / 1000:.2f} | {target} | "
                     f"{'' if met is None else ('yes' if met else 'NO')} |")
    lines += ["", f"JSON-RPC batch of 10: {rps['rpc_batch10'] * 10:,.0f} calls/s against {rps['stream_one']:,.0f} "
              f"one by one ({rps['rpc_batch10'] * 10 / rps['stream_one']:.1f}x).", "",
              "EXPLAIN of a deep `before` page (type, key, Extra per table):", ""]
    for row in r["explain_before"]:
        lines.append(f"- `{' | '.join(row)}`")
    lv = r["live"]
    lines += ["", "## Live stream (Nchan)", "",
              f"{lv['subscribers']} idle EventSource subscribers (connected in {lv['connect_seconds']} s); "
              f"workers busy meanwhile: {lv['busy_workers_while_subscribed']}; nginx RSS {lv['nginx_rss_kib_before']} KiB "
              f"before, {lv['nginx_rss_kib_with']} KiB with them: {lv['nginx_kib_per_subscriber']} KiB per subscriber. "
              f"One upload (answered in {lv['upload_answered_s']} s): received by {lv['received']}, "
              f"{lv['within_1s_pct']} % within 1 s (target 99 %: {'met' if lv['within_1s_pct'] >= 99 else 'NOT met'}); "
              f"delay p50 {lv['delay_p50_ms']} ms, p99 {lv['delay_p99_ms']} ms, max {lv['delay_max_ms']} ms.", "",
              "## Effects: image time per upload (server access log, median of "
              f"{EFFECT_REPS}), added to an upload without effect", "",
              "| effect | 640x640 ms | added | 12 MP ms | added |", "|---|---|---|---|---|"]
    fx = r["effects"]
    for name in fx["640x640"]:
        a, b = fx["640x640"][name], fx["12MP"][name]
        lines.append(f"| {name} | {a['image_ms']} | {a['added_ms']:+} | {b['image_ms']} | {b['added_ms']:+} |")
    lines += ["", "An upload without effect decodes at 1/8 scale for the thumbnail and copies the photo's",
              "compressed data; with an effect the photo is decoded at full size, filtered and encoded",
              "again: the added time is mostly that full decode and encode.", "", "## Commands", "",
              "```sh", "flock /tmp/ireporter-make-test.lock bench/reactions.sh", "```", ""]
    for name, run in runs.items():
        lines.append(f"- {name}: `{run['command']}`")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
