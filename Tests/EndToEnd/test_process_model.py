"""The process model under a real web server: Apache 2.4 + mod_proxy_fcgi
(deploy/apache/ireporter-proxy-fcgi.conf, 127.0.0.1:8095), which streams
request bodies to the server as they arrive, so a slow upload really holds a
worker. The status page (/ireporter-status?json&full, routed by that same
snippet) tells which worker is busy.

  - a worker SIGKILLed mid-request: only that request fails, the others
    succeed, the pool is back to full size;
  - a request hung past request_timeout: the watchdog kills its worker, which
    is replaced;
  - SIGTERM under load: every answer is complete and correct, the server is
    gone within shutdown_timeout;
  - SIGUSR2 under load: no failed request, new worker pids, new configuration;
  - a worker's peak memory after uploads of 1000x750, 8000x6000 (48 MP) and
    a 16 MB non-image: bounded, whatever the body's size or the pixel count;
  - progressive JPEG memory bombs from several clients at once: refused,
    the workers' memory unmoved, the stream as fast as ever;
  - a reload signal while a worker reads a request's FastCGI parameters
    (raw FastCGI on the socket, parameters sent in two halves): answered
    whole, not cut short; a client that stalls there meets the watchdog;
  - a TCP peer not in listen_allowed_clients: closed before it sends its
    parameters, an allowed one served;
  - max_requests recycling under load: no failed request, and the metrics
    (?openmetrics, in the shared state file) count every request of the
    workers that left;
  - the status page counts only the connections really accepted.

Load: 8 clients x 2 s of stream/login requests, bounded in count and time,
loopback only.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_process_model.py
"""
from __future__ import annotations

import json
import math
import os
import pwd
import random
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint, FilePart, multipart_body, multipart_content_type, read_response
from openmetrics import scrape, value
from servers import Load, prepare_load_user

PORT = servers.http_port(0)
BASE = f"http://127.0.0.1:{PORT}/"
API = BASE + "iReporter/"


@pytest.fixture(scope="module")
def module_env():
    binary = servers.binary()
    with servers.workspace("procs") as space:
        db, base = space.db, space.base
        server_dir = base / "server"
        # Rendered once: the socket and upload paths stay the same for every
        # server a test starts.
        probe = servers.OurServer(server_dir, binary, db.url)
        snippet = servers.Apache.proxy_fcgi_snippet(probe, base / "ireporter-proxy-fcgi.conf")
        docroot = base / "htdocs"
        docroot.mkdir()
        apache = space.start(servers.Apache(base / "apache", [PORT], ["proxy", "proxy_fcgi"], f"""
<VirtualHost 127.0.0.1:{PORT}>
    DocumentRoot "{docroot}"
    Include "{snippet}"
</VirtualHost>
"""))
        yield {"binary": binary, "db": db, "dir": server_dir, "apache": apache}


@pytest.fixture
def start_server(module_env):
    """start_server(**config keys) -> a running OurServer (stopped after the test)."""
    started = []

    def start(**keys) -> servers.OurServer:
        s = servers.OurServer(module_env["dir"], module_env["binary"], module_env["db"].url, **keys)
        started.append(s)
        s.start()
        servers.wait_for(lambda: pool(s)["idle"] == keys.get("workers", 3), 10, what="all workers idle")
        return s

    yield start
    for s in started:
        s.stop()
        assert not getattr(s, "leftover_workers", []), f"workers outlived the supervisor: {s.leftover_workers}"


def logs(server: servers.OurServer, apache: servers.Apache) -> str:
    return servers.tail(server.log_path) + "\n" + apache.log_tail()


def pool(server: servers.OurServer) -> dict:
    st = servers.status(BASE)
    procs = st["processes"]
    return {"status": st, "pids": {p["pid"] for p in procs}, "total": st["total processes"],
            "idle": sum(p["state"] == "Idle" for p in procs) + 1,  # +1: the one answering this
            "busy": [p for p in procs if p["state"] == "Running"]}


def fcgi_connections(server: servers.OurServer) -> tuple[int, int]:
    """(connections the workers accepted and hold, connections waiting in
    the backlog) on the server's socket, as ss sees them: a worker that
    cannot answer the status page is seen from outside."""
    accepted = queued = 0
    for line in subprocess.run(["ss", "-xanH"], capture_output=True, text=True, check=True, timeout=10).stdout.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[4] == str(server.socket_path):
            if fields[1] == "LISTEN":
                queued = int(fields[2])
            elif fields[1] == "ESTAB":
                accepted += 1
    return accepted, queued


def logged_since(server: servers.OurServer, offset: int, text: str) -> bool:
    """Whether the server's log says `text` after its first `offset` bytes."""
    with open(server.log_path, "rb") as log:
        log.seek(offset)
        return text.encode() in log.read()


