#!/usr/bin/env python3
"""Per-request cost of stream, login and upload: one MariaDB vs a three-node
Galera cluster (issue 18), the same server binary, through nginx, on
loopback. For each request kind: requests/s and latency with CLIENTS
clients, CPU seconds per request of our server (master and workers) and of
the database (every mariadbd: on a cluster the other nodes apply each
write too), and statements per request (the nodes' `Questions`: round trips
to the database).

A fourth kind, `photo` (`stream` with an IdPhoto: one query, never cached),
shows a read's cost where `stream` is served from the worker's cache.

Setups: `single` (scripts/mariadb.sh), `galera` (scripts/galera.sh,
db_sync_wait = 1, the default: read-your-writes on any node), `galera-nowait`
(db_sync_wait = 0: what the wait costs). Run as root, one benchmark at a time:

    flock /tmp/ireporter-bench.lock python3 bench/galera.py --binary .build/release/ireporter \
        --out bench/results/2026-12-01-galera

Bounded: at most --requests requests per kind (uploads a quarter of them),
each phase cut at --seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "Tests" / "EndToEnd"))
os.environ.setdefault("IREPORTER_BASE_URL", "http://127.0.0.1:8099/iReporter/")

import servers  # noqa: E402
from appclient import AppClient, Endpoint  # noqa: E402

HTTP_PORT = 8099
SINGLE_PORT = 3380
GALERA_PORT = 3390
TICKS = os.sysconf("SC_CLK_TCK")
# Each request kind and the share of --requests it gets. stream: the newest
# 50, from the worker's cache while nothing changes; photo: `stream` with
# an IdPhoto, one query each time.
KINDS = (("stream", 1), ("photo", 1), ("login", 2), ("upload", 4))


def cpu_seconds(pids) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / TICKS


def mariadbd_pids(directory: Path) -> list[int]:
    return [int(p.read_text()) for p in directory.rglob("mariadbd.pid")]


def sh(*args: str, timeout: float = 300) -> str:
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{p.stdout}\n{p.stderr}")
    return p.stdout


class Database:
    """One MariaDB or the cluster: the server's settings, its processes, its counters."""

    def __init__(self, kind: str, base: Path):
        self.kind = kind
        self.directory = base / kind
        if kind == "single":
            sh(str(REPO / "scripts/mariadb.sh"), "start", str(self.directory), str(SINGLE_PORT))
            self.url = sh(str(REPO / "scripts/mariadb.sh"), "url", str(self.directory)).strip()
            self.nodes = [None]
            self.keys = {}
        else:
            sh(str(REPO / "scripts/galera.sh"), "start", str(self.directory), str(GALERA_PORT))
            self.url = sh(str(REPO / "scripts/galera.sh"), "url", str(self.directory), str(GALERA_PORT)).strip()
            self.nodes = [1, 2, 3]
            self.keys = {"db_nodes": sh(str(REPO / "scripts/galera.sh"), "nodes", str(self.directory),
                                        str(GALERA_PORT)).strip()}

    def sql(self, node, text: str) -> str:
        if node is None:
            return sh(str(REPO / "scripts/mariadb.sh"), "sql", str(self.directory), str(SINGLE_PORT), "-N", "-B", "-e", text)
        return sh(str(REPO / "scripts/galera.sh"), "sql", str(self.directory), str(GALERA_PORT), str(node), "-N", "-B",
                  "-e", text)

    def questions(self) -> int:
        # (the question asked here counts once per node: subtracted)
        return sum(int(self.sql(n, "SHOW GLOBAL STATUS LIKE 'Questions'").split()[1]) - 1 for n in self.nodes)

    def cpu(self) -> float:
        return cpu_seconds(mariadbd_pids(self.directory))

    def stop(self):
        script = "mariadb.sh" if self.kind == "single" else "galera.sh"
        subprocess.run([str(REPO / "scripts" / script), "stop", str(self.directory), str(GALERA_PORT)],
                       capture_output=True, timeout=200)


