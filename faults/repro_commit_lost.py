#!/usr/bin/env python3
"""faults/repro_commit_lost.py - deterministic reproduction: the answer to an upload's COMMIT is lost.

What faults/run.py met by chance (1 in ~60 database restarts under load): MariaDB commits the
upload's transaction, but the connection breaks before its OK reaches the server (a restart, a
failover, a network blip). The server then takes the COMMIT for failed, deletes the photo and the
thumbnail and answers "temporarily unavailable": the row stays, without files. The photo shows up
in everyone's stream, its image 404s, and the user (told it failed) uploads it again.

How: its own stack (scripts/stack.sh, RUN_DIR /tmp/ireporter-commitlost, nginx 8095, MariaDB
3316); the server's db_url is pointed at a small TCP proxy in front of MariaDB (config edited in
the run's own RUN_DIR, then SIGUSR2: the server reloads it and starts new workers). The proxy
passes everything, except that once armed it forwards the next `COMMIT` and then closes both
sides instead of passing MariaDB's answer back. One upload with the proxy armed, then the row
and the files are checked.

    faults/repro_commit_lost.py               # a network blip: exit 1 reproduced, 0 handled, 2 could not run
    faults/repro_commit_lost.py --db-down 3   # the database is unreachable for 3 s after the COMMIT

Run as root; needs a release binary (default .build/release/ireporter, or --binary).
"""
from __future__ import annotations

import argparse
import os
import pwd
import signal
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as F  # noqa: E402  (faults/run.py: stack, HTTP, JPEG helpers)