def writes_to(pid: int, path: Path) -> bool:
    """Whether the process holds `path` open."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def busy_worker(server: servers.OurServer, min_ms: int = 300, timeout: float = 5) -> int:
    """The pid of the worker running a request for at least min_ms (not the
    one answering the status request itself)."""
    def find():
        busy = [p for p in pool(server)["busy"] if p["request duration"] >= min_ms]
        return busy[0]["pid"] if len(busy) == 1 else None
    return servers.wait_for(find, timeout, interval=0.1, what=f"a worker busy for {min_ms} ms")


class SlowUpload:
    """An upload whose client sends the headers and half of the body, then
    stalls: Apache streams what it has, so a worker waits for the rest."""

    def __init__(self, cookie: str, title: str):
        self.title = title
        self.body = multipart_body([("command", "upload"), ("title", title)], [FilePart(servers.photo())])
        head = (f"POST /iReporter/ HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\n"
                f"Content-Type: {multipart_content_type()}\r\nContent-Length: {len(self.body)}\r\n"
                f"Cookie: {cookie}\r\nConnection: close\r\n\r\n").encode()
        self.half = len(self.body) // 2
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=20)
        self.sock.sendall(head + self.body[:self.half])

    def finish(self, send_rest: bool, timeout: float = 20):
        """(status or None if the connection closed without an answer, body, seconds)."""
        t0 = time.monotonic()
        self.sock.settimeout(timeout)
        try:
            if send_rest:
                try:
                    self.sock.sendall(self.body[self.half:])
                except OSError:
                    pass  # the other side gave up already
            try:
                r, _ = read_response(self.sock, "POST")
                return r.status, r.body, time.monotonic() - t0
            except Exception:  # noqa: BLE001 - closed or reset without an answer
                return None, b"", time.monotonic() - t0
        finally:
            self.sock.close()


def logged_in_cookie(user: str, password: str) -> str:
    with AppClient(Endpoint(API)) as phone:
        r = phone.login(user, password)
        assert r.status == 200 and phone.session_id, r
        return f"PHPSESSID={phone.session_id}"


def titles_in_stream() -> set[str]:
    with AppClient(Endpoint(API)) as phone:
        return {row["title"] for row in phone.stream().json()["result"]}


# ----------------------------------------------------------------- tests

def test_worker_killed_mid_request(start_server, module_env):
    server = start_server(workers=3)
    log_size = server.log_path.stat().st_size
    user, password, expected = prepare_load_user(API, "kill")
    title = servers.unique_name("killed upload")
    slow = SlowUpload(logged_in_cookie(user, password), title)
    victim = busy_worker(server)
    assert victim in server.workers()

    killed_at = []

    def kill():
        killed_at.append(time.monotonic())
        servers.kill_pids([victim])
    outcomes = Load(API, user, password, expected, clients=4, seconds=1.5).run(during=kill, at=0.5)

    # Only the killed request failed ...
    assert killed_at and all(o.ok for o in outcomes), \
        Load.describe(outcomes) + "\n" + logs(server, module_env["apache"])
    assert len(outcomes) >= 20, Load.describe(outcomes)
    status, body, _ = slow.finish(send_rest=True)
    assert status != 200 or b"successful" not in body, (status, body[:200])
    assert status in (None, 500, 502, 503), (status, body[:200])
    assert title not in titles_in_stream()
    # ... and the pool is whole again, without the victim.
    p = servers.wait_for(lambda: (p := pool(server)) and p["total"] == 3 and victim not in p["pids"] and p, 10,
                         what="the pool back to 3 workers")
    assert p["status"]["crashed workers"] == 1, p["status"]
    assert not servers.proc_alive(victim)
    # The log names the request the crash cost, as the watchdog's line does.
    assert logged_since(server, log_size, f"worker {victim} was killed by signal 9 while serving POST /iReporter/ (request ")


def test_request_timeout_kills_hung_worker(start_server, module_env):
    server = start_server(workers=2, request_timeout=2)
    log_size = server.log_path.stat().st_size
    user, password, expected = prepare_load_user(API, "hang")
    title = servers.unique_name("hung upload")
    slow = SlowUpload(logged_in_cookie(user, password), title)
    t0 = time.monotonic()
    victim = busy_worker(server, min_ms=200)
    # What it serves, as php-fpm's ?full shows it; the status request's own worker shows its own.
    serving = {p["pid"]: (p["request method"], p["request URI"]) for p in pool(server)["busy"]}
    assert serving.get(victim) == ("POST", "/iReporter/"), serving
    assert ("GET", "/ireporter-status?json&full") in serving.values(), serving
    # The client stalls: the watchdog (checking every second) kills the
    # worker 2-3 s after the request started and starts a new one.
    p = servers.wait_for(lambda: (p := pool(server)) and p["total"] == 2 and victim not in p["pids"] and p, 10,
                         what="the hung worker replaced")
    waited = time.monotonic() - t0
    # Not before the timeout; the upper bound leaves a busy machine room.
    assert 1.5 < waited < 8, f"the hung worker was replaced after {waited:.1f}s (request_timeout = 2)"
    assert p["status"]["timed out requests"] == 1, p["status"]
    assert p["status"]["crashed workers"] == 0, "a timeout is told apart from a crash"
    with open(server.log_path, "rb") as log:
        log.seek(log_size)
        killed = [line for line in log.read().decode(errors="replace").splitlines() if "killing it" in line]
    assert len(killed) == 1 and "killing it: POST /iReporter/" in killed[0] and "client 127.0.0.1)" in killed[0], killed
    assert not servers.proc_alive(victim)
    # Apache notices when it passes on the rest of the body: an error page,
    # never a success.
    status, body, _ = slow.finish(send_rest=True, timeout=15)
    assert status in (None, 500, 502, 503, 504), (status, body[:200])
    assert title not in titles_in_stream()
    # The pool serves as before.
    outcomes = Load(API, user, password, expected, clients=2, seconds=0.5).run()
    assert all(o.ok for o in outcomes), Load.describe(outcomes)


def test_an_upload_past_its_deadline_is_not_stored(start_server, module_env):
    """An upload that waits past upload_deadline (here for the photos
    table, locked by another session) is dropped just before its COMMIT:
    answered with an error, no row, no file. Its sender had given up on it
    (60 s in the shipped web servers and phones) and would send it again."""
    server = start_server(workers=2, upload_deadline=1)
    db = module_env["db"]
    user, password, _ = prepare_load_user(API, "deadline")
    cookie = logged_in_cookie(user, password)
    late, in_time = servers.unique_name("late upload"), servers.unique_name("upload in time")

    def files() -> list[str]:
        return sorted(p.name for p in server.upload_dir.rglob("*") if p.is_file() and p.name != ".ireporter-upload-dir")

    files_before = files()
    answer: dict = {}

    def upload():
        with AppClient(Endpoint(API), timeout=60) as phone:
            answer["late"] = phone.call({"command": "upload", "title": late}, file=servers.photo(), cookie=cookie)

    uploader = threading.Thread(target=upload, daemon=True)
    with servers.table_locked(db, "photos"):
        uploader.start()
        servers.wait_for(lambda: servers.waiting_for_table(db, "INSERT INTO photos") == 1, 15,
                         what="the upload waiting for the locked table")
        # It arrived before it waited: 1.5 s from here is past its 1 s.
        time.sleep(1.5)
    uploader.join(30)
    r = answer["late"]
    assert (r.status, r.json()) == (200, {"error": "The server took too long to store the photo and did not keep it, "
                                                   "please send it again"}), r
    assert db.sql(f"SELECT COUNT(*) FROM photos WHERE title = '{late}'").strip() == "0"
    assert files() == files_before, "its files removed, no spool file left"
    assert "past upload_deadline" in servers.tail(server.log_path, 50)
    with AppClient(Endpoint(API), timeout=60) as phone:
        assert phone.call({"command": "upload", "title": in_time}, file=servers.photo(), cookie=cookie).json() \
            == {"successful": 1}
    assert in_time in titles_in_stream() and late not in titles_in_stream()


def test_sigterm_finishes_requests_in_flight(start_server, module_env):
    """Deterministic: every worker busy with a (stalled) upload, two more
    requests waiting in the socket's backlog, then SIGTERM. The uploads in
    flight must complete; the server exits once they are done."""
    import concurrent.futures as cf
    server = start_server(workers=3, shutdown_timeout=10)
    user, password, expected = prepare_load_user(API, "inflight")
    cookie = logged_in_cookie(user, password)
    titles = [servers.unique_name(f"in flight {i}") for i in range(3)]
    uploads = [SlowUpload(cookie, titles[0]), SlowUpload(cookie, titles[1])]
    servers.wait_for(lambda: len([b for b in pool(server)["busy"] if b["request duration"] >= 100]) == 2, 5,
                     what="two workers busy with uploads")
    uploads.append(SlowUpload(cookie, titles[2]))  # the third (last idle) worker takes it at once
    servers.wait_for(lambda: fcgi_connections(server) == (3, 0), 5, what="the third worker busy with an upload")

    def stream():
        with AppClient(Endpoint(API), keep_alive=False, timeout=30) as c:
            r = c.stream()
            return r.status, r.body
    with cf.ThreadPoolExecutor(2) as ex:
        queued = [ex.submit(stream) for _ in range(2)]
        servers.wait_for(lambda: fcgi_connections(server) == (3, 2), 5, what="both streams waiting in the backlog")
        assert not any(f.done() for f in queued), "a worker was free: the test's premise failed"
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        # The supervisor removes its socket's path, then tells the workers.
        servers.wait_for(lambda: not server.socket_path.exists(), 5, what="the supervisor to take the SIGTERM")
        # A reload asked for meanwhile changes nothing: no new workers, the old ones keep their drain.
        server.proc.send_signal(signal.SIGUSR2)
        answers = [u.finish(send_rest=True) for u in uploads]
        server.proc.wait(15)
        took = time.monotonic() - t0
        waiting = [f.result(timeout=30) for f in queued]

    report = f"uploads: {answers}\nqueued: {waiting}\n" + logs(server, module_env["apache"])
    assert all(a[0] == 200 and a[1] == servers.SUCCESS for a in answers), report
    assert took < 10, report
    assert "reloaded:" not in servers.tail(server.log_path), report
    server.proc = None
    # Photos stored completely (thumbnails too) before the server left.
    stored = titles_in_stream_from_db(module_env)
    assert all(t in stored for t in titles), (titles, report)
    # Requests already waiting in the listen backlog when SIGTERM arrived are
    # served too (the server removes its socket's path, so nothing new
    # arrives, and drains the queue): a stream of that moment, uploads of the
    # stop included or not.
    assert all(w[0] == 200 and w[1].startswith(b'{"result":[') for w in waiting), report


def titles_in_stream_from_db(module_env) -> set[str]:
    """The server is stopped: ask a new one (same database)."""
    s = servers.OurServer(module_env["dir"], module_env["binary"], module_env["db"].url, workers=1)
    s.start()
    try:
        return titles_in_stream()
    finally:
        s.stop()


def test_a_stopping_server_leaves_a_socket_another_bound_at_its_path(start_server, module_env):
    """A server started by hand and still running when systemd's socket (or
    a successor) is bound at the same path: stopping it later must not
    remove the other's socket, which every request of nginx then missed."""
    server = start_server(workers=1)
    server.socket_path.unlink()
    successor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        successor.bind(str(server.socket_path))
        successor.listen(1)
        assert server.stop() is not None
        assert server.socket_path.is_socket(), "the successor's socket was removed"
        assert "is another socket now: left in place" in servers.tail(server.log_path)
    finally:
        successor.close()
        server.socket_path.unlink(missing_ok=True)