def phase(kind: str, url: str, users: list[str], requests: int, clients: int, seconds: float,
          photo_ids: list[int], logged_in=None) -> dict:
    """`requests` requests of one kind from `clients` clients (each its own
    user and keep-alive connection); latencies in ms. `logged_in()`, if
    given, is called once every client has logged in, before the first
    request (what it measures leaves the logins out)."""
    barrier = threading.Barrier(clients, action=logged_in)
    photo = servers.photo()
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    left = [requests]
    deadline = time.monotonic() + seconds

    def client(n: int):
        user = users[n]
        with AppClient(Endpoint(url), timeout=60) as phone:
            phone.login(user, servers.app_password("pw"))
            barrier.wait(seconds)
            while time.monotonic() < deadline:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                started = time.monotonic()
                if kind == "stream":
                    r = phone.stream()
                    ok = r.status == 200 and r.body.startswith(b'{"result":[')
                elif kind == "photo":
                    r = phone.stream(str(photo_ids[left[0] % len(photo_ids)]))
                    ok = r.status == 200 and r.body.startswith(b'{"result":[{')
                elif kind == "login":
                    r = phone.login(user, servers.app_password("pw"))
                    ok = r.status == 200 and r.body.startswith(b'{"result":[')
                else:
                    r = phone.upload(photo, f"bench {user}")
                    ok = r.status == 200 and r.body == servers.SUCCESS
                elapsed = (time.monotonic() - started) * 1000
                with lock:
                    latencies.append(elapsed)
                    if not ok:
                        failures.append(r.body[:100].decode("latin1"))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 120)
    wall = time.monotonic() - started
    latencies.sort()
    return {"requests": len(latencies), "failures": len(failures), "failure_samples": failures[:3],
            "seconds": round(wall, 2), "per_second": round(len(latencies) / wall, 1),
            "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "p90_ms": round(latencies[int(len(latencies) * 0.9)], 1) if latencies else None}


def measure(setup: str, database: Database, binary: Path, base: Path, args) -> dict:
    keys = dict(database.keys)
    if setup == "galera-nowait":
        keys["db_sync_wait"] = 0
    work = base / f"server-{setup}"
    # (uploads unlimited: a client sends hundreds an hour here)
    server = servers.OurServer(work, binary, database.url, workers=args.workers, upload_rate_limit=0, **keys)
    server.start()
    nginx = servers.Nginx(work, HTTP_PORT, server.socket_path, server.upload_dir).start()
    url = f"http://127.0.0.1:{HTTP_PORT}/iReporter/"
    try:
        users = [servers.unique_name(f"bench{n}") for n in range(args.clients)]
        for user in users:
            with AppClient(Endpoint(url), timeout=60) as phone:
                assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
                for _ in range(5):  # a stream worth reading
                    assert phone.upload(servers.photo(), f"seed {user}").body == servers.SUCCESS
        results = {}
        photo_ids = [int(i) for i in database.sql(database.nodes[0], "SELECT IdPhoto FROM photos").split()]
        for kind, share in KINDS:
            pids = [server.proc.pid] + server.workers()
            before = (cpu_seconds(pids), database.cpu(), database.questions())
            result = phase(kind, url, users, args.requests // share, args.clients, args.seconds, photo_ids)
            after = (cpu_seconds([server.proc.pid] + server.workers()), database.cpu(), database.questions())
            n = max(result["requests"], 1)
            result["server_cpu_ms_per_request"] = round((after[0] - before[0]) * 1000 / n, 2)
            result["database_cpu_ms_per_request"] = round((after[1] - before[1]) * 1000 / n, 2)
            # (each phase's own logins count too: one per client)
            result["statements_per_request"] = round((after[2] - before[2]) / n, 2)
            results[kind] = result
            print(f"{setup:14} {kind:7} {json.dumps(result)}", flush=True)
        return results
    finally:
        nginx.stop()
        server.stop()


def sync_wait_cost(database: Database, statements: int = 2000) -> dict:
    """Milliseconds per indexed SELECT in one session of node 2 of an idle
    cluster, with each wsrep_sync_wait: what the causality check itself adds
    (under writes, a read also waits for what its node has still to apply)."""
    result = {}
    for wait in (0, 1):
        text = f"SET SESSION wsrep_sync_wait = {wait};\n" + "SELECT IdUser FROM login WHERE IdUser = 1;\n" * statements
        started = time.monotonic()
        subprocess.run([str(REPO / "scripts/galera.sh"), "sql", str(database.directory), str(GALERA_PORT), "2", "-N", "-B"],
                       input=text, capture_output=True, text=True, timeout=300, check=True)
        result[f"wsrep_sync_wait={wait}"] = round((time.monotonic() - started) * 1000 / statements, 3)
    return result


def begin(doc: str, name: str) -> tuple[argparse.Namespace, Path]:
    """The command line of a benchmark called `name`, and its fresh work folder."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(REPO / ".build/release/ireporter"))
    parser.add_argument("--out", default=str(REPO / "bench/results" / f"{time.strftime('%Y-%m-%d')}-{name}"))
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--work", default=f"/tmp/ireporter-bench-{name}")
    args = parser.parse_args()
    servers.need_root()
    base = Path(args.work)
    subprocess.run(["rm", "-rf", str(base)], check=True)
    base.mkdir(parents=True)
    os.chmod(base, 0o755)
    return args, base


def main():
    args, base = begin(__doc__, "galera")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    results = {}
    sync_wait = {}
    for kind, setups in (("single", ["single"]), ("galera", ["galera", "galera-nowait"])):
        database = Database(kind, base)
        try:
            for setup in setups:
                results[setup] = measure(setup, database, Path(args.binary), base, args)
            if kind == "galera":
                sync_wait = sync_wait_cost(database)
                print(f"sync wait: {sync_wait}", flush=True)
        finally:
            database.stop()
    load_after = os.getloadavg()
    command = "flock /tmp/ireporter-bench.lock python3 bench/galera.py " + " ".join(sys.argv[1:])
    report = {"command": command, "load_average_before": load_before, "load_average_after": load_after,
              "nproc": os.cpu_count(), "clients": args.clients, "workers": args.workers, "results": results,
              "select_ms_by_sync_wait": sync_wait}
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# Single MariaDB vs three-node Galera: per-request cost\n",
             f"Command: `{command}`  ",
             f"Machine: {os.cpu_count()} cores, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
             f"(other engineers' builds share it); {args.clients} clients, {args.workers} workers, all on loopback.\n",
             "| setup | request | req/s | p50 ms | p90 ms | server CPU ms/req | database CPU ms/req | statements/req | failed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for setup, kinds in results.items():
        for kind, r in kinds.items():
            lines.append(f"| {setup} | {kind} | {r['per_second']} | {r['p50_ms']} | {r['p90_ms']} | "
                         f"{r['server_cpu_ms_per_request']} | {r['database_cpu_ms_per_request']} | "
                         f"{r['statements_per_request']} | {r['failures']} |")
    lines += ["", "One session on node 2, 2000 indexed `SELECT`s through the mariadb client, ms each: "
              + ", ".join(f"{k}: {v}" for k, v in sync_wait.items()) + "."]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    subprocess.run(["rm", "-rf", str(base)])


if __name__ == "__main__":
    main()