class CommitDroppingProxy:
    """127.0.0.1:listen -> 127.0.0.1:upstream, MySQL protocol unencrypted. When armed, the first
    COM_QUERY "COMMIT" is forwarded, then both connections are closed after `hold` seconds
    without passing the server's answer on."""

    def __init__(self, listen_port: int, upstream_port: int, hold: float = 0.5, refuse_after: float = 0.0):
        self.upstream_port, self.hold, self.refuse_after = upstream_port, hold, refuse_after
        self.refuse_until = 0.0  # monotonic: new connections are closed at once until then (DB "down")
        self.armed = threading.Event()
        self.fired = threading.Event()
        self.dropped: set[int] = set()  # fileno of upstream sockets whose answers are swallowed
        self.srv = socket.create_server(("127.0.0.1", listen_port))
        self.stop = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while not self.stop:
            try:
                client, _ = self.srv.accept()
            except OSError:
                return
            if time.monotonic() < self.refuse_until:
                client.close()  # the database is "restarting"
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self.pipe, args=(upstream, client, None), daemon=True).start()
            threading.Thread(target=self.pipe, args=(client, upstream, client), daemon=True).start()

    def pipe(self, src, dst, client_side):
        """Copy src -> dst. On the client -> server side, parse packets to spot COMMIT."""
        buf = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if client_side is None:
                    if src.fileno() in self.dropped:
                        continue  # MariaDB's answer to the COMMIT: swallowed
                    dst.sendall(data)
                    continue
                buf += data
                while len(buf) >= 4:
                    n = int.from_bytes(buf[:3], "little")
                    if len(buf) < 4 + n:
                        break
                    packet, buf = buf[:4 + n], buf[4 + n:]
                    payload = packet[4:]
                    commit = (self.armed.is_set() and payload[:1] == b"\x03"
                              and payload[1:].strip().upper() == b"COMMIT")
                    if commit:
                        self.armed.clear()
                        self.dropped.add(dst.fileno())  # before it is sent: no answer may slip through
                    dst.sendall(packet)
                    if commit:
                        self.refuse_until = time.monotonic() + self.hold + self.refuse_after
                        time.sleep(self.hold)  # MariaDB commits meanwhile
                        self.fired.set()
                        for s in (src, dst):
                            try:
                                s.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                        return
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.srv.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=None)
    ap.add_argument("--run-dir", default="/tmp/ireporter-commitlost")
    ap.add_argument("--port", type=int, default=8095)
    ap.add_argument("--db-port", type=int, default=3316)
    ap.add_argument("--proxy-port", type=int, default=3399)
    ap.add_argument("--db-down", type=float, default=0.0,
                    help="after the dropped COMMIT, refuse new database connections for this many seconds "
                         "(a restart: the server cannot clean up right away). Default 0: a network blip")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.workers, args.build, args.verbose, args.upload_fs_mb = 2, False, False, 64
    stack = F.Stack(args)
    proxy = None
    try:
        try:
            stack.fresh_up()
            images, _ = F.make_images(stack.run_dir / "images")
        except (F.RunError, OSError) as e:
            print(f"could not start the stack: {e}", file=sys.stderr)
            return 2
        proxy = CommitDroppingProxy(args.proxy_port, args.db_port, refuse_after=args.db_down)

        # Point the server at the proxy (this run's own config file) and reload it (SIGUSR2).
        conf = stack.conf.read_text().splitlines()
        # (the same user and password as the stack's own db_url, through the proxy's port)
        password = (stack.db_dir / "ireport.password").read_text().strip()
        conf = [f"db_url = mysql://ireport:{password}@127.0.0.1:{args.proxy_port}/iReport"
                if line.startswith("db_url") else line for line in conf]
        stack.conf.write_text("\n".join(conf) + "\n")
        www = pwd.getpwnam("www-data")
        os.chown(stack.conf, www.pw_uid, www.pw_gid)  # the supervisor runs as www-data when it reloads
        old = set(stack.worker_pids())
        os.kill(stack.supervisor_pid(), signal.SIGUSR2)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and (set(stack.worker_pids()) & old or len(stack.worker_pids()) < 2):
            time.sleep(0.1)
        if set(stack.worker_pids()) & old:
            print("the server did not reload its configuration (SIGUSR2)", file=sys.stderr)
            return 2

        def post(fields, data=None, cookie=None):
            status, headers, body, err = F.http_post(args.port, F.multipart(fields, data), cookie)
            return status, F.session_cookie(headers), body

        _, cookie, body = post([("command", "register"), ("username", "commitlost"), ("password", "pw")])
        print(f"register: {body.decode()}")
        data = images[3][0]
        print(f"upload 'normal' (proxy passes everything): {post([('command', 'upload'), ('title', 'normal')], data, cookie)[2].decode()}")
        proxy.armed.set()
        answer = post([("command", "upload"), ("title", "commit-answer-lost")], data, cookie)[2].decode()
        print(f"upload 'commit-answer-lost' (the answer to its COMMIT is dropped): {answer}")
        if not proxy.fired.is_set():
            print("the proxy never saw a COMMIT: nothing reproduced", file=sys.stderr)
            return 2
        time.sleep(max(0.0, proxy.refuse_until - time.monotonic()) + 0.5)  # the database is back
        rows = stack.sql("SELECT IdPhoto, title FROM photos ORDER BY IdPhoto")
        print("photos table: " + ", ".join(f"{i}:{t}" for i, t in rows))
        row = next((i for i, t in rows if t == "commit-answer-lost"), None)
        files = sorted(p.name for p in stack.upload_dir.iterdir())
        print(f"upload folder: {files}")
        if row is None:
            print("RESULT: no row for the upload: consistent with its error answer (handled)")
            return 0
        have = [n for n in (f"{row}.jpg", f"{row}-thumb.jpg") if n in files]
        if answer == '{"successful":1}' and len(have) == 2:
            print("RESULT: row and both files, and the client was told it succeeded (handled)")
            return 0
        print(f"RESULT: BUG reproduced: row IdPhoto {row} is committed, files present: {have or 'none'}, "
              f"and the client was answered {answer}")
        st, body, _ = F.http_get(args.port, f"/iReporter/upload/{row}.jpg")
        print(f"GET /iReporter/upload/{row}.jpg -> HTTP {st}; the stream shows it: "
              f"{'commit-answer-lost' in post([('command', 'stream')])[2].decode()}")
        return 1
    finally:
        if proxy:
            proxy.close()
        if not args.keep:
            stack.down()


if __name__ == "__main__":
    sys.exit(main())