def test_sigterm_under_load(start_server, module_env):
    shutdown_timeout = 5
    server = start_server(workers=3, shutdown_timeout=shutdown_timeout)
    user, password, expected = prepare_load_user(API, "term")
    workers = server.workers()
    proc = server.proc
    sent = []

    def term():
        sent.append(time.monotonic())
        proc.send_signal(signal.SIGTERM)
    # Enough requests for the 2 s whatever the speed (logins are cheap here:
    # login.pass is the original varchar(45), no hashing).
    load = Load(API, user, password, expected, clients=8, seconds=2.0, max_requests=5000, stop_on_failure=True)
    t0 = time.monotonic()
    outcomes = load.run(during=term, at=0.7)
    term_at = sent[0] - t0
    proc.wait(shutdown_timeout + 2)
    took = time.monotonic() - sent[0]
    assert took <= shutdown_timeout + 1, f"exit took {took:.1f}s"
    assert proc.returncode == 0, (proc.returncode, servers.tail(server.log_path))
    assert not any(servers.proc_alive(w) for w in workers)
    assert not server.socket_path.exists() and not server.pid_file.exists()
    server.proc = None

    report = Load.describe(outcomes) + f"\nSIGTERM at {term_at:.3f}s\n" + logs(server, module_env["apache"])
    before = [o for o in outcomes if o.finished < term_at]
    assert len(before) >= 10 and all(o.ok for o in before), report
    for o in outcomes:
        # An answer from the server is complete and exactly right; the
        # others are Apache's "unavailable" once the server stopped (or for a
        # request that waited in the backlog: see the test above).
        if o.status == 200:
            assert o.ok, report
        else:
            assert o.status == 503 and o.error is None and o.finished >= term_at, report
    assert any(o.status == 503 for o in outcomes), "no request came after the stop? " + report


