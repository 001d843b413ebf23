#!/usr/bin/env python3
"""faults/run.py - fault-injection suite for the iReporter server (issue 5).

Starts its OWN isolated stack (scripts/stack.sh: MariaDB, the server as
www-data, nginx) with the upload folder on a small tmpfs, drives many
concurrent app sessions (register/login/upload/stream/logout) through nginx
and meanwhile injects faults at random times:

  db_restart      scripts/mariadb.sh stop, a pause, start
  db_kill         SIGKILL mariadbd (pid file, command line checked), start
  db_restart_idle hold the app clients, restart MariaDB while the server is idle,
                  then send one upload more than there are workers: each must
                  succeed (a worker's idle connection died with the old server)
  kill_worker     SIGKILL one or two worker processes (busy ones preferred)
  disk_full       shrink the upload tmpfs to what it holds and fill the rest
                  with a file (ENOSPC), then free it
  readonly        chmod 0555 the upload folder (the server runs as www-data),
                  then 0755 again
  drop_mid_body   a client that closes the connection halfway through the body
  abandon         a client that sends a whole upload and leaves without reading
  slow_body       a client that trickles a whole upload over a few seconds
  stalled_body    a client that stops sending for longer than nginx's
                  client_body_timeout (60 s; only in runs of >= 150 s)
  cl_short        Content-Length smaller than the body actually sent
  cl_long         Content-Length larger than the body (client gives up)
  oversize_nginx  Content-Length over nginx's client_max_body_size (21m)
  oversize_server a 20.1 MB file part (under nginx's limit, over the server's)
  not_jpeg        a PNG sent as the photo
  truncated_jpeg  the first 60 % of a JPEG

Every answer is recorded. At the end the load stops, the injected faults are
undone (DB started if down, folder writable, filler removed) but nothing is
restarted, and the result is RECONCILED against the database and the upload
folder (see reconcile() and check_answers() below, and faults/README.md). Exit status: 0 when every
invariant held, 1 when one broke, 2 when the run itself could not be made.

    faults/run.py --duration 20 --clients 8          # CI (about 34 s in all)
    faults/run.py --duration 600 --clients 12        # longer run
    faults/run.py --soak --duration 1800             # + samples every 30 s

Run as root (mounts a tmpfs, starts daemons that drop to mysql / www-data).
Python 3.9+ standard library only; needs what scripts/deps.sh installs
(nginx, mariadb, imagemagick's convert/identify for the test images).
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STACK = REPO / "scripts" / "stack.sh"
MARIADB = REPO / "scripts" / "mariadb.sh"
BOUNDARY = "Boundary+0xAbCdEfGbOuNdArY"

# The server's error strings (Sources/IReporterKit/App/APIMessage.swift).
UNAVAILABLE = "The service is temporarily unavailable, please try again"
TOO_LARGE = "Photo is too large (the limit is 20 MB)"
NOT_JPEG = "The photo is not a valid JPEG image"
SERVER_PROBLEM = "Upload on server problem"
KNOWN_ERRORS = {
    "Username already exists", "Registration failed", "Authorization failed", "Authorization required",
    "Upload malfunction", SERVER_PROBLEM, "Photo stream is broken", NOT_JPEG,
    TOO_LARGE, "Malformed request", UNAVAILABLE, "Too many uploads, please try again later",
    "Usernames cannot contain control or invisible characters", "Titles cannot contain control characters",
}
KNOWN_ERROR_PATTERNS = [re.compile(r"Too many failed logins, try again in \d+ seconds"),
                        re.compile(r"The photo has too many pixels \(the limit is \d+ megapixels\)"),
                        re.compile(r"The photo has too many pixels for a progressive JPEG "
                                   r"\(the limit is \d+ megapixels for this one\)")]

HOST_FAULTS = ["db_restart", "db_kill", "db_restart_idle", "kill_worker", "disk_full", "readonly"]
CLIENT_FAULTS = ["drop_mid_body", "abandon", "slow_body", "stalled_body", "cl_short", "cl_long",
                 "oversize_nginx", "oversize_server", "not_jpeg", "truncated_jpeg"]
ALL_FAULTS = HOST_FAULTS + CLIENT_FAULTS


def now() -> float:
    return time.monotonic()


def log(msg: str):
    print(f"[faults {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class RunError(Exception):
    """The run could not be made (stack did not start, not root, ...)."""


# ------------------------------------------------------------------ HTTP ---

def multipart(fields, file_data: bytes | None = None, filename="photo.jpg", ctype="image/jpeg") -> bytes:
    """The AFNetworking 1.x body the 2012 app sent (Tests/EndToEnd/appclient.py)."""
    b = BOUNDARY.encode()
    parts = [([f'Content-Disposition: form-data; name="{k}"'], v if isinstance(v, bytes) else str(v).encode())
             for k, v in fields]
    if file_data is not None:
        parts.append(([f'Content-Disposition: form-data; name="file"; filename="{filename}"',
                       f"Content-Type: {ctype}"], file_data))
    out = bytearray()
    for i, (headers, body) in enumerate(parts):
        out += (b"--" + b + b"\r\n") if i == 0 else (b"\r\n--" + b + b"\r\n")
        for h in headers:
            out += h.encode() + b"\r\n"
        out += b"\r\n" + body
    out += b"\r\n--" + b + b"--\r\n"
    return bytes(out)


def request_head(port: int, length: int, cookie: str | None, path="/iReporter/") -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept: application/json",
             f"Content-Type: multipart/form-data; boundary={BOUNDARY}", f"Content-Length: {length}",
             "Connection: close"]
    if cookie:
        lines.append(f"Cookie: PHPSESSID={cookie}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def parse_response(raw: bytes):
    """(status, headers[list], body) of an HTTP/1.1 answer read to EOF; None if unparseable."""
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = raw[:end].decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    if not m:
        return None
    headers = []
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers.append((k.strip().lower(), v.strip()))
    body = raw[end + 4:]
    hd = dict(headers)
    if hd.get("transfer-encoding", "").lower() == "chunked":
        out, i = bytearray(), 0
        while True:
            j = body.find(b"\r\n", i)
            if j < 0:
                break
            size = int(body[i:j].split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out += body[j + 2:j + 2 + size]
            i = j + 2 + size + 2
        body = bytes(out)
    elif "content-length" in hd:
        body = body[:int(hd["content-length"])]
    return int(m.group(1)), headers, body


def read_all(sock: socket.socket, deadline: float) -> bytes:
    """The answer: up to EOF, or up to the end of a Content-Length body (nginx may linger)."""
    buf = bytearray()
    want = None
    while True:
        if want is None:
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                m = re.search(rb"\r\ncontent-length:\s*(\d+)", bytes(buf[:end + 2]), re.I)
                want = end + 4 + int(m.group(1)) if m else -1
        if want is not None and want >= 0 and len(buf) >= want:
            return bytes(buf)
        left = deadline - now()
        if left <= 0:
            raise socket.timeout("answer not complete in time")
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return bytes(buf)
        buf += chunk


def http_post(port, body: bytes, cookie=None, timeout=30.0, path="/iReporter/"):
    """One request on a fresh connection. Returns (status|None, headers, body, error|None)."""
    deadline = now() + timeout
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(request_head(port, len(body), cookie, path) + body)
            raw = read_all(s, deadline)
    except socket.timeout:
        return None, [], b"", "timeout"
    except OSError as e:
        return None, [], b"", type(e).__name__
    parsed = parse_response(raw)
    if parsed is None:
        return None, [], raw[:200], "unparseable" if raw else "closed-without-answer"
    return parsed + (None,)


def http_get(port, path, timeout=10.0):
    deadline = now() + timeout
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            raw = read_all(s, deadline)
    except OSError as e:
        return None, b"", type(e).__name__
    parsed = parse_response(raw)
    if parsed is None:
        return None, b"", "unparseable"
    return parsed[0], parsed[2], None


def classify(status, body: bytes, error) -> str:
    """The outcome of one answer, as a short label."""
    if status is None:
        return f"transport:{error}"
    if status != 200:
        return f"http{status}"
    if body == b"":
        return "empty"
    try:
        obj = json.loads(body)
    except ValueError:
        return "malformed-json"
    if not isinstance(obj, dict):
        return "unexpected-json"
    if "error" in obj and isinstance(obj["error"], str):
        return "error:" + obj["error"]
    if obj == {"successful": 1}:
        return "successful"
    if isinstance(obj.get("result"), list):
        return "result"
    return "unexpected-json"


def error_is_known(outcome: str) -> bool:
    msg = outcome[len("error:"):]
    return msg in KNOWN_ERRORS or any(p.fullmatch(msg) for p in KNOWN_ERROR_PATTERNS)


def session_cookie(headers) -> str | None:
    for k, v in headers:
        if k == "set-cookie":
            m = re.match(r"PHPSESSID=([^;]*)", v)
            if m and m.group(1) != "deleted":
                return m.group(1)
    return None


# ------------------------------------------------------------------ JPEG ---

SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def jpeg_check(data: bytes):
    """(width, height) if DATA is a structurally complete JPEG (SOI, SOF, SOS, EOI), else a reason string."""
    if data[:2] != b"\xff\xd8":
        return "no SOI"
    if data[-2:] != b"\xff\xd9":
        return "no EOI at the end"
    i, n, size = 2, len(data), None
    while i + 4 <= n:
        if data[i] != 0xFF:
            return f"garbage at {i}"
        m = data[i + 1]
        if m == 0xFF:
            i += 1
            continue
        if m == 0x01 or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        seglen = int.from_bytes(data[i + 2:i + 4], "big")
        if m in SOF_MARKERS:
            size = (int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big"))
        if m == 0xDA:  # start of scan: entropy-coded data follows
            return size if size else "SOS before SOF"
        i += 2 + seglen
    return "no SOS"


def make_images(directory: Path):
    """A few small JPEGs of different sizes: [(bytes, (w, h))]."""
    convert = shutil.which("convert") or shutil.which("convert-im6.q16")
    if not convert:
        raise RunError("ImageMagick's convert is needed for the test images (scripts/deps.sh installs it)")
    directory.mkdir(parents=True, exist_ok=True)
    images = []
    # Two noisy ones, four smooth ones: a stored upload (photo + thumbnail) then takes ~8-15 kB of the tmpfs.
    specs = [(64, 48, "plasma:fractal"), (120, 90, "plasma:fractal"), (97, 131, "gradient:#3060c0-#f0a040"),
             (200, 150, "radial-gradient:white-#204080"), (320, 240, "gradient:#20a060-#f0f0f0"),
             (160, 160, "radial-gradient:#f0c020-#802020")]
    for n, (w, h, spec) in enumerate(specs):
        out = directory / f"img{n}.jpg"
        subprocess.run([convert, "-seed", str(n + 1), "-size", f"{w}x{h}", spec, "-quality", "85",
                        str(out)], check=True, capture_output=True, timeout=60)
        data = out.read_bytes()
        if jpeg_check(data) != (w, h):
            raise RunError(f"convert made a bad test image {out}: {jpeg_check(data)}")
        images.append((data, (w, h)))
    png = subprocess.run([convert, "-size", "16x16", "xc:#3060c0", "png:-"], check=True, capture_output=True,
                         timeout=60).stdout
    return images, png


# ----------------------------------------------------------------- stack ---

class Stack:
    """The private stack (scripts/stack.sh) with the upload folder on a tmpfs."""

    def __init__(self, args):
        self.args = args
        self.run_dir = Path(args.run_dir).resolve()
        self.port, self.db_port, self.workers = args.port, args.db_port, args.workers
        self.upload_fs = self.run_dir / "uploadfs"          # the tmpfs mount point
        self.upload_dir = self.upload_fs / "upload"          # the server's upload_dir
        self.session_dir = self.run_dir / "sessions"
        self.db_dir = self.run_dir / "mariadb"
        self.conf = self.run_dir / "ireporter.conf"
        self.srv_bin = self.run_dir / "bin" / "ireporter"
        self.srv_pid_file = self.run_dir / "ireporter" / "ireporter.pid"
        self.sock = self.run_dir / "ireporter" / "fcgi.sock"
        self.ngx_dir = self.run_dir / "nginx"
        self.binary = Path(args.binary).resolve() if args.binary else REPO / ".build" / "release" / "ireporter"

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("IREPORTER_") and k != "DB_URL"}
        env.update(RUN_DIR=str(self.run_dir), PORT=str(self.port), DB_PORT=str(self.db_port),
                   UPLOAD_DIR=str(self.upload_dir), SESSION_DIR=str(self.session_dir), WORKERS=str(self.workers),
                   BINARY=str(self.binary))
        if not self.args.build:
            env["SKIP_BUILD"] = "1"
        return env

    def run(self, cmd, timeout=120, check=True, quiet=False):
        p = subprocess.run([str(c) for c in cmd], env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise RunError(f"{' '.join(map(str, cmd))} failed (exit {p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-3000:]}")
        if not quiet and self.args.verbose:
            sys.stdout.write(p.stdout + p.stderr)
        return p

    # -- lifecycle --

    def is_mounted(self) -> bool:
        with open("/proc/mounts") as f:
            return any(line.split()[1] == str(self.upload_fs) for line in f)

    def down(self):
        if (self.ngx_dir / "nginx.conf").exists() or (self.db_dir / "my.cnf").exists():
            self.run([STACK, "down"], timeout=150, check=False)
        if self.is_mounted():
            subprocess.run(["umount", str(self.upload_fs)], check=False)

    def fresh_up(self):
        if os.geteuid() != 0:
            raise RunError("run as root (mounts a tmpfs, starts daemons that switch to mysql / www-data)")
        if str(self.run_dir) in ("/", "/tmp", "/root", "/home", "/var", "/usr", "/etc") or len(self.run_dir.parts) < 3:
            raise RunError(f"refusing to wipe RUN_DIR={self.run_dir}")
        if not self.args.build and not self.binary.is_file():
            raise RunError(f"no server binary at {self.binary} (swift build -c release, or --build / --binary)")
        self.down()
        if self.run_dir.exists():
            shutil.rmtree(self.run_dir)
        self.upload_fs.mkdir(parents=True)
        os.chmod(self.run_dir, 0o755)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.args.upload_fs_mb}m,mode=0755", "tmpfs",
                        str(self.upload_fs)], check=True)
        log(f"stack up: RUN_DIR={self.run_dir} PORT={self.port} DB_PORT={self.db_port} WORKERS={self.workers} "
            f"upload_dir={self.upload_dir} (tmpfs {self.args.upload_fs_mb} MB), binary {self.binary}")
        self.run([STACK, "up"], timeout=900)
        self.route_status_page()

    def route_status_page(self):
        """The deploy snippet may not route /ireporter-status yet: add it to OUR rendered nginx.conf."""
        snippet = (self.ngx_dir / "ireporter.conf").read_text()
        if "ireporter-status" not in snippet and "ireporter-(ping|status)" not in snippet:
            extra = self.ngx_dir / "faults-status.conf"
            extra.write_text(f"location = /ireporter-status {{\n    allow 127.0.0.1;\n    deny all;\n"
                             f"    include fastcgi_params;\n    fastcgi_pass unix:{self.sock};\n}}\n")
            main = self.ngx_dir / "nginx.conf"
            text = main.read_text()
            inc = f"include {self.ngx_dir}/ireporter.conf;"
            if inc not in text:
                raise RunError(f"{main}: cannot find `{inc}` to add the status location beside it")
            main.write_text(text.replace(inc, inc + f"\n        include {extra};"))
            ngx = ["/usr/sbin/nginx", "-p", f"{self.ngx_dir}/", "-e", f"{self.ngx_dir}/error.log", "-c", str(main)]
            subprocess.run(ngx + ["-t", "-q"], check=True)
            subprocess.run(ngx + ["-s", "reload"], check=True)
        deadline = now() + 15
        while now() < deadline:
            if self.status() is not None:
                return
            time.sleep(0.2)
        raise RunError("the status page /ireporter-status?json&full does not answer through nginx")

    # -- inspection --

    def status(self):
        status, body, _ = http_get(self.port, "/ireporter-status?json&full", timeout=5)
        if status != 200:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def supervisor_pid(self) -> int | None:
        try:
            pid = int(self.srv_pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if self.ours(pid) else None

    def ours(self, pid: int) -> bool:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return f"--config {self.conf}" in cmd and state not in ("Z", "X")

    def children(self, ppid: int):
        """(pid, state) of ppid's children, zombies included."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == ppid:
                out.append((int(entry), fields[0]))
        return out

    def worker_pids(self):
        sup = self.supervisor_pid()
        if sup is None:
            return []
        return [pid for pid, state in self.children(sup) if state not in ("Z", "X") and self.ours(pid)]

    def server_uid(self) -> int | None:
        sup = self.supervisor_pid()
        if sup is None:
            return None
        for line in Path(f"/proc/{sup}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[2])  # effective uid
        return None

    def sql(self, query: str, timeout=30) -> list[list[str]]:
        p = subprocess.run([str(MARIADB), "sql", str(self.db_dir), str(self.db_port), "-N", "-B", "-e", query],
                           env=self.env(), capture_output=True, text=True, timeout=timeout, errors="replace")
        if p.returncode != 0:
            raise RunError(f"SQL failed: {query}: {p.stderr.strip()}")
        return [line.split("\t") for line in p.stdout.splitlines()]

    def db_alive(self) -> bool:
        p = subprocess.run([str(MARIADB), "status", str(self.db_dir), str(self.db_port)], env=self.env(),
                           capture_output=True, text=True, timeout=20)
        return p.returncode == 0

    def figures(self) -> dict:
        """Worker RSS, open fds, DB connections, zombie children, upload fs use."""
        sup = self.supervisor_pid()
        out = {"t": round(time.time(), 1), "supervisor_pid": sup, "workers": 0, "worker_rss_kb": 0,
               "worker_fds": 0, "worker_fds_max": 0, "supervisor_rss_kb": None, "supervisor_fds": None,
               "zombie_children": 0, "threads_connected": None}

        def rss(pid):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
            return 0

        if sup is not None:
            try:
                out["supervisor_rss_kb"] = rss(sup)
                out["supervisor_fds"] = len(os.listdir(f"/proc/{sup}/fd"))
            except OSError:
                pass
            for pid, state in self.children(sup):
                if state == "Z":
                    out["zombie_children"] += 1
                    continue
                if not self.ours(pid):
                    continue  # e.g. the start-up sweep child
                try:
                    fds = len(os.listdir(f"/proc/{pid}/fd"))
                    out["worker_rss_kb"] += rss(pid)
                except OSError:
                    continue
                out["workers"] += 1
                out["worker_fds"] += fds
                out["worker_fds_max"] = max(out["worker_fds_max"], fds)
        try:
            rows = self.sql("SHOW GLOBAL STATUS LIKE 'Threads_connected'", timeout=10)
            # minus this client's own connection
            out["threads_connected"] = int(rows[0][1]) - 1
        except (RunError, subprocess.TimeoutExpired, IndexError, ValueError):
            pass
        try:
            st = os.statvfs(self.upload_fs)
            out["upload_fs_used_mb"] = round((st.f_blocks - st.f_bfree) * st.f_frsize / 2**20, 1)
        except OSError:
            pass
        return out

    def has_repair(self) -> bool:
        p = subprocess.run([str(self.srv_bin), "--help"], capture_output=True, text=True, timeout=10)
        return re.search(r"^\s*ireporter repair", p.stdout, re.M) is not None


# ------------------------------------------------------------------ run state ---

class Run:
    def __init__(self, args, stack: Stack, images, png):
        self.args, self.stack, self.images, self.png = args, stack, images, png
        self.port = stack.port
        self.run_id = f"{int(time.time()) % 100000:05d}{random.randrange(100):02d}"
        self.lock = threading.Lock()
        self.records: list[dict] = []           # every request and its answer
        self.faults: list[dict] = []            # every fault injected
        self.uploads: dict[str, dict] = {}      # title -> what the client knows
        self.stream_seen: dict[str, str] = {}   # title -> IdPhoto the stream showed
        self.violations: list[str] = []
        self.warnings: list[str] = []
        self.stop_load = threading.Event()
        self.stop_faults = threading.Event()
        self.t0 = now()
        self.wall0 = time.time()
        self.samples: list[dict] = []
        self.misfit_lock = threading.Lock()
        self.misfit = {"cookie": None, "uses": 0, "n": 0}
        self.fault_threads: list[threading.Thread] = []
        self.fillers: set[Path] = set()
        self.gate = threading.Event()   # cleared: app clients hold their next request
        self.gate.set()
        self.inflight = 0               # app requests on the wire
        self.fs_quiet = threading.Lock()  # held by disk_full / readonly, and by the idle-DB probe
        self.fs_watch: list[tuple[float, float]] = []  # (t, MB free on the upload tmpfs) every 0.5 s

    def rel(self, t: float) -> float:
        return round(t - self.t0, 3)

    def wall(self, t: float) -> float:
        """Monotonic time -> wall clock (for file times)."""
        return self.wall0 + (t - self.t0)

    def violation(self, msg: str):
        with self.lock:
            self.violations.append(msg)
        log("VIOLATION: " + msg)

    def warning(self, msg: str):
        with self.lock:
            self.warnings.append(msg)
        if self.args.verbose:
            log("warning: " + msg)

    def record(self, who: str, command: str, t0: float, t1: float, status, headers, body: bytes, error,
               title=None, expect=None) -> dict:
        rec = {"who": who, "command": command, "t0": self.rel(t0), "t1": self.rel(t1), "status": status,
               "outcome": classify(status, body, error), "body": body[:300].decode("utf-8", "replace")}
        if title:
            rec["title"] = title
        if expect:
            rec["expect"] = expect
        with self.lock:
            self.records.append(rec)
        return rec

    def fault(self, kind: str, t0: float, t1: float, **details) -> dict:
        ev = {"kind": kind, "t0": self.rel(t0), "t1": self.rel(t1), **details}
        with self.lock:
            self.faults.append(ev)
        if self.args.verbose:
            log(f"fault {kind} {details}")
        return ev

    def new_title(self, who: str, seq: int) -> str:
        return f"ft-{self.run_id}-{who}-{seq}"

    # -- a session for the misbehaving clients (a fresh user every 50 uploads: upload_rate_limit) --

    def misfit_cookie(self) -> str | None:
        with self.misfit_lock:
            if self.misfit["cookie"] is None or self.misfit["uses"] >= 50:
                self.misfit["n"] += 1
                user = f"mf{self.run_id}x{self.misfit['n']}"
                body = multipart([("command", "register"), ("username", user), ("password", "x" * 40)])
                t0 = now()
                status, headers, rbody, err = http_post(self.port, body, timeout=self.args.request_timeout)
                self.record("misfit", "register", t0, now(), status, headers, rbody, err)
                cookie = session_cookie(headers) if status == 200 and classify(status, rbody, err) == "result" else None
                if cookie is None:
                    return self.misfit["cookie"]  # the old one, or None (then: Authorization required)
                self.misfit.update(cookie=cookie, uses=0)
            self.misfit["uses"] += 1
            return self.misfit["cookie"]


# ------------------------------------------------------------------ app clients ---

class AppClient(threading.Thread):
    """One app session after another: register (or login), then uploads, streams, a thumbnail
    fetch now and then, logout + login sometimes. A new user every 100 uploads (upload_rate_limit)."""

    def __init__(self, run: Run, index: int):
        super().__init__(name=f"client-{index}", daemon=True)
        self.run_, self.index = run, index
        self.rnd = random.Random(run.args.seed * 1000 + index)
        self.who = f"c{index}"
        self.seq = 0
        self.users = 0
        self.user = self.cookie = None
        self.registered = False
        self.uploads_as_user = 0
        self.seen_ids: list[str] = []

    def post(self, command, fields, file_data=None, title=None):
        r = self.run_
        body = multipart([("command", command)] + fields, file_data)
        while not r.gate.is_set() and not r.stop_load.is_set():
            r.gate.wait(0.1)
        with r.lock:
            r.inflight += 1
        t0 = now()
        try:
            status, headers, rbody, err = http_post(r.port, body, self.cookie, timeout=r.args.request_timeout)
        finally:
            with r.lock:
                r.inflight -= 1
        rec = r.record(self.who, command, t0, now(), status, headers, rbody, err, title=title)
        if err == "timeout":
            r.violation(f"{self.who}: {command} got no answer within {r.args.request_timeout} s "
                        f"(hang) at t={rec['t0']}")
        return rec, headers, rbody

    def pause(self):
        self.run_.stop_load.wait(self.rnd.uniform(0.05, 0.25))

    def new_user(self):
        self.users += 1
        self.user = f"fu{self.run_.run_id}{self.who}u{self.users}"
        self.password = "%040x" % self.rnd.getrandbits(160)  # the app sent a salted SHA1 in hex
        self.registered = False
        self.cookie = None
        self.uploads_as_user = 0

    def run(self):
        try:
            self.loop()
        except Exception as e:  # a bug of this script must not pass silently
            self.run_.violation(f"{self.who}: client crashed: {type(e).__name__}: {e}")

    def loop(self):
        r = self.run_
        self.new_user()
        while not r.stop_load.is_set():
            if self.cookie is None:
                cmd = "login" if self.registered else "register"
                rec, headers, _ = self.post(cmd, [("username", self.user), ("password", self.password)])
                if rec["outcome"] == "result":
                    self.cookie = session_cookie(headers)
                    self.registered = True
                    if not self.cookie:
                        r.violation(f"{self.who}: {cmd} answered a result but no session cookie")
                        self.pause()
                elif rec["outcome"] == "error:Username already exists":
                    self.registered = True  # the register went through, its login did not
                else:
                    self.pause()
                continue
            if self.uploads_as_user >= 100:
                self.new_user()
                continue
            p = self.rnd.random()
            if p < 0.70:
                self.upload()
            elif p < 0.84:
                self.stream()
            elif p < 0.90:
                self.stream_one()
            elif p < 0.96:
                self.fetch_thumbnail()
            else:
                self.post("logout", [])
                self.cookie = None
            if r.args.think_ms:
                r.stop_load.wait(r.args.think_ms / 1000 * self.rnd.uniform(0.5, 1.5))

    def upload(self):
        r = self.run_
        self.seq += 1
        title = r.new_title(self.who, self.seq)
        n = self.rnd.randrange(len(r.images))
        data, size = r.images[n]
        with r.lock:
            r.uploads[title] = {"who": self.who, "size": size, "outcome": None, "expect_row": None}
        rec, _, _ = self.post("upload", [("title", title)], data, title=title)
        oc = rec["outcome"]
        with r.lock:
            r.uploads[title]["outcome"] = oc
            r.uploads[title]["t"] = rec["t1"]
        self.uploads_as_user += 1
        if oc == "error:Authorization required":
            self.cookie = None
        elif oc.startswith("error:Too many uploads"):
            self.new_user()
        if oc != "successful":
            self.pause()

    def remember_stream(self, rbody):
        r = self.run_
        try:
            rows = json.loads(rbody)["result"]
        except (ValueError, KeyError, TypeError):
            return
        prefix = f"ft-{r.run_id}-"
        for row in rows:
            title, idp = row.get("title"), row.get("IdPhoto")
            if not isinstance(title, str) or not title.startswith(prefix):
                continue
            with r.lock:
                old = r.stream_seen.setdefault(title, idp)
            if old != idp:
                r.violation(f"stream showed title {title} as IdPhoto {old} and later as {idp}")
            self.seen_ids.append(idp)
            if len(self.seen_ids) > 200:
                del self.seen_ids[:100]

    def stream(self):
        rec, _, rbody = self.post("stream", [])
        if rec["outcome"] == "result":
            self.remember_stream(rbody)
        else:
            self.pause()

    def stream_one(self):
        if not self.seen_ids:
            return self.stream()
        idp = self.rnd.choice(self.seen_ids)
        rec, _, rbody = self.post("stream", [("IdPhoto", idp)])
        if rec["outcome"] == "result":
            try:
                rows = json.loads(rbody)["result"]
            except (ValueError, KeyError):
                rows = None
            if not rows:
                self.run_.violation(f"stream IdPhoto={idp} (a photo the stream showed before) is gone: {rbody[:200]!r}")
            else:
                self.remember_stream(rbody)
        else:
            self.pause()

    def fetch_thumbnail(self):
        """A photo the stream showed is committed: its files must be there (nginx serves them)."""
        r = self.run_
        if not self.seen_ids:
            return
        idp = self.rnd.choice(self.seen_ids)
        kind = self.rnd.choice(["-thumb.jpg", ".jpg"])
        t0 = now()
        status, body, err = http_get(r.port, f"/iReporter/upload/{idp}{kind}", timeout=r.args.request_timeout)
        rec = {"who": self.who, "command": "get" + kind, "t0": r.rel(t0), "t1": r.rel(now()), "status": status,
               "outcome": f"http{status}" if status else f"transport:{err}", "body": ""}
        with r.lock:
            r.records.append(rec)
        if status != 200:
            r.violation(f"GET /iReporter/upload/{idp}{kind} of a photo the stream showed: HTTP {status} {err or ''}")
            return
        got = jpeg_check(body)
        if kind == "-thumb.jpg" and got != (180, 180):
            r.violation(f"thumbnail {idp}-thumb.jpg served by nginx is not a 180x180 JPEG: {got}")
        elif not isinstance(got, tuple):
            r.violation(f"photo {idp}.jpg served by nginx is not a complete JPEG: {got}")


# ------------------------------------------------------------------ faults ---

class Injector(threading.Thread):
    """Injects faults at random times in four independent lanes, so that a short run sees every
    kind and faults of different kinds overlap: the database (db_restart, db_kill), the upload
    file system (disk_full, readonly), worker kills, and misbehaving clients (each in its own
    thread, at most 6 at once). Within a lane the kinds come from a shuffled deck."""

    LANES = [["db_restart", "db_kill", "db_restart_idle"], ["disk_full", "readonly"], ["kill_worker"], CLIENT_FAULTS]

    def __init__(self, run: Run, kinds: list[str], duration: float):
        super().__init__(name="injector", daemon=True)
        self.run_, self.kinds, self.duration = run, kinds, duration
        self.rnd = random.Random(run.args.seed * 7 + 1)
        self.client_slots = threading.Semaphore(6)
        self.end = run.t0 + duration
        # mean pause between two faults of a lane
        self.gap = run.args.fault_interval or min(5.0, max(0.5, duration / 20))

    def run(self):
        lanes = []
        for n, lane in enumerate(self.LANES):
            kinds = [k for k in lane if k in self.kinds]
            if kinds:
                t = threading.Thread(target=self.lane, args=(kinds, random.Random(self.rnd.random())),
                                     name=f"lane-{n}", daemon=True)
                lanes.append(t)
                t.start()
        for t in lanes:
            t.join()

    def lane(self, kinds, rnd):
        r = self.run_
        is_client = kinds[0] in CLIENT_FAULTS
        deck: list[str] = []
        while True:
            if r.stop_faults.wait(rnd.uniform(0.4, 1.6) * self.gap * (0.5 if is_client else 1.0)):
                return
            left = self.end - now()
            if not is_client and left < 5:
                continue  # a host fault must be over before the load stops
            if not deck:
                deck = list(kinds)
                rnd.shuffle(deck)
            kind = next((k for k in deck if k != "stalled_body" or left >= 75), None)
            if kind is None:
                deck.clear()
                continue
            if is_client:
                if not self.client_slots.acquire(blocking=False):
                    continue
                deck.remove(kind)
                self.launch(kind, None)
            else:
                deck.remove(kind)
                self.guarded(kind, None)

    def launch(self, kind, res):
        t = threading.Thread(target=self.guarded, args=(kind, res), name=f"fault-{kind}", daemon=True)
        self.run_.fault_threads.append(t)
        t.start()

    def guarded(self, kind, res):
        r = self.run_
        try:
            getattr(self, "fault_" + kind)()
        except Exception as e:
            r.violation(f"fault {kind}: the injector failed: {type(e).__name__}: {e}")
        finally:
            if kind in CLIENT_FAULTS:
                self.client_slots.release()

    # -- host faults --

    def db_start(self):
        st = self.run_.stack
        p = subprocess.run([str(MARIADB), "start", str(st.db_dir), str(st.db_port)], env=st.env(),
                           capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            self.run_.violation(f"MariaDB did not start again: {p.stderr[-500:]}")

    def fault_db_restart(self):
        st, r = self.run_.stack, self.run_
        t0 = now()
        subprocess.run([str(MARIADB), "stop", str(st.db_dir)], env=st.env(), capture_output=True, timeout=120)
        t_down = now()
        r.stop_faults.wait(self.rnd.uniform(0.5, 2.5))
        t_start = now()
        self.db_start()
        r.fault("db_restart", t0, now(), down_at=r.rel(t_down), start_at=r.rel(t_start), up_at=r.rel(now()))

    def fault_db_kill(self):
        st, r = self.run_.stack, self.run_
        try:
            pid = int((st.db_dir / "mariadbd.pid").read_text().strip())
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            return  # not running (a restart in progress): skip
        if f"--defaults-file={st.db_dir}/my.cnf" not in cmd:
            return
        t0 = now()
        os.kill(pid, signal.SIGKILL)
        deadline = now() + 20
        while now() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state in ("Z", "X"):
                    break
            except OSError:
                break
            time.sleep(0.05)
        t_down = now()
        r.stop_faults.wait(self.rnd.uniform(0.3, 2.0))
        t_start = now()
        self.db_start()
        r.fault("db_kill", t0, now(), pid=pid, down_at=r.rel(t_down), start_at=r.rel(t_start), up_at=r.rel(now()))

    def fault_db_restart_idle(self):
        """MariaDB restarted while the server has nothing to do (also what wait_timeout or a
        failover does to idle connections): the next uploads must not fail."""
        st, r = self.run_.stack, self.run_
        r.fs_quiet.acquire()  # no disk-full / read-only during the probe: its answers must be clear
        t0 = now()
        r.gate.clear()
        try:
            deadline = now() + r.args.request_timeout + 5
            while r.inflight and now() < deadline:
                time.sleep(0.02)
            subprocess.run([str(MARIADB), "stop", str(st.db_dir)], env=st.env(), capture_output=True, timeout=120)
            t_down = now()
            time.sleep(0.5)
            t_start = now()
            self.db_start()
            t_up = now()
            cookie = r.misfit_cookie()  # (a login: it reconnects one worker, which is fine)
            failed = 0
            for i in range(st.workers + 1):
                title = self.misfit_title("idleprobe")
                data, size = self.rnd.choice(r.images)
                t1 = now()
                status, headers, rbody, err = http_post(r.port, multipart([("command", "upload"), ("title", title)], data),
                                                        cookie, timeout=r.args.request_timeout)
                rec = r.record("probe", "upload", t1, now(), status, headers, rbody, err, title=title)
                oc = rec["outcome"]
                self.note_upload(title, oc, expect_row=True if oc == "successful" else None, size=size)
                failed += oc == "error:" + UNAVAILABLE
        finally:
            r.gate.set()
            r.fs_quiet.release()
        r.fault("db_restart_idle", t0, now(), down_at=r.rel(t_down), start_at=r.rel(t_start), up_at=r.rel(t_up),
                probe_failures=failed)

    def fault_kill_worker(self):
        st, r = self.run_.stack, self.run_
        t_snap = now()
        status = st.status() or {}
        procs = {p["pid"]: p for p in status.get("processes", [])}
        busy = [pid for pid, p in procs.items() if p.get("state") == "Running"]
        pids = st.worker_pids()
        if not pids:
            r.violation("kill_worker: no worker processes found")
            return
        busy = [p for p in busy if p in pids]
        n = 2 if self.rnd.random() < 0.2 and len(pids) > 2 else 1
        pool = busy if busy and self.rnd.random() < 0.7 else pids
        victims = self.rnd.sample(pool, min(n, len(pool)))
        t0 = now()
        killed = []
        for pid in victims:
            if st.ours(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
        if not killed:
            return
        # The supervisor must replace them.
        deadline = now() + 10
        back = None
        while now() < deadline:
            cur = st.worker_pids()
            if len(cur) >= st.workers and not set(killed) & set(cur):
                back = now()
                break
            time.sleep(0.05)
        # When the request each victim was serving at the kill can have started: debris (a spool
        # file, files without a row) last touched in such a window is that request's.
        windows = []
        for pid in killed:
            p = procs.get(pid)
            begin = t_snap - (p.get("request duration", 0) / 1000 if p and p.get("state") == "Running" else 0)
            windows.append([r.rel(begin - 0.1), r.rel(t0 + 0.1)])
        ev = r.fault("kill_worker", t0, now(), pids=killed, busy=[p for p in killed if p in busy],
                     replaced_after_s=round(back - t0, 3) if back else None, windows=windows)
        if back is None:
            r.violation(f"killed worker(s) {killed} not replaced within 10 s (t={ev['t0']})")

    def fault_disk_full(self):
        with self.run_.fs_quiet:
            self._disk_full()

    def _disk_full(self):
        """The upload file system runs out of space: the tmpfs is shrunk (remount) to what it holds
        plus a few MB, and a filler file beside the upload folder takes the rest up to ENOSPC.
        Then the filler goes and the size comes back. (Shrinking first keeps the filler small:
        a long run's tmpfs is gigabytes of RAM.)"""
        r, st = self.run_, self.run_.stack
        filler = st.upload_fs / f"filler-{os.getpid()}-{self.rnd.randrange(10**6)}"
        t0 = now()
        shrunk_mb = None
        for margin in (4, 8, 16, 32):
            sv = os.statvfs(st.upload_fs)
            used_mb = (sv.f_blocks - sv.f_bfree) * sv.f_frsize / 2**20
            size = int(used_mb) + margin
            if size >= r.args.upload_fs_mb:
                break
            if subprocess.run(["mount", "-o", f"remount,size={size}m", str(st.upload_fs)],
                              capture_output=True).returncode == 0:
                shrunk_mb = size
                break
        r.fillers.add(filler)
        try:
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                chunk = b"\0" * (1 << 20)
                while True:  # up to ENOSPC
                    try:
                        os.write(fd, chunk)
                    except OSError as e:
                        if e.errno == errno.ENOSPC:
                            if len(chunk) > 4096:
                                chunk = b"\0" * 4096  # the last pages too
                                continue
                            break
                        raise
            finally:
                os.close(fd)
            full_at = now()
            r.stop_faults.wait(self.rnd.uniform(1.0, 3.0))
        finally:
            filler.unlink(missing_ok=True)
            r.fillers.discard(filler)
            if shrunk_mb is not None:
                subprocess.run(["mount", "-o", f"remount,size={r.args.upload_fs_mb}m", str(st.upload_fs)], check=True)
        r.fault("disk_full", t0, now(), full_at=r.rel(full_at), shrunk_to_mb=shrunk_mb)

    def fault_readonly(self):
        with self.run_.fs_quiet:
            self._readonly()

    def _readonly(self):
        r, st = self.run_, self.run_.stack
        if r.readonly_ineffective:
            return
        t0 = now()
        os.chmod(st.upload_dir, 0o555)
        r.stop_faults.wait(self.rnd.uniform(1.0, 3.0))
        os.chmod(st.upload_dir, 0o755)
        r.fault("readonly", t0, now())

    # -- misbehaving clients --

    def upload_body(self, title, data=None, ctype="image/jpeg"):
        r = self.run_
        if data is None:
            data = self.rnd.choice(r.images)[0]
        return multipart([("command", "upload"), ("title", title)], data, ctype=ctype)

    def misfit_title(self, kind):
        r = self.run_
        with r.lock:
            r.misfit_seq = getattr(r, "misfit_seq", 0) + 1
            seq = r.misfit_seq
        return r.new_title(f"m{kind.replace('_', '')}", seq)

    def note_upload(self, title, outcome, expect_row, size=None):
        r = self.run_
        with r.lock:
            r.uploads[title] = {"who": "misfit", "size": size, "outcome": outcome, "expect_row": expect_row,
                                "t": r.rel(now())}

    def raw_exchange(self, kind, title, head, chunks, pause=0.0, read=True, read_timeout=None, rst=False,
                     expect=None):
        """Send HEAD then CHUNKS (pausing between them), then read the answer (or not)."""
        r = self.run_
        t0 = now()
        status = err = None
        headers, body = [], b""
        try:
            with socket.create_connection(("127.0.0.1", r.port), timeout=30) as s:
                s.sendall(head)
                for c in chunks:  # (a slow client finishes its body even when the load stops: <= 5 s)
                    s.sendall(c)
                    if pause:
                        time.sleep(pause)
                if rst:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                if read:
                    raw = read_all(s, now() + (read_timeout or r.args.request_timeout))
                    parsed = parse_response(raw)
                    if parsed:
                        status, headers, body = parsed
                    else:
                        err = "closed-without-answer" if not raw else "unparseable"
                else:
                    err = "not-read"
        except socket.timeout:
            err = "timeout"
        except OSError as e:
            err = type(e).__name__
        rec = r.record("misfit", kind, t0, now(), status, headers, body, err, title=title, expect=expect)
        r.fault(kind, t0, now(), outcome=rec["outcome"], title=title)
        return rec

    def fault_drop_mid_body(self):
        r = self.run_
        title = self.misfit_title("drop")
        body = self.upload_body(title)
        cut = self.rnd.randrange(1, len(body) - 1)
        self.raw_exchange("drop_mid_body", title, request_head(r.port, len(body), r.misfit_cookie()),
                          [body[:cut]], read=False, rst=self.rnd.random() < 0.5)
        self.note_upload(title, "dropped", expect_row=False)

    def fault_abandon(self):
        r = self.run_
        title = self.misfit_title("abandon")
        data, size = self.rnd.choice(r.images)
        body = self.upload_body(title, data)
        self.raw_exchange("abandon", title, request_head(r.port, len(body), r.misfit_cookie()), [body],
                          read=False, rst=self.rnd.random() < 0.5)
        self.note_upload(title, "abandoned", expect_row=None, size=size)  # may or may not be stored

    def fault_slow_body(self):
        r = self.run_
        title = self.misfit_title("slow")
        data, size = self.rnd.choice(r.images)
        body = self.upload_body(title, data)
        pieces = 20
        step = max(1, len(body) // pieces)
        chunks = [body[i:i + step] for i in range(0, len(body), step)]
        seconds = self.rnd.uniform(2.0, 5.0)
        rec = self.raw_exchange("slow_body", title, request_head(r.port, len(body), r.misfit_cookie()), chunks,
                                pause=seconds / len(chunks), expect="answer")
        oc = rec["outcome"]
        self.note_upload(title, oc, expect_row=(True if oc == "successful" else False if oc.startswith("error:")
                                                else None), size=size)
        if oc.startswith("transport:") and not r.stop_load.is_set():
            r.violation(f"slow_body: a slow but steady client got no answer: {oc} (t={rec['t0']})")

    def fault_stalled_body(self):
        """Stop sending for longer than nginx's client_body_timeout (60 s): nginx must drop it (408)."""
        r = self.run_
        title = self.misfit_title("stall")
        body = self.upload_body(title)
        half = len(body) // 2
        t0 = now()
        status = err = None
        try:
            with socket.create_connection(("127.0.0.1", r.port), timeout=90) as s:
                s.sendall(request_head(r.port, len(body), r.misfit_cookie()) + body[:half])
                raw = read_all(s, now() + 75)
                parsed = parse_response(raw)
                status = parsed[0] if parsed else None
                err = None if parsed else "closed-without-answer"
        except socket.timeout:
            err = "timeout"
        except OSError as e:
            err = type(e).__name__
        rec = r.record("misfit", "stalled_body", t0, now(), status, [], b"", err, title=title)
        r.fault("stalled_body", t0, now(), outcome=rec["outcome"], title=title)
        self.note_upload(title, rec["outcome"], expect_row=False)
        if err == "timeout":
            r.violation("stalled_body: nginx kept a stalled upload open for more than 75 s")

    def fault_cl_short(self):
        r = self.run_
        title = self.misfit_title("clshort")
        body = self.upload_body(title)
        # Cut inside the file data: the multipart body then ends before its closing boundary.
        claimed = len(body) - self.rnd.randrange(60, 400)
        rec = self.raw_exchange("cl_short", title, request_head(r.port, claimed, r.misfit_cookie()), [body],
                                expect="error")
        self.note_upload(title, rec["outcome"], expect_row=False)
        if rec["outcome"] == "successful":
            r.violation(f"cl_short: a body cut short by Content-Length was stored ({title})")

    def fault_cl_long(self):
        r = self.run_
        title = self.misfit_title("cllong")
        body = self.upload_body(title)
        rec = self.raw_exchange("cl_long", title, request_head(r.port, len(body) + 1000, r.misfit_cookie()), [body],
                                read_timeout=2.0, expect="no answer")
        self.note_upload(title, rec["outcome"], expect_row=False)
        if rec["status"] is not None and rec["outcome"] == "successful":
            r.violation(f"cl_long: an upload with a Content-Length larger than its body was stored ({title})")

    def fault_oversize_nginx(self):
        r = self.run_
        title = self.misfit_title("bignginx")
        start = self.upload_body(title)[:60_000]
        rec = self.raw_exchange("oversize_nginx", title, request_head(r.port, 22 * 2**20, r.misfit_cookie()),
                                [start], read_timeout=15, expect=TOO_LARGE)
        self.note_upload(title, rec["outcome"], expect_row=False)
        if rec["outcome"] != "error:" + TOO_LARGE:
            r.violation(f"oversize_nginx: expected the JSON too-large answer, got {rec['outcome']} {rec['body'][:100]!r}")

    def fault_oversize_server(self):
        r = self.run_
        title = self.misfit_title("bigsrv")
        data = r.images[0][0][:-2] + b"\0" * (20 * 2**20 + 100_000) + b"\xff\xd9"
        body = self.upload_body(title, data)
        rec = self.raw_exchange("oversize_server", title, request_head(r.port, len(body), r.misfit_cookie()),
                                [body[i:i + 2**20] for i in range(0, len(body), 2**20)], expect=TOO_LARGE)
        oc = rec["outcome"]
        self.note_upload(title, oc, expect_row=False)
        if oc == "successful":
            r.violation(f"oversize_server: a {len(data)} byte photo was stored ({title})")
        elif oc.startswith("error:") and oc not in ("error:" + TOO_LARGE, "error:" + UNAVAILABLE,
                                                    "error:" + SERVER_PROBLEM, "error:Authorization required"):
            r.warning(f"oversize_server: answer {oc}")

    def fault_not_jpeg(self):
        r = self.run_
        title = self.misfit_title("png")
        body = self.upload_body(title, r.png, ctype="image/png")
        rec = self.raw_exchange("not_jpeg", title, request_head(r.port, len(body), r.misfit_cookie()), [body],
                                expect=NOT_JPEG)
        self.note_upload(title, rec["outcome"], expect_row=False)
        if rec["outcome"] == "successful":
            r.violation(f"not_jpeg: a PNG was accepted as a photo ({title})")

    def fault_truncated_jpeg(self):
        r = self.run_
        title = self.misfit_title("trunc")
        data, size = self.rnd.choice(r.images)
        body = self.upload_body(title, data[:int(len(data) * 0.6)])
        rec = self.raw_exchange("truncated_jpeg", title, request_head(r.port, len(body), r.misfit_cookie()), [body],
                                expect="error or success")
        oc = rec["outcome"]
        self.note_upload(title, oc, expect_row=(True if oc == "successful" else False if oc.startswith("error:")
                                                else None), size=size)


# ------------------------------------------------------------------ sampling (soak) ---

class Sampler(threading.Thread):
    def __init__(self, run: Run, interval: float):
        super().__init__(name="sampler", daemon=True)
        self.run_, self.interval = run, interval

    def run(self):
        r = self.run_
        while not r.stop_load.wait(self.interval):
            s = r.stack.figures()
            with r.lock:
                s["requests"] = len(r.records)
            s["t_run"] = round(now() - r.t0)
            r.samples.append(s)
            log(f"sample t={s['t_run']:>5}s requests={s['requests']:>7} workers={s['workers']} "
                f"worker_rss={s['worker_rss_kb'] // 1024} MB worker_fds={s['worker_fds']} (max {s['worker_fds_max']}) "
                f"supervisor rss={s['supervisor_rss_kb']} kB fds={s['supervisor_fds']} "
                f"zombies={s['zombie_children']} db_conn={s['threads_connected']} "
                f"upload_fs={s.get('upload_fs_used_mb')} MB")


# ------------------------------------------------------------------ reconcile ---

def inventory(upload_dir: Path):
    """Photos, thumbnails, spool files and anything else in the upload folder, with their times."""
    inv = {"photo": {}, "thumb": {}, "spool": {}, "other": {}}
    for e in os.scandir(upload_dir):
        if e.name in (".ireporter-upload-dir", ".removed", "photos"):
            continue  # repair's record of the folder's device, what it set aside, the photos' tree
        st = e.stat(follow_symlinks=False)
        t = max(st.st_mtime, st.st_ctime)
        m = re.fullmatch(r"(\d+)(-thumb)?\.jpg", e.name)
        if m:
            inv["thumb" if m.group(2) else "photo"][m.group(1)] = t
        elif e.name.startswith(".spool-"):
            inv["spool"][e.name] = t
        else:
            inv["other"][e.name] = t
    return inv


def identify_check(paths: list[Path]) -> dict[str, str]:
    """Full decode with ImageMagick (`identify -regard-warnings`): {path: problem} for the bad ones."""
    ident = shutil.which("identify")
    bad = {}
    if not ident:
        return bad
    for i in range(0, len(paths), 200):
        batch = [str(p) for p in paths[i:i + 200]]
        p = subprocess.run([ident, "-regard-warnings", "-format", "%i %w %h\n", *batch], capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0:
            for one in batch:  # find the culprits one by one
                q = subprocess.run([ident, "-regard-warnings", "-format", "%w %h", one], capture_output=True,
                                   text=True, timeout=60)
                if q.returncode != 0:
                    bad[one] = (q.stderr.strip() or "identify failed")[:200]
    return bad


def reconcile(run: Run, repair_available: bool) -> dict:
    st = run.stack
    windows = [(run.wall(run.t0 + w0), run.wall(run.t0 + w1))
               for f in run.faults if f["kind"] == "kill_worker" for w0, w1 in f["windows"]]
    other = [(f["kind"], run.wall(run.t0 + f["t0"]), run.wall(run.t0 + f["t1"])) for f in run.faults
             if f["kind"] in HOST_FAULTS and f["kind"] != "kill_worker"]

    readonly = [(run.wall(run.t0 + f["t0"]), run.wall(run.t0 + f["t1"])) for f in run.faults if f["kind"] == "readonly"]

    def cause(t: float) -> str:
        """Why debris last touched at wall time T is there:
        kill     - while a worker we SIGKILLed was serving the request it died in;
        readonly - from 5 s before the folder turned read-only until it was writable again: created
                   before the chmod (nothing can be created while it lasts; an open spool can still
                   be written to), its request failed on the read-only folder and could not unlink it;
        unexplained - anything else: a bug. (File times are coarse: 50 ms of slack.)"""
        if any(w0 - 0.05 <= t <= w1 + 0.05 for w0, w1 in windows):
            return "kill"
        if any(r0 - 5 <= t <= r1 + 0.05 for r0, r1 in readonly):
            return "readonly"
        return "unexplained"

    def during(t: float) -> str:
        kinds = sorted({k for k, a, b in other if a - 0.5 <= t <= b + 0.5})
        return f" (last written at run time {t - run.wall0:.2f} s" + (f", during {'/'.join(kinds)})" if kinds else ")")

    before = inventory(st.upload_dir)
    res = {"repair": None}
    # Debris: spool files, and photo/thumbnail files without a row (and the other way round).
    rows_raw = st.sql("SELECT IdPhoto, title FROM photos")
    rows = {r[0]: r[1] for r in rows_raw}
    by_title = defaultdict(list)
    for idp, title in rows.items():
        by_title[title].append(idp)

    def debris(inv, rows):
        out = {f"{what}_{why}": [] for what in ("spool", "files") for why in ("kill", "readonly", "unexplained")}
        out["other"] = sorted(inv["other"])
        for name, t in inv["spool"].items():
            why = cause(t)
            out[f"spool_{why}"].append(name + (during(t) if why == "unexplained" else ""))
        for kind, suffix in (("photo", ".jpg"), ("thumb", "-thumb.jpg")):
            for idp, t in inv[kind].items():
                if idp not in rows:
                    why = cause(t)
                    out[f"files_{why}"].append(idp + suffix + (during(t) if why == "unexplained" else ""))
        return out

    res["debris_before_repair"] = debris(before, rows)
    rows_without_files_before = sorted((idp for idp in rows if idp not in before["photo"] or idp not in before["thumb"]),
                                       key=int)
    res["rows_without_files_before_repair"] = rows_without_files_before

    inv = before
    # Everything below is judged on the state as the run left it, before any repair.
    # 1. Every acknowledged upload: exactly one row, both files, decodable, right sizes.
    acked = {t: u for t, u in run.uploads.items() if u["outcome"] == "successful"}
    lost, dup, bad_files = [], [], []
    check_paths = []
    for title, u in acked.items():
        ids = by_title.get(title, [])
        if not ids:
            lost.append(title)
            continue
        if len(ids) > 1:
            dup.append(f"{title}: IdPhoto {ids}")
        for idp in ids:
            photo, thumb = st.upload_dir / f"{idp}.jpg", st.upload_dir / f"{idp}-thumb.jpg"
            for path, want in ((photo, u.get("size")), (thumb, (180, 180))):
                try:
                    got = jpeg_check(path.read_bytes())
                except OSError as e:
                    bad_files.append(f"{title} (IdPhoto {idp}): {path.name}: {e.strerror}")
                    continue
                if not isinstance(got, tuple) or (want and got != tuple(want)):
                    bad_files.append(f"{title} (IdPhoto {idp}): {path.name}: {got}, expected {want}")
                else:
                    check_paths.append(path)
        seen = run.stream_seen.get(title)
        if seen is not None and seen not in ids:
            bad_files.append(f"{title}: the stream showed IdPhoto {seen}, the database has {ids}")
    # Full decode of a sample (all of them in short runs).
    sample = check_paths if len(check_paths) <= 4000 else random.Random(1).sample(check_paths, 4000)
    undecodable = identify_check(sample)
    res["decoded_with_identify"] = len(sample) if shutil.which("identify") else 0
    bad_files += [f"{Path(p).name}: does not decode: {why}" for p, why in undecodable.items()]

    # 2. Rows without both files (files without rows: the debris above).
    # rows whose title is not one of ours (cannot happen on the fresh database)
    foreign = [idp for idp, t in rows.items() if t not in run.uploads]
    # 3. Uploads that must have no row: error answers, and bodies the server never got whole.
    must_not = [t for t, u in run.uploads.items()
                if (u["expect_row"] is False or (u["outcome"] or "").startswith("error:")) and by_title.get(t)]
    unknown_stored = sum(1 for t, u in run.uploads.items()
                         if u["outcome"] != "successful" and not (u["outcome"] or "").startswith("error:")
                         and by_title.get(t))

    res.update(acked=len(acked), found=len(acked) - len(lost), lost=lost, duplicates=dup, bad_files=bad_files,
               rows_total=len(rows), foreign_rows=foreign,
               rows_for_failed_uploads=must_not, unknown_outcome_stored=unknown_stored,
               photos_on_disk=len(inv["photo"]), thumbs_on_disk=len(inv["thumb"]))

    for t in lost:
        run.violation(f"LOST acknowledged photo: title {t} answered {{\"successful\":1}} but has no row")
    for d in dup:
        run.violation(f"one upload, several rows: {d}")
    for b in bad_files:
        run.violation(f"acknowledged photo damaged: {b}")
    for idp in rows_without_files_before:
        run.violation(f"row without both files: IdPhoto {idp} ({rows.get(idp, '?')}): photo "
                      f"{'present' if idp in before['photo'] else 'MISSING'}, thumbnail "
                      f"{'present' if idp in before['thumb'] else 'MISSING'}")
    for t in must_not:
        run.violation(f"a failed upload left a row: {t} (answer {run.uploads[t]['outcome']}) IdPhoto {by_title[t]}")
    for idp in foreign:
        run.violation(f"row with a title this run never sent: IdPhoto {idp} {rows[idp]!r}")
    d0 = res["debris_before_repair"]
    for name in d0["spool_unexplained"]:
        run.violation(f"leftover temp file {name} not explained by a worker kill or the read-only folder")
    for name in d0["files_unexplained"]:
        run.violation(f"file without a row: {name} not explained by a worker kill or the read-only folder")
    known = {k: v for k, v in d0.items() if k.endswith(("_kill", "_readonly")) and v}
    if run.args.strict and known:
        for k, v in known.items():
            run.violation(f"--strict: debris ({k}): {v[:10]}")
    for name in d0["other"]:
        run.warning(f"unexpected file in the upload folder: {name}")
    res["rows_without_files"] = rows_without_files_before
    res["debris_after_repair"] = None
    if repair_available:
        # 4. `ireporter repair --yes --grace 0` (nothing is in flight): no debris may survive it, and it
        #    must not take away anything acknowledged.
        p = subprocess.run([str(st.srv_bin), "repair", "--yes", "--grace", "0", "--config", str(st.conf)],
                           capture_output=True, text=True, timeout=300)
        res["repair"] = {"exit": p.returncode, "summary": (p.stdout.strip().splitlines() or [""])[0],
                         "stdout": p.stdout.strip()[:3000], "stderr": p.stderr.strip()[-2000:]}
        if p.returncode != 0:
            run.violation(f"ireporter repair failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
        rows_after = {r[0]: r[1] for r in st.sql("SELECT IdPhoto, title FROM photos")}
        after = inventory(st.upload_dir)
        d1 = res["debris_after_repair"] = debris(after, rows_after)
        left = [n for k, v in d1.items() if k != "other" for n in v]
        if left:
            run.violation(f"debris left after `ireporter repair --yes --grace 0`: {left[:10]}")
        res["rows_without_files"] = [idp for idp in rows_after if idp not in after["photo"] or idp not in after["thumb"]]
        for idp in res["rows_without_files"]:
            run.violation(f"row without both files after repair: IdPhoto {idp}")
        intact_before = {idp for t in acked if t not in lost for idp in by_title[t]
                         if idp in before["photo"] and idp in before["thumb"]}
        for idp in sorted(intact_before, key=int):
            if idp not in rows_after or idp not in after["photo"] or idp not in after["thumb"]:
                run.violation(f"repair took away (part of) acknowledged photo IdPhoto {idp}")
    return res


# ------------------------------------------------------------------ answers check ---

def check_answers(run: Run) -> dict:
    """Only well-formed JSON (or the empty body of logout), or nginx's 502 for a killed worker."""
    kills = [(f["t0"], f["t1"]) for f in run.faults if f["kind"] == "kill_worker"]
    db_windows = [(f["t0"], f["up_at"]) for f in run.faults if f["kind"].startswith("db_")]
    fs_windows = [(f["t0"], f["t1"]) for f in run.faults if f["kind"] in ("disk_full", "readonly")]
    out = {"http502_from_kill": 0, "http502_unexplained": 0, "unavailable_in_db_outage": 0,
           "unavailable_after_db_back": [], "unavailable_no_db_fault": 0, "unavailable_late": [],
           "server_problem_in_fs_fault": 0, "server_problem_fs_full": 0, "server_problem_other": 0}

    def overlaps(rec, windows, before=0.0, after=0.0):
        """REC was on the wire during one of WINDOWS (a request sent at the very end of one is not)."""
        return any(rec["t0"] - after < w1 and w0 - before <= rec["t1"] for w0, w1 in windows)

    for rec in run.records:
        oc, who = rec["outcome"], rec["who"]
        if who == "misfit" and rec["command"] in CLIENT_FAULTS:
            # judged by their own fault functions; only malformed answers matter here
            if oc in ("malformed-json", "unexpected-json"):
                run.violation(f"{rec['command']}: malformed answer {rec['body'][:120]!r}")
            continue
        if rec["command"].startswith("get"):
            continue
        if oc == "http502":
            if any(rec["t0"] - 0.2 <= k1 and k0 <= rec["t1"] + 0.2 for k0, k1 in kills):
                out["http502_from_kill"] += 1
            else:
                out["http502_unexplained"] += 1
                run.violation(f"HTTP 502 not explained by a worker kill: {rec['command']} t={rec['t0']}..{rec['t1']}")
        elif oc.startswith("http"):
            run.violation(f"HTTP {rec['status']} for a well-formed {rec['command']} (t={rec['t0']}): {rec['body'][:120]!r}")
        elif oc.startswith("transport:"):
            if oc != "transport:timeout":  # timeouts were reported as hangs already
                run.violation(f"no HTTP answer for {rec['command']} ({oc}) at t={rec['t0']}")
        elif oc in ("malformed-json", "unexpected-json"):
            run.violation(f"malformed answer to {rec['command']}: {rec['body'][:160]!r}")
        elif oc == "empty" and rec["command"] != "logout":
            run.violation(f"empty answer to {rec['command']} at t={rec['t0']}")
        elif oc.startswith("error:"):
            if not error_is_known(oc):
                run.violation(f"unknown error text for {rec['command']}: {oc[6:]!r}")
            if oc == "error:" + UNAVAILABLE:
                if overlaps(rec, db_windows):
                    out["unavailable_in_db_outage"] += 1
                elif overlaps(rec, [(w0, w1 + 5.0) for w0, w1 in db_windows]):
                    # sent after the DB was back (mariadb.sh start returned: it had been
                    # accepting connections for a while), within 5 s
                    out["unavailable_after_db_back"].append(f"{rec['who']} {rec['command']} t={rec['t0']}")
                elif db_windows and any(rec["t0"] > w1 for _, w1 in db_windows):
                    out["unavailable_late"].append(rec["t0"])
                else:
                    out["unavailable_no_db_fault"] += 1
            if oc == "error:" + SERVER_PROBLEM:
                if overlaps(rec, fs_windows, after=0.5):
                    out["server_problem_in_fs_fault"] += 1
                elif any(rec["t0"] - 1 <= t <= rec["t1"] + 1 and free < 2 for t, free in run.fs_watch):
                    out["server_problem_fs_full"] += 1  # the tmpfs filled up by itself
                else:
                    out["server_problem_other"] += 1
    if out["unavailable_after_db_back"]:
        run.violation(f"{len(out['unavailable_after_db_back'])} 'temporarily unavailable' answers to requests sent "
                      f"after the database was back up (a worker used its dead connection without reconnecting): "
                      f"{', '.join(out['unavailable_after_db_back'][:8])}")
    out["unavailable_after_db_back"] = len(out["unavailable_after_db_back"])
    if out["unavailable_late"]:
        run.violation(f"{len(out['unavailable_late'])} 'temporarily unavailable' answers more than 5 s after the "
                      f"database was back (first at t={out['unavailable_late'][0]})")
    if out["unavailable_no_db_fault"]:
        run.violation(f"{out['unavailable_no_db_fault']} 'temporarily unavailable' answers with no database fault before them")
    if out["server_problem_fs_full"]:
        run.warning(f"{out['server_problem_fs_full']} 'Upload on server problem' answers while the upload tmpfs "
                    f"was full by itself (give it more room: --upload-fs-mb)")
    if out["server_problem_other"]:
        run.warning(f"{out['server_problem_other']} 'Upload on server problem' answers outside the disk faults "
                    f"with room on the tmpfs (see ireporter.log)")
    out["unavailable_late"] = len(out["unavailable_late"])
    return out


# ------------------------------------------------------------------ report ---

def pct(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def report(run: Run, res: dict, answers: dict, fig0: dict, fig1: dict, status_end: dict | None, elapsed: float,
           total: float, log_summary: dict) -> dict:
    args = run.args
    by_cmd = Counter(r["command"] for r in run.records)
    outcomes = Counter((r["command"], r["outcome"]) for r in run.records)
    faults = Counter(f["kind"] for f in run.faults)
    lat = defaultdict(list)
    for r in run.records:
        if r["who"].startswith("c") and r["outcome"] in ("successful", "result", "empty"):
            lat[r["command"]].append(r["t1"] - r["t0"])
    kills = [f for f in run.faults if f["kind"] == "kill_worker"]
    killed = sum(len(f["pids"]) for f in kills)
    respawn = [f["replaced_after_s"] for f in kills if f.get("replaced_after_s") is not None]
    db_faults = [f for f in run.faults if f["kind"].startswith("db_")]

    print()
    print("=" * 78)
    print(f"iReporter fault-injection run {run.run_id}: {args.clients} clients, {args.workers} workers, "
          f"load {elapsed:.0f} s, total {total:.0f} s (seed {args.seed})")
    print("=" * 78)
    print(f"requests sent: {len(run.records)}  (" + ", ".join(f"{k} {v}" for k, v in by_cmd.most_common()) + ")")
    print("answers by outcome:")
    for (cmd, oc), n in sorted(outcomes.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  {cmd:<16} {oc[:70]:<70} {n:>7}")
    print("faults injected: " + ", ".join(f"{k} {faults.get(k, 0)}" for k in run.kinds))
    print(f"  worker processes SIGKILLed: {killed} (busy ones: {sum(len(f['busy']) for f in kills)}); replaced after "
          f"max {max(respawn) if respawn else 0:.2f} s, median {statistics.median(respawn) if respawn else 0:.2f} s")
    if db_faults:
        outage = [f["up_at"] - f["t0"] for f in db_faults]
        print(f"  database outages: {len(db_faults)}, {min(outage):.1f}-{max(outage):.1f} s each")
    idle = [f for f in run.faults if f["kind"] == "db_restart_idle"]
    if idle:
        print(f"  idle-server DB restarts: {len(idle)}; probe uploads after the DB was back that failed: "
              f"{sum(f['probe_failures'] for f in idle)} of {sum(args.workers + 1 for _ in idle)}")
    print(f"HTTP 502 (nginx, killed worker): {answers['http502_from_kill']}; unexplained 502: {answers['http502_unexplained']}")
    print(f"'temporarily unavailable': {answers['unavailable_in_db_outage']} during DB outages, "
          f"{answers['unavailable_after_db_back']} sent within 5 s after the DB was back, {answers['unavailable_late']} later, "
          f"{answers['unavailable_no_db_fault']} without a DB fault")
    print(f"'Upload on server problem': {answers['server_problem_in_fs_fault']} during disk-full/read-only, "
          f"{answers['server_problem_fs_full']} while the tmpfs was full by itself, {answers['server_problem_other']} otherwise")
    print(f"photos acknowledged: {res['acked']}, found intact: {res['found'] - len(res['bad_files'])}, "
          f"LOST: {len(res['lost'])}, damaged: {len(res['bad_files'])}, several rows: {len(res['duplicates'])}")
    print(f"  rows in photos: {res['rows_total']}; uploads with an unknown outcome (502, abandoned) that were stored: "
          f"{res['unknown_outcome_stored']}; files fully decoded with identify: {res['decoded_with_identify']}")
    d0 = res["debris_before_repair"]
    print("orphans (before repair):")
    print(f"  rows without both files: {len(res['rows_without_files_before_repair'])}")
    print(f"  files without a row: {len(d0['files_kill'])} debris from killed workers, {len(d0['files_readonly'])} "
          f"from uploads failing on the read-only folder, {len(d0['files_unexplained'])} unexplained")
    print(f"  leftover temp files (.spool-*): {len(d0['spool_kill'])} debris from killed workers, "
          f"{len(d0['spool_readonly'])} from uploads failing on the read-only folder, "
          f"{len(d0['spool_unexplained'])} unexplained")
    print(f"  rows for failed uploads: {len(res['rows_for_failed_uploads'])}")
    if res["repair"] is not None:
        d1 = res["debris_after_repair"]
        print(f"ireporter repair --grace 0: exit {res['repair']['exit']}: {res['repair']['summary']}")
        print(f"  after repair: {sum(len(v) for k, v in d1.items() if k.startswith('spool'))} temp files, "
              f"{sum(len(v) for k, v in d1.items() if k.startswith('files'))} files without a row, "
              f"{len(res['rows_without_files'])} rows without files")
    else:
        print("ireporter repair: not available in this binary (debris left as found)")
    print("latency of successful app requests (s): " + ", ".join(
        f"{c} p50 {pct(v, 50):.3f} p99 {pct(v, 99):.3f} max {max(v):.3f}" for c, v in sorted(lat.items()) if v))

    def fig(f):
        return (f"workers {f['workers']}, worker RSS sum {f['worker_rss_kb'] / 1024:.1f} MB, worker fds {f['worker_fds']} "
                f"(max {f['worker_fds_max']}), supervisor RSS {f['supervisor_rss_kb']} kB fds {f['supervisor_fds']}, "
                f"zombies {f['zombie_children']}, DB Threads_connected {f['threads_connected']}")
    print("start: " + fig(fig0))
    print("end:   " + fig(fig1))
    print(f"upload file system: {fig1.get('upload_fs_used_mb')} MB of {args.upload_fs_mb} MB used at the end")
    if status_end:
        print(f"status page at the end: total processes {status_end.get('total processes')}, accepted conn "
              f"{status_end.get('accepted conn')}, crashed workers {status_end.get('crashed workers')}, "
              f"timed out requests {status_end.get('timed out requests')}")
    print(f"server log: {log_summary}")
    if run.samples:
        print(f"soak samples ({len(run.samples)}, every {args.sample_interval:.0f} s): see the JSON report; leak check:")
        for line in leak_summary(run.samples):
            print("  " + line)
    print(f"warnings: {len(run.warnings)}")
    for w in run.warnings[:20]:
        print("  " + w)
    print(f"VIOLATIONS: {len(run.violations)}")
    for v in run.violations[:60]:
        print("  " + v)
    if len(run.violations) > 60:
        print(f"  ... {len(run.violations) - 60} more in the JSON report")
    print("RESULT: " + ("PASS" if not run.violations else "FAIL"))
    return {"outcomes": {f"{c} {o}": n for (c, o), n in outcomes.items()}, "faults": dict(faults)}


def leak_summary(samples):
    """First third vs last third of the samples (after the first one: warm-up)."""
    s = samples[1:] if len(samples) > 3 else samples
    k = max(1, len(s) // 3)
    out = []
    for key in ("worker_rss_kb", "worker_fds", "supervisor_rss_kb", "supervisor_fds", "zombie_children",
                "threads_connected"):
        a = [x[key] for x in s[:k] if x.get(key) is not None]
        b = [x[key] for x in s[-k:] if x.get(key) is not None]
        if a and b:
            out.append(f"{key}: first {statistics.median(a):g} -> last {statistics.median(b):g} "
                       f"(min {min(x[key] for x in s if x.get(key) is not None)}, "
                       f"max {max(x[key] for x in s if x.get(key) is not None)})")
    return out


def leak_violations(run: Run):
    s = run.samples[1:] if len(run.samples) > 3 else run.samples
    if len(s) < 4:
        return
    k = max(1, len(s) // 3)
    med = lambda key, part: statistics.median([x[key] for x in part if x.get(key) is not None] or [0])
    if med("supervisor_fds", s[-k:]) > med("supervisor_fds", s[:k]) + 5:
        run.violation(f"supervisor fds grow: {med('supervisor_fds', s[:k])} -> {med('supervisor_fds', s[-k:])}")
    if med("supervisor_rss_kb", s[-k:]) > med("supervisor_rss_kb", s[:k]) * 1.5 + 4096:
        run.violation(f"supervisor RSS grows: {med('supervisor_rss_kb', s[:k])} -> {med('supervisor_rss_kb', s[-k:])} kB")
    if max(x["zombie_children"] for x in s) > run.args.workers:
        run.violation(f"zombie children pile up: up to {max(x['zombie_children'] for x in s)}")
    if med("worker_fds", s[-k:]) > med("worker_fds", s[:k]) + 4 * run.args.workers:
        run.violation(f"worker fds grow: {med('worker_fds', s[:k])} -> {med('worker_fds', s[-k:])}")


def plant_problems(run: Run):
    """--self-test: break the invariants on purpose after the load, so the checks must catch it."""
    st = run.stack
    acked = [t for t, u in run.uploads.items() if u["outcome"] == "successful"]
    if len(acked) < 3:
        raise RunError("--self-test needs at least 3 acknowledged uploads")
    rows = {t: i for i, t in st.sql("SELECT IdPhoto, title FROM photos")}
    a, b, c = acked[0], acked[1], acked[2]
    (st.upload_dir / f"{rows[a]}-thumb.jpg").unlink()                 # row without both files
    st.sql(f"DELETE FROM photos WHERE IdPhoto = {int(rows[b])}")       # lost photo + files without a row
    for name in (f"{rows[b]}.jpg", f"{rows[b]}-thumb.jpg"):             # touched now: no fault explains them
        os.utime(st.upload_dir / name)
    (st.upload_dir / f"{rows[c]}.jpg").write_bytes(b"\xff\xd8garbage")  # damaged photo
    old = time.time() - 3600
    spool = st.upload_dir / ".spool-SELFTEST"                           # temp file nobody explains
    spool.write_bytes(b"x")
    os.utime(spool, (old, old))
    run.planted = [f"row without both files: IdPhoto {rows[a]}", f"LOST acknowledged photo: title {b}",
                   f"acknowledged photo damaged: {c}", "leftover temp file .spool-SELFTEST",
                   f"file without a row: {rows[b]}.jpg"]
    failed = next((t for t, u in run.uploads.items() if (u["outcome"] or "").startswith("error:")), None)
    if failed:  # what a commit whose answer was lost looks like: the client got an error, the row is there
        st.sql(f"INSERT INTO photos (IdUser, title) VALUES (1, '{failed}')")
        run.planted.append(f"a failed upload left a row: {failed}")
    log("self-test: planted " + "; ".join(run.planted))


def summarize_log(path: Path, offset: int) -> dict:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return {}
    pats = {"killed by signal": r"was killed by signal", "exited abnormally": r"exited with status",
            "database errors": r"database: ", "fatal/crash": r"Fatal error|fatal|Segmentation|backtrace",
            "request timeouts": r"request running for more than", "start-up sweep": r"start-up sweep"}
    return {k: len(re.findall(p, text)) for k, p in pats.items()}


# ------------------------------------------------------------------ main ---

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=None, help="seconds of load (default 20; 1800 with --soak)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent app sessions (default 8)")
    ap.add_argument("--soak", action="store_true", help="sample RSS / fds / DB connections every --sample-interval s")
    ap.add_argument("--sample-interval", type=float, default=30.0)
    ap.add_argument("--faults", default="all",
                    help="comma-separated fault kinds, 'all' or 'none' (kinds: " + ", ".join(ALL_FAULTS) + ")")
    ap.add_argument("--fault-interval", type=float, default=None,
                    help="mean pause between two faults of one lane (default: duration/20, 0.5 to 5 s)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--run-dir", default="/tmp/ireporter-faults")
    ap.add_argument("--port", type=int, default=8092)
    ap.add_argument("--db-port", type=int, default=3313)
    ap.add_argument("--upload-fs-mb", type=int, default=None, help="tmpfs size (default 64; more for long runs)")
    ap.add_argument("--binary", default=None, help="server binary (default .build/release/ireporter)")
    ap.add_argument("--build", action="store_true", help="let stack.sh run swift build (default: SKIP_BUILD=1)")
    ap.add_argument("--request-timeout", type=float, default=30.0, help="a request without answer after this is a hang")
    ap.add_argument("--think-ms", type=float, default=0.0, help="pause between a client's requests")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="leave the stack running afterwards")
    ap.add_argument("--no-repair", action="store_true", help="do not call `ireporter repair` before reconciling")
    ap.add_argument("--strict", action="store_true",
                    help="debris of killed workers and of uploads failing on the read-only folder breaks the run too")
    ap.add_argument("--json", default=None, help="write the full report here (default RUN_DIR/../ireporter-faults-report.json)")
    ap.add_argument("--self-test", action="store_true",
                    help="after the load, break a photo, a row, a file and leave a temp file on purpose: "
                         "exit 0 only if the checks catch every one")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.duration is None:
        args.duration = 1800.0 if args.soak else 20.0
    if args.seed is None:
        args.seed = random.randrange(1_000_000)
    if args.upload_fs_mb is None:
        # ~8-15 kB a stored upload (photo + thumbnail), up to ~110 stored a second on 2 cores
        # (the tmpfs only takes the RAM it holds)
        args.upload_fs_mb = 64 if args.duration <= 60 else int(min(8192, 64 + args.duration * 2.5))
    if args.faults == "all":
        kinds = list(ALL_FAULTS)
    elif args.faults == "none":
        kinds = []
    else:
        kinds = [k.strip() for k in args.faults.split(",") if k.strip()]
        unknown = set(kinds) - set(ALL_FAULTS)
        if unknown:
            ap.error(f"unknown fault kinds: {', '.join(sorted(unknown))}")
    if args.duration < 150 and "stalled_body" in kinds and args.faults == "all":
        kinds.remove("stalled_body")  # needs > 60 s of nginx's client_body_timeout
    json_path = Path(args.json) if args.json else Path(str(Path(args.run_dir).resolve()) + "-report.json")

    started = now()
    stack = Stack(args)
    lock_path = Path(str(stack.run_dir) + ".lock")
    import fcntl
    lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"another faults/run.py holds {lock_path}", file=sys.stderr)
        return 2

    run = None
    interrupted = []
    phases: dict[str, float] = {}
    rc_self = 0

    def on_signal(signum, _frame):
        interrupted.append(signum)
        if run is not None:
            run.stop_load.set()
            run.stop_faults.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    rc = 2
    try:
        try:
            stack.fresh_up()
            images, png = make_images(stack.run_dir / "images")
            phases["stack up"] = now() - started
        except (RunError, subprocess.SubprocessError, OSError) as e:
            print(f"faults: the stack could not be made: {e}", file=sys.stderr)
            return 2
        run = Run(args, stack, images, png)
        run.kinds = kinds
        uid = stack.server_uid()
        www = pwd.getpwnam("www-data").pw_uid
        run.readonly_ineffective = uid is None or uid == 0
        if uid != www:
            run.warning(f"the server runs as uid {uid}, not www-data ({www}): "
                        + ("the read-only fault is skipped (root ignores permissions)" if uid == 0 else ""))
        log_offset = (stack.run_dir / "ireporter.log").stat().st_size if (stack.run_dir / "ireporter.log").exists() else 0
        fig0 = stack.figures()
        log(f"run {run.run_id}: seed {args.seed}, {args.clients} clients for {args.duration:.0f} s, faults: "
            + (", ".join(kinds) or "none") + f"; server uid {uid}")

        clients = [AppClient(run, i) for i in range(args.clients)]
        run.t0 = now()
        run.wall0 = time.time()
        for c in clients:
            c.start()
        injector = Injector(run, kinds, args.duration) if kinds else None
        if injector:
            injector.start()
        sampler = Sampler(run, args.sample_interval) if args.soak else None
        if sampler:
            sampler.start()
        deadline = run.t0 + args.duration
        last_note = now()
        while now() < deadline:
            time.sleep(min(0.5, max(0.0, deadline - now())))
            try:
                sv = os.statvfs(stack.upload_fs)
                run.fs_watch.append((run.rel(now()), sv.f_bavail * sv.f_frsize / 2**20))
            except OSError:
                pass
            if not args.soak and now() - last_note >= 60:
                last_note = now()
                with run.lock:
                    log(f"t={now() - run.t0:.0f}s requests={len(run.records)} faults={len(run.faults)} "
                        f"violations={len(run.violations)}")
        elapsed = now() - run.t0
        log(f"stopping the load after {elapsed:.1f} s ({len(run.records)} requests)")
        run.stop_faults.set()
        run.stop_load.set()
        for c in clients:
            c.join(args.request_timeout + 10)
            if c.is_alive():
                run.violation(f"{c.name} still waiting for an answer at the end")
        if injector:
            injector.join(180)  # the host lanes finish the fault in hand (a DB start takes seconds)
            if injector.is_alive():
                run.violation("a host fault did not finish within 180 s after the load stopped")
        for t in list(run.fault_threads):
            t.join(180)
            if t.is_alive():
                run.violation(f"fault thread {t.name} did not finish within 180 s")
        if sampler:
            sampler.join(5)
        phases["load"] = elapsed
        phases["drain"] = now() - run.t0 - elapsed
        t_check = now()

        # Undo what a fault may have left (nothing is restarted: the server stays as it is).
        for f in list(run.fillers):
            f.unlink(missing_ok=True)
        os.chmod(stack.upload_dir, 0o755)
        subprocess.run(["mount", "-o", f"remount,size={args.upload_fs_mb}m", str(stack.upload_fs)], check=False)
        if not stack.db_alive():
            run.violation("MariaDB was not running after the faults ended")
            Injector(run, [], 1).db_start()
        # The service must be back: a stream answers a result within 15 s.
        t_back, ok = now(), False
        while now() - t_back < 15:
            status, _, body, err = http_post(stack.port, multipart([("command", "stream")]), timeout=10)
            if classify(status, body, err) == "result":
                ok = True
                break
            time.sleep(0.3)
        if not ok:
            run.violation("the service did not answer a stream within 15 s after the faults ended")
        # Every worker back?
        t_w = now()
        while now() - t_w < 10 and len(stack.worker_pids()) < args.workers:
            time.sleep(0.1)
        if len(stack.worker_pids()) < args.workers:
            run.violation(f"only {len(stack.worker_pids())} of {args.workers} workers running at the end")
        time.sleep(1.0)
        status_end = stack.status()
        fig1 = stack.figures()
        if fig1["threads_connected"] is not None and fig1["threads_connected"] > args.workers + 2:
            run.violation(f"{fig1['threads_connected']} DB connections at the end with {args.workers} workers")
        if fig1["zombie_children"]:
            run.violation(f"{fig1['zombie_children']} zombie children of the supervisor at the end")
        if status_end:
            crashed = status_end.get("crashed workers", 0)
            killed = sum(len(f["pids"]) for f in run.faults if f["kind"] == "kill_worker")
            if crashed > killed:
                run.violation(f"{crashed} crashed workers on the status page, only {killed} killed by us")
            if status_end.get("timed out requests", 0):
                run.violation(f"{status_end['timed out requests']} requests killed by the server's request_timeout")
        if run.samples:
            leak_violations(run)

        if args.self_test:
            plant_problems(run)
        repair_available = stack.has_repair() and not args.no_repair
        res = reconcile(run, repair_available)
        answers = check_answers(run)
        log_summary = summarize_log(stack.run_dir / "ireporter.log", log_offset)
        phases["checks"] = now() - t_check
        total = now() - started
        log("phases (s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
        summary = report(run, res, answers, fig0, fig1, status_end, elapsed, total, log_summary)
        full = {"run_id": run.run_id, "args": vars(args), "kinds": kinds, "elapsed": elapsed, "total": total,
                "summary": summary, "reconcile": res, "answers": answers, "start": fig0, "end": fig1,
                "status_end": status_end, "server_log": log_summary, "samples": run.samples,
                "faults": run.faults, "violations": run.violations, "warnings": run.warnings,
                "stream_seen": run.stream_seen,
                "uploads": run.uploads}
        json_path.write_text(json.dumps(full, indent=1, default=str))
        with open(str(json_path).replace(".json", "-answers.jsonl"), "w") as f:
            for rec in run.records:
                f.write(json.dumps(rec) + "\n")
        if args.self_test:
            caught = [p for p in run.planted if any(v.startswith(p) for v in run.violations)]
            print(f"self-test: the checks caught {len(caught)} of {len(run.planted)} planted problems"
                  + ("" if len(caught) == len(run.planted) else f"; MISSED: {sorted(set(run.planted) - set(caught))}"))
            if len(caught) != len(run.planted):
                rc_self = 3
        print(f"report: {json_path} (every answer: {str(json_path).replace('.json', '-answers.jsonl')}); "
              f"logs in {stack.run_dir}")
        rc = 1 if run.violations else 0
        if args.self_test:
            rc = rc_self if rc_self else (0 if rc == 1 else 3)  # the planted problems must fail the run
    except KeyboardInterrupt:
        print("faults: interrupted", file=sys.stderr)
        rc = 130
    finally:
        if run is not None:
            run.stop_load.set()
            run.stop_faults.set()
            for f in list(run.fillers):
                try:
                    f.unlink()
                except OSError:
                    pass
        if not args.keep:
            try:
                if stack.upload_dir.exists():
                    os.chmod(stack.upload_dir, 0o755)
                stack.down()
            except Exception as e:  # report, but keep the exit status
                print(f"faults: stopping the stack failed: {e}", file=sys.stderr)
            log(f"stack stopped; {now() - started:.1f} s in all")
        os.close(lock_fd)
    return rc


if __name__ == "__main__":
    sys.exit(main())