def test_sigusr2_under_load(start_server, module_env):
    server = start_server(workers=3)
    user, password, expected = prepare_load_user(API, "reload")
    before = pool(server)["pids"]
    assert before == set(server.workers())
    # The new configuration: one more worker.
    server.write_config(workers=4)
    outcomes = Load(API, user, password, expected, clients=8, seconds=2.0).run(
        during=lambda: server.signal(signal.SIGUSR2), at=0.7)
    assert all(o.ok for o in outcomes) and len(outcomes) >= 40, \
        Load.describe(outcomes) + "\n" + logs(server, module_env["apache"])
    p = servers.wait_for(lambda: (p := pool(server)) and p["total"] == 4 and not p["pids"] & before and p, 10,
                         what="4 new workers after SIGUSR2")
    assert not any(servers.proc_alive(w) for w in before)
    assert p["status"]["crashed workers"] == 0, p["status"]


def peak_memory_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def test_an_uploads_size_does_not_grow_a_worker(start_server, module_env):
    server = start_server(workers=1, max_upload_bytes=20 * 1024 * 1024)
    [worker] = server.workers()
    user, password, _ = prepare_load_user(API, "memory")
    # 48 megapixels in a small file (one colour): decoded at 1/8, 1000x750.
    huge = servers.imagemagick("-size", "8000x6000", "xc:#4080c0", "-quality", "90", "jpeg:-")
    with AppClient(Endpoint(API), timeout=60) as phone:
        assert phone.login(user, password).status == 200
        assert "successful" in phone.upload(servers.photo(), "warm-up").json()
        before = peak_memory_kb(worker)
        assert "successful" in phone.upload(huge, "48 MP").json()
        noise = b"\xff\xd8\xff\xe0" + random.randbytes(16 * 1024 * 1024)
        assert "error" in phone.upload(noise, "not a photo").json()
    grown = peak_memory_kb(worker) - before
    # The body streams to a spool file; the decode is DCT-scaled (1000x750 x 4
    # bytes here); the peak grows by a few MB, not by the 16 MB body or the
    # 192 MB a full 48 MP decode would take.
    assert grown < 12 * 1024, f"worker peak grew by {grown} kB"


def progressive_bomb(side: int = 7071, components: int = 4, cut: bool = False) -> bytes:
    """The issue's file: a progressive CMYK JPEG of 7071x7071 in ~400 KB
    (libjpeg must keep its 400 MB of coefficients), or the same cut short.
    Only its header matters to the server: refused before any scan."""
    sof = bytes([0xFF, 0xC2, 0, 8 + 3 * components, 8, side >> 8, side & 0xFF, side >> 8, side & 0xFF, components])
    sof += b"".join(bytes([i, 0x11, 0]) for i in range(1, components + 1))
    dqt = bytes([0xFF, 0xDB, 0, 67, 0]) + bytes([1] * 64)
    dht = bytes([0xFF, 0xC4, 0, 20, 0x00]) + bytes([0, 1] + [0] * 14) + bytes([0])
    sos = bytes([0xFF, 0xDA, 0, 8 + 2 * (components - 1), components])
    sos += b"".join(bytes([i, 0]) for i in range(1, components + 1)) + bytes([0, 0, 0])
    data = b"\xff\xd8" + dqt + sof + dht + sos + bytes(400 * 1024) + b"\xff\xd9"
    return data[:-2] if cut else data


def test_progressive_memory_bombs_from_several_clients(start_server, module_env):
    """Four clients upload the 7071x7071 progressive CMYK file (and the same
    cut short) at once, three times each: every one is refused as too many
    pixels from its header, no worker's memory grows, and the stream answers
    as fast as ever meanwhile. A 12 MP progressive photo still passes."""
    server = start_server(workers=4, image_decode_concurrency=2)
    user, password, expected = prepare_load_user(API, "bombs")
    cookie = logged_in_cookie(user, password)
    workers = server.workers()
    # Each worker has served an upload: its peak includes an ordinary decode.
    with AppClient(Endpoint(API), timeout=60) as phone:
        for i in range(8):
            assert "successful" in phone.call({"command": "upload", "title": f"warm-up {i}"}, file=servers.photo(),
                                              cookie=cookie).json()
    before = {w: peak_memory_kb(w) for w in workers}
    refused = b'{"error":"The photo has too many pixels for a progressive JPEG (the limit is '
    answers, stream_seconds = [], []
    stop = threading.Event()

    def bomber(n: int):
        with AppClient(Endpoint(API), timeout=60) as phone:
            for i in range(3):
                r = phone.call({"command": "upload", "title": f"bomb {n}.{i}"},
                               file=progressive_bomb(cut=(i == 1)), cookie=cookie)
                answers.append((r.status, r.body))

    def streamer():
        with AppClient(Endpoint(API), timeout=60) as phone:
            for i in range(200):
                # 20 at least: enough for the 90th percentile to leave out a stray slow one.
                if stop.is_set() and i >= 20:
                    break
                t0 = time.monotonic()
                assert phone.stream().status == 200
                stream_seconds.append(time.monotonic() - t0)

    watcher = threading.Thread(target=streamer, daemon=True)
    watcher.start()
    bombers = [threading.Thread(target=bomber, args=(n,), daemon=True) for n in range(4)]
    for t in bombers:
        t.start()
    for t in bombers:
        t.join(60)
    stop.set()
    watcher.join(60)
    assert len(answers) == 12 and all(st == 200 and body.startswith(refused) for st, body in answers), answers[:3]
    grown = {w: peak_memory_kb(w) - before[w] for w in workers}
    # A decode of one of them would take 400 MB; refused from the header, a
    # worker's peak does not move beyond noise.
    assert max(grown.values()) < 8 * 1024, f"worker peaks grew by {grown} kB"
    # Bombs decoded would hold the workers for seconds, the streams meanwhile
    # waiting: the 90th percentile, and a loose max for a busy machine's stall.
    ordered = sorted(stream_seconds)
    p90 = ordered[math.ceil(0.9 * len(ordered)) - 1]
    assert p90 < 1.0 and ordered[-1] < 5.0, f"stream: p90 {p90:.2f} s, max {ordered[-1]:.2f} s"
    # What a phone takes, progressive or not, passes (12 MP, 4:2:0: 34 MiB of coefficients).
    phone_photo = servers.imagemagick("-size", "4000x3000", "gradient:#3060c0-#f0a040", "-interlace", "JPEG",
                                      "-sampling-factor", "4:2:0", "-quality", "85", "jpeg:-")
    with AppClient(Endpoint(API), timeout=60) as phone:
        r = phone.call({"command": "upload", "title": "12 MP progressive"}, file=phone_photo, cookie=cookie)
        assert r.json() == {"successful": 1}, r.body


def fcgi_record(kind: int, content: bytes) -> bytes:
    """One FastCGI record of request 1 (version 1, no padding)."""
    return bytes([1, kind, 0, 1, len(content) >> 8, len(content) & 0xFF, 0, 0]) + content


def fcgi_pairs(params: dict[str, str]) -> bytes:
    out = b""
    for name, value in params.items():
        n, v = name.encode(), value.encode()
        assert len(n) < 128 and len(v) < 128
        out += bytes([len(n), len(v)]) + n + v
    return out


def fcgi_stdout(sock: socket.socket, timeout: float = 10) -> bytes:
    """The STDOUT stream of the answer, up to END_REQUEST."""
    sock.settimeout(timeout)
    data, out = b"", b""
    while True:
        while len(data) >= 8:
            kind, length, padding = data[1], data[4] << 8 | data[5], data[6]
            if len(data) < 8 + length + padding:
                break
            if kind == 6:
                out += data[8:8 + length]
            if kind == 3:
                return out
            data = data[8 + length + padding:]
        chunk = sock.recv(65536)
        if not chunk:
            return out
        data += chunk


def test_reload_while_a_worker_reads_the_parameters(start_server, module_env):
    server = start_server(workers=1)
    body = b"command=stream"
    params = fcgi_pairs({"REQUEST_METHOD": "POST", "REQUEST_URI": "/iReporter/", "SCRIPT_NAME": "/iReporter/index.php",
                         "CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": str(len(body)),
                         "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1"})
    record = fcgi_record(4, params)
    half = len(record) // 2
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(server.socket_path))
        # The worker accepts and waits inside libfcgi for the rest of the
        # parameters when the reload tells it to retire.
        sock.sendall(fcgi_record(1, bytes([0, 1, 0, 0, 0, 0, 0, 0])) + record[:half])
        servers.wait_for(lambda: fcgi_connections(server) == (1, 0), 5, what="the worker to accept")
        log_size = server.log_path.stat().st_size
        server.signal(signal.SIGUSR2)
        servers.wait_for(lambda: logged_since(server, log_size, "reloaded:"), 5, what="the reload")
        sock.sendall(record[half:] + fcgi_record(4, b"") + fcgi_record(5, body) + fcgi_record(5, b""))
        answer = fcgi_stdout(sock)
    head, _, json_body = answer.partition(b"\r\n\r\n")
    assert json_body.startswith(b'{"result":['), answer[:300]
    servers.wait_for(lambda: pool(server)["total"] == 1, 10, what="the pool back to one worker")


def test_sighup_is_ignored_and_a_refused_reload_is_one_line(start_server):
    """From an on-call review: SIGHUP (nginx's reload) vanished without a
    word, and a refused reload's reason was a second line with no time or
    level."""
    server = start_server(workers=1)
    log_size = server.log_path.stat().st_size
    server.signal(signal.SIGHUP)
    servers.wait_for(lambda: logged_since(server, log_size, "SIGHUP ignored: SIGUSR2 reloads the configuration"), 5,
                     what="the warning")
    with AppClient(Endpoint(API)) as phone:
        assert "result" in phone.stream().json()
    server.config_path.write_text(server.config_text + "workers = many\n")
    log_size = server.log_path.stat().st_size
    server.signal(signal.SIGUSR2)
    servers.wait_for(lambda: logged_since(server, log_size, "reload refused"), 5, what="the refusal")
    with open(server.log_path, "rb") as log:
        log.seek(log_size)
        lines = log.read().decode(errors="replace").splitlines()
    refusal = [line for line in lines if "reload refused" in line]
    assert len(refusal) == 1 and "workers" in refusal[0], lines
    assert all(line.startswith(lines[0][:4]) for line in lines), f"every line stamped as the first: {lines}"


def test_a_client_stalling_in_the_parameters_meets_the_watchdog(start_server, module_env):
    server = start_server(workers=1, request_timeout=2)
    # (the status page's: the supervisor's children include the upload
    # folder's sweep for a moment after the start)
    [victim] = pool(server)["pids"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(server.socket_path))
        sock.sendall(fcgi_record(1, bytes([0, 1, 0, 0, 0, 0, 0, 0])) + fcgi_record(4, fcgi_pairs({"A": "B"}))[:9])
        p = servers.wait_for(lambda: (p := pool(server)) and p["total"] == 1 and victim not in p["pids"] and p, 10,
                             what="the stalled worker replaced")
    assert p["status"]["timed out requests"] == 1, p["status"]
    with AppClient(Endpoint(API)) as phone:
        assert "result" in phone.stream().json()  # the new worker serves


def free_tcp_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_peer_not_in_listen_allowed_clients_is_closed_before_its_parameters(module_env):
    """php-fpm's listen.allowed_clients: a refused peer is closed at accept,
    not after libfcgi read its parameters (a peer trickling them would hold
    the worker until the watchdog); an allowed one is served on the same
    TCP socket."""
    port = free_tcp_port()
    stream = fcgi_record(1, bytes([0, 1, 0, 0, 0, 0, 0, 0])) + fcgi_record(4, fcgi_pairs({
        "REQUEST_METHOD": "POST", "REQUEST_URI": "/iReporter/", "SCRIPT_NAME": "/iReporter/index.php",
        "CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": "14",
        "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1"})) + fcgi_record(4, b"") \
        + fcgi_record(5, b"command=stream") + fcgi_record(5, b"")
    for allowed, refused in (("10.0.0.7", True), ("10.0.0.7,127.0.0.1", False)):
        server = servers.OurServer(module_env["dir"], module_env["binary"], module_env["db"].url, workers=1,
                                   listen=f"127.0.0.1:{port}", listen_allowed_clients=allowed, request_timeout=30)
        log_size = server.log_path.stat().st_size if server.log_path.exists() else 0
        try:
            server.start()
            with socket.create_connection(("127.0.0.1", port)) as sock:
                if refused:
                    # The beginning of a request, then nothing.
                    sock.sendall(stream[:20])
                    sock.settimeout(5)
                    try:
                        answer = sock.recv(1)
                    except ConnectionResetError:  # (closed with our bytes unread)
                        answer = b""
                    assert answer == b"", "a refused peer's connection is closed unanswered"
                else:
                    sock.sendall(stream)
                    assert fcgi_stdout(sock).partition(b"\r\n\r\n")[2].startswith(b'{"result":[')
        finally:
            server.stop()
        assert logged_since(server, log_size, "closed a connection from 127.0.0.1, not in listen_allowed_clients") == refused


def test_max_requests_recycling_under_load(start_server, module_env):
    server = start_server(workers=3, max_requests=5)
    user, password, expected = prepare_load_user(API, "recycle")
    before = set(server.workers())
    metrics_before = scrape(API)
    outcomes = Load(API, user, password, expected, clients=8, seconds=2.0).run()
    assert all(o.ok for o in outcomes) and len(outcomes) >= 40, \
        Load.describe(outcomes) + "\n" + logs(server, module_env["apache"])
    metrics = scrape(API)
    for kind in ("stream", "login"):
        counted = value(metrics, "ireporter_requests_total", command=kind, outcome="ok") \
            - value(metrics_before, "ireporter_requests_total", command=kind, outcome="ok")
        assert counted == sum(o.kind == kind for o in outcomes), f"{kind}: the recycled workers' requests are kept"
    p = servers.wait_for(lambda: (p := pool(server)) and p["total"] == 3 and p, 10, what="3 workers")
    # Each worker left after 5 requests: none of the first ones is still
    # there, none served more than 5, none crashed.
    assert not p["pids"] & before and not any(servers.proc_alive(w) for w in before), p
    assert all(proc["requests"] <= 5 for proc in p["status"]["processes"]), p["status"]
    assert p["status"]["crashed workers"] == 0, p["status"]
    assert p["status"]["accepted conn"] >= len(outcomes)


def test_status_counts_only_accepted_requests(start_server, module_env):
    """Every idle worker wakes for a connection and only one accepts it: the
    others must not count a request (it was "max active processes: 27582"
    with 4 workers)."""
    server = start_server(workers=4)
    user, password, expected = prepare_load_user(API, "counted")
    before = pool(server)["status"]
    outcomes = Load(API, user, password, expected, clients=8, seconds=2.0).run()
    assert all(o.ok for o in outcomes) and len(outcomes) >= 40, Load.describe(outcomes)
    after = pool(server)["status"]
    # this status request is the one more
    assert len(outcomes) <= after["accepted conn"] - before["accepted conn"] <= len(outcomes) + 1, (before, after)
    assert after["max active processes"] <= 4, after
    # The one answering; a worker that has just sent its last answer may
    # still be marking itself idle, so look again for a moment.
    servers.wait_for(lambda: pool(server)["status"]["active processes"] == 1, 2, interval=0.1,
                     what="one active process: the one answering")


def test_workers_exit_when_supervisor_dies(start_server, module_env):
    server = start_server(workers=2)
    workers = server.workers()
    assert len(workers) == 2
    server.proc.kill()
    server.proc.wait(5)
    server.proc = None
    try:
        assert servers.wait_gone(workers, 3), \
            f"workers {[w for w in workers if servers.proc_alive(w)]} still running 3 s after the supervisor died"
    finally:
        servers.kill_pids([w for w in workers if servers.proc_alive(w)])
        servers.wait_gone(workers, 5)
        for leftover in (server.socket_path, server.pid_file):
            leftover.unlink(missing_ok=True)


def test_workers_of_a_killed_supervisor_finish_their_request_and_a_new_server_takes_over(start_server, module_env):
    """kill -9 of the supervisor with two uploads in flight: the idle worker
    leaves at once; the worker whose client finishes gets its upload through
    and leaves; the one whose client stalls meets its own request_timeout
    alarm (the supervisor's watchdog is gone). A new server starts on the
    same socket path meanwhile, without waiting for them."""
    server = start_server(workers=3, request_timeout=2)
    user, password, _ = prepare_load_user(API, "orphans")
    cookie = logged_in_cookie(user, password)
    finishing, stalling = SlowUpload(cookie, servers.unique_name("finished")), SlowUpload(cookie, "stalled")
    # (Not the one answering the status request itself.)
    busy = servers.wait_for(lambda: len(b := [p for p in pool(server)["busy"] if p["request duration"] >= 100]) == 2
                            and b, 5, what="two workers busy with uploads")
    busy_pids = {p["pid"] for p in busy}
    [idle] = set(server.workers()) - busy_pids
    server.proc.kill()
    server.proc.wait(5)
    server.proc = None
    t0 = time.monotonic()
    assert servers.wait_gone([idle], 2), "an idle worker outlived its supervisor"
    # A new server takes the socket's path over while the orphans still work.
    successor = servers.OurServer(module_env["dir"], module_env["binary"], module_env["db"].url, workers=1)
    successor.start()
    try:
        assert any(servers.proc_alive(p) for p in busy_pids), "the busy workers did not wait for their request"
        status, body, _ = finishing.finish(send_rest=True)
        assert status == 200 and body == servers.SUCCESS, (status, body[:200], logs(successor, module_env["apache"]))
        # request_timeout (2 s) + 5 s: the stalled one's own alarm.
        assert servers.wait_gone(list(busy_pids), 12), \
            f"orphaned workers {[p for p in busy_pids if servers.proc_alive(p)]} still running"
        assert time.monotonic() - t0 < 12
        stalling.finish(send_rest=False, timeout=1)
        with AppClient(Endpoint(API)) as phone:
            assert finishing_title_in(phone.stream().json(), finishing)
    finally:
        successor.stop()


def finishing_title_in(stream: dict, upload: SlowUpload) -> bool:
    return any(row["title"] == upload.title for row in stream["result"])


def test_repair_under_uploads_calls_no_photo_missing(start_server, module_env):
    """A folder of thousands of photos, six phones uploading: `ireporter
    repair` reads the rows before it lists the folder and looks twice, so
    no photo whose upload commits meanwhile is called missing, and no file
    of one is called debris."""
    server = start_server(workers=3, upload_rate_limit=0)
    user, password, expected = prepare_load_user(API, "repair")
    db = module_env["db"]
    db.sql("INSERT INTO photos (title, IdUser) VALUES " + ",".join(["('seeded', 1)"] * 5000) + ";")
    seed = module_env["dir"] / "seed.jpg"
    seed.write_bytes(servers.small_photo())
    for id_photo in db.sql("SELECT IdPhoto FROM photos WHERE title = 'seeded'").split():
        for name in (f"{id_photo}.jpg", f"{id_photo}-thumb.jpg"):
            (server.upload_dir / name).unlink(missing_ok=True)
            os.link(seed, server.upload_dir / name)
    reports = []

    def repair_meanwhile():
        for _ in range(4):
            p = subprocess.run([str(server.binary), "repair", "--dry-run", "--config", str(server.config_path)],
                               env=servers.clean_env(), capture_output=True, text=True, timeout=60)
            reports.append((p.returncode, p.stdout + p.stderr))
    outcomes = Load(API, user, password, expected, clients=6, seconds=6.0, uploads=True).run(
        during=repair_meanwhile, at=0.5)
    assert all(o.ok for o in outcomes) and len(outcomes) >= 30, Load.describe(outcomes)
    assert len(reports) == 4
    for status, text in reports:
        assert status == 0, text
        summary = next(line for line in text.splitlines() if " rows, " in line)
        assert int(summary.split(" rows,")[0]) >= 5000, summary
        assert " 0 files without a row" in summary and " 0 rows without a photo file" in summary, text


def test_a_worker_a_failed_fork_did_not_start_is_started_once_one_works(start_server, module_env):
    """A fork that fails (the user's process limit, memory short after the
    OOM killer took a worker) leaves the pool short only until a fork works
    again: the supervisor tries each second, and says so once."""
    server = start_server(workers=2)
    supervisor = server.proc.pid
    victim = next(iter(pool(server)["pids"]))
    offset = server.log_path.stat().st_size
    # www-data (the server's user) has processes already: no fork of its passes a soft limit of 1.
    # Set as www-data: a soft limit is the process owner's to move below the hard one.
    def soft_nproc(limit: str) -> str:
        as_owner = ["runuser", "-u", "www-data", "--", "prlimit", f"--pid={supervisor}"]
        before = subprocess.run(as_owner + ["--nproc", "--output=SOFT", "--noheadings"], check=True, timeout=10,
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(as_owner + [f"--nproc={limit}:"], check=True, timeout=10)
        return before
    before = soft_nproc("1")
    try:
        os.kill(victim, signal.SIGKILL)
        servers.wait_for(lambda: logged_since(server, offset, "fork failed"), 10, what="the fork refused")
    finally:
        soft_nproc(before)
    servers.wait_for(lambda: pool(server)["idle"] == 2, 10, what="the pool refilled")
    assert logged_since(server, offset, "worker processes start again")


def test_the_sweep_at_start_forgets_media_never_posted(start_server, module_env):
    """The supervisor's sweep (at start, then every 10 minutes, in a process
    of its own) removes the Mastodon API's media left waiting a day, with
    their files, and media files no row names once they are older than any
    row: on a server nobody uploads media to as well. And the apps
    registered a day ago that signed no one in (migration 014), and the
    session files idle past their timeout."""
    db = module_env["db"]
    upload_dir, session_dir = servers.app_dirs(module_env["dir"])
    two_days_ago = int(time.time()) - 2 * 86400
    stale, orphan, young = upload_dir / ".media-stale", upload_dir / ".media-orphan", upload_dir / ".media-young"
    for f in (stale, orphan, young):
        f.write_bytes(servers.small_photo())
    os.utime(orphan, (two_days_ago, two_days_ago))
    idle_session = session_dir / ("sess_" + "s" * 26)
    idle_session.write_text('IdUser|s:1:"1";')
    servers.chown_www(idle_session)
    a_fortnight_ago = int(time.time()) - 14 * 86400  # past session_idle_timeout's 7 days
    os.utime(idle_session, (a_fortnight_ago, a_fortnight_ago))
    db.sql("INSERT INTO media_attachments (IdUser, file, width, height, description, focus, created) "
           f"VALUES (1, '.media-stale', 8, 8, '', '', {two_days_ago}), (1, '.media-young', 8, 8, '', '', {int(time.time())});")
    db.sql("INSERT INTO oauth_apps (client_id, secret_hash, name, website, redirect_uris, scopes, created) VALUES "
           f"('swept', REPEAT('0', 64), 'Never used', '', '', 'read', {two_days_ago}), "
           f"('kept', REPEAT('0', 64), 'Just made', '', '', 'read', {int(time.time())});")
    try:
        # A state of its own: the installation's sweeps run once in 10 minutes, and this module's servers swept.
        start_server(workers=1, shared_state_file=str(session_dir / "media-sweep.state"))
        servers.wait_for(lambda: not stale.exists() and not orphan.exists(), 20, what="the media sweep")
        assert db.sql("SELECT file FROM media_attachments").split() == [".media-young"]
        assert young.exists()
        servers.wait_for(lambda: db.sql("SELECT client_id FROM oauth_apps").split() == ["kept"], 20, what="the OAuth sweep")
        servers.wait_for(lambda: not idle_session.exists(), 20, what="the session sweep")
    finally:
        db.sql("DELETE FROM media_attachments; DELETE FROM oauth_apps;")
        young.unlink(missing_ok=True)


def test_json_log_lines_hold_any_username_and_the_level_drops_info(start_server, module_env):
    """log_format = json: every line of both logs is one JSON object, a
    hostile username included; log_level = warning keeps the failed login
    and drops the start-up's info lines."""
    logs_dir = module_env["dir"] / "logs"
    logs_dir.mkdir(exist_ok=True)
    servers.chown_www(logs_dir)
    access, own = logs_dir / "json-access.log", logs_dir / "json.log"
    start_server(workers=2, access_log=str(access), log_file=str(own), log_format="json", log_level="warning")
    hostile = 'x" from 198.51.100.1\n{"level":"error"}\\'
    with AppClient(Endpoint(API)) as phone:
        assert phone.login(hostile, "guess").body == b'{"error":"Authorization failed"}'
    servers.wait_for(lambda: access.exists() and b"login" in access.read_bytes(), 5, what="an access line")
    entries = [json.loads(line) for line in own.read_text().splitlines()]
    failed = [e for e in entries if e["message"].startswith("login failed for ")]
    assert len(failed) == 1 and failed[0]["level"] == "warning", entries
    assert failed[0]["message"] == r'login failed for "x\" from 198.51.100.1\x0a{\"level\":\"error\"}\\" from 127.0.0.1', failed
    assert set(failed[0]) == {"time", "level", "pid", "message"}
    assert all(e["level"] != "info" for e in entries), entries
    line = json.loads(access.read_text().splitlines()[-1])
    assert (line["command"], line["outcome"], line["client"]) == ("login", "authorization-failed", "127.0.0.1"), line


def test_a_log_file_made_at_a_start_as_root_is_the_servers_user(start_server, module_env):
    """Made before the switch to `user`: handed to it, or the user could not
    reopen it on SIGUSR1, nor start with it again."""
    logs_dir = module_env["dir"] / "root-made-logs"
    logs_dir.mkdir(exist_ok=True)
    own = logs_dir / "ireporter.log"
    own.unlink(missing_ok=True)
    server = start_server(workers=1, log_file=str(own))
    assert own.stat().st_uid == pwd.getpwnam(servers.WWW).pw_uid, own.stat()
    server.proc.send_signal(signal.SIGUSR1)
    servers.wait_for(lambda: b"log files reopened" in own.read_bytes(), 5, what="the reopen")
    assert b"logging goes on in the file open before" not in own.read_bytes()


def test_sigusr1_reopens_the_log_files(start_server, module_env):
    """logrotate's way: move the files away, SIGUSR1, the server writes new
    ones (the supervisor's log and every worker's access log)."""
    logs_dir = module_env["dir"] / "logs"
    logs_dir.mkdir(exist_ok=True)
    servers.chown_www(logs_dir)
    access, own = logs_dir / "access.log", logs_dir / "ireporter.log"
    server = start_server(workers=2, access_log=str(access), log_file=str(own))
    with AppClient(Endpoint(API)) as phone:
        assert phone.stream().status == 200
    servers.wait_for(lambda: access.exists() and b"command=stream" in access.read_bytes(), 5, what="an access line")
    moved = logs_dir / "access.log.1"
    access.rename(moved)
    own.rename(logs_dir / "ireporter.log.1")
    server.proc.send_signal(signal.SIGUSR1)
    servers.wait_for(lambda: own.exists() and b"log files reopened" in own.read_bytes(), 5, what="a new log file")
    # Idle workers reopen at once (the signal interrupts their wait).
    servers.wait_for(lambda: all(writes_to(w, access) for w in server.workers()), 5, what="every worker on the new access log")
    before = moved.read_bytes()
    for _ in range(6):
        with AppClient(Endpoint(API)) as phone:
            assert phone.stream().status == 200
    servers.wait_for(lambda: access.exists() and access.read_bytes().count(b"command=stream") >= 6, 5,
                     what="the new requests in the new access log")
    assert moved.read_bytes() == before, "nothing more went to the moved file"
    # A folder the server's user cannot write to: the reopen fails, and says so where logging goes on.
    own.rename(logs_dir / "ireporter.log.2")
    logs_dir.chmod(0o555)
    try:
        server.proc.send_signal(signal.SIGUSR1)
        kept = logs_dir / "ireporter.log.2"
        servers.wait_for(lambda: b"logging goes on in the file open before" in kept.read_bytes(), 5, what="the failed reopen said")
        assert not own.exists() and kept.read_bytes().count(b"log files reopened") == 1, "the first reopen only"
    finally:
        logs_dir.chmod(0o755)
