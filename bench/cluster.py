#!/usr/bin/env python3
"""Per-request cost of every process, single host vs cluster (issue 18):
stream, photo (`stream` with an IdPhoto), login and upload through
`scripts/stack.sh up` (one nginx, our server, one MariaDB, files) and
through `scripts/cluster.sh up` (front nginx, two app hosts of nginx and
our server, Redis, three Galera nodes; an S3 server too when cluster.sh
starts one), the same release binary and WORKERS per host.

For each request kind: requests/s and latency with CLIENTS clients, the
CPU milliseconds per request of each process found under the setup's
folder (every pid file there: its process and its children, named by
where the pid file is, e.g. `host1/nginx`, `galera/node2/mariadbd`; plus
any `s3-server.py` whose command line names the folder), and the round
trips per request to each service: database statements (each mariadbd's
`Questions`), Redis commands (INFO commandstats, by command; the commands
a script runs count too, so a script is fewer round trips than its count).

Run as root, one benchmark at a time, in a network namespace of its own
(its own loopback: no clash with servers on the standard ports):

    flock /tmp/ireporter-bench.lock unshare -n sh -c 'ip link set lo up && \
        python3 bench/cluster.py --binary .build/release/ireporter --requests 2400 --clients 6 \
        --out bench/results/2026-12-01-cluster'

Bounded: at most --requests requests per kind (logins half, uploads a
quarter: keep uploads per client under upload_rate_limit, 120 an hour, with
--clients), each phase cut at --seconds; the setups are stopped at the end.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from galera import KINDS, REPO, begin, cpu_seconds, phase  # (also puts Tests/EndToEnd on the path)

import servers  # noqa: E402
from appclient import AppClient, Endpoint  # noqa: E402

# Ports of its own (the Galera nodes' own ports 3470-3492): no other benchmark's.
FRONT_PORT, APP_PORTS, GALERA_PORT, REDIS_PORT, SINGLE_DB_PORT = 8120, (8121, 8122), 3460, 6396, 3398


def process_name(place: Path, program: str) -> str:
    """Where its pid file is, and the program: `host1/nginx` (host1/nginx/nginx.pid),
    `galera/node2/mariadbd`, `redis/redis-server`, `ireporter` (./ireporter.launch.pid)."""
    parts = list(place.parts)
    return "/".join(parts if parts and parts[-1] == program else [*parts, program])


class Setup:
    """One of the two installations, started by its own script in `directory`."""

    def __init__(self, name: str, directory: Path, binary: Path, workers: int):
        self.name, self.directory = name, directory
        common = dict(PATH=os.environ["PATH"], SKIP_BUILD="1", BINARY=str(binary), WORKERS=str(workers))
        if name == "single host":
            self.script = REPO / "scripts" / "stack.sh"
            self.env = servers.clean_env(**common, RUN_DIR=str(directory), PORT=str(FRONT_PORT),
                                         DB_PORT=str(SINGLE_DB_PORT))
        else:
            self.script = REPO / "scripts" / "cluster.sh"
            self.env = servers.clean_env(**common, CLUSTER_DIR=str(directory), PORT=str(FRONT_PORT),
                                         APP_PORTS=" ".join(map(str, APP_PORTS)), GALERA_PORT=str(GALERA_PORT),
                                         REDIS_PORT=str(REDIS_PORT))
        self.url = f"http://127.0.0.1:{FRONT_PORT}/iReporter/"

    def run(self, command: str):
        p = subprocess.run([str(self.script), command], capture_output=True, text=True, timeout=600, env=self.env)
        if p.returncode != 0:
            raise SystemExit(f"{self.script.name} {command}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")

    def processes(self) -> dict[str, list[int]]:
        """Each process of the setup by name: a pid file's process and its children."""
        found: dict[str, list[int]] = {}
        seen: set[int] = set()
        for pidfile in sorted(self.directory.rglob("*.pid")):
            try:
                pid = int(pidfile.read_text().split()[0])
                program = Path(f"/proc/{pid}/comm").read_text().strip()
            except (OSError, ValueError, IndexError):
                continue
            if pid in seen:  # (stack.sh's launch pid file names the server too)
                continue
            seen.add(pid)
            found[process_name(pidfile.parent.relative_to(self.directory), program)] = \
                [pid, *servers.children(pid)]
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and int(proc.name) not in seen:
                try:
                    command = (proc / "cmdline").read_bytes().decode(errors="replace")
                except OSError:
                    continue
                if "s3-server.py" in command and str(self.directory) in command:
                    found.setdefault("s3-server.py", []).append(int(proc.name))
        return found

    def mariadb_configs(self) -> list[Path]:
        return sorted(p.parent / "my.cnf" for p in self.directory.rglob("mariadbd.pid"))

    def statements(self) -> int:
        total = 0
        for config in self.mariadb_configs():
            out = subprocess.run(["mariadb", f"--defaults-file={config}", "-u", "root", "-N", "-B", "-e",
                                  "SHOW GLOBAL STATUS LIKE 'Questions'"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout
            total += int(out.split()[1])
        return total

    def redis_calls(self) -> dict[str, int]:
        calls: dict[str, int] = {}
        for config in self.directory.rglob("redis.conf"):
            port = re.search(r"^port (\d+)", config.read_text(), re.M).group(1)
            out = subprocess.run(["redis-cli", "-p", port, "INFO", "commandstats"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout
            for name, count in re.findall(r"^cmdstat_([^:]+):calls=(\d+)", out, re.M):
                calls[name] = calls.get(name, 0) + int(count)
        return calls

    def snapshot(self) -> dict:
        return {"cpu": {name: cpu_seconds(pids) for name, pids in self.processes().items()},
                "statements": self.statements(), "databases": len(self.mariadb_configs()),
                "redis": self.redis_calls(), "redis_servers": len(list(self.directory.rglob("redis.conf")))}


def per_request(before: dict, after: dict, requests: int) -> dict:
    n = max(requests, 1)
    # Between two snapshots each server counts one question of ours.
    after = dict(after, statements=after["statements"] - after["databases"],
                 redis=dict(after["redis"], info=after["redis"].get("info", 0) - after["redis_servers"]))
    cpu = {name: round((after["cpu"][name] - before["cpu"].get(name, 0.0)) * 1000 / n, 3) for name in after["cpu"]}
    redis = {name: round((count - before["redis"].get(name, 0)) / n, 2) for name, count in after["redis"].items()
             if count != before["redis"].get(name, 0)}
    return {"cpu_ms": cpu, "cpu_ms_total": round(sum(cpu.values()), 2),
            "statements": round((after["statements"] - before["statements"]) / n, 2),
            "redis_commands": round(sum(redis.values()), 2), "redis_by_command": redis}


def measure(setup: Setup, args) -> dict:
    setup.run("up")
    try:
        users = [servers.unique_name(f"bench{n}") for n in range(args.clients)]
        for user in users:
            with AppClient(Endpoint(setup.url), timeout=60) as phone:
                assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
                for _ in range(5):  # a stream worth reading
                    assert phone.upload(servers.photo(), f"seed {user}").body == servers.SUCCESS
                photo_ids = [int(row["IdPhoto"]) for row in phone.stream().json()["result"]]
        results = {}
        for kind, share in KINDS:
            before = {}
            result = phase(kind, setup.url, users, args.requests // share, args.clients, args.seconds, photo_ids,
                           logged_in=lambda: before.update(setup.snapshot()))
            result.update(per_request(before, setup.snapshot(), result["requests"]))
            results[kind] = result
            print(f"{setup.name:12} {kind:7} {json.dumps(result)}", flush=True)
        return results
    finally:
        setup.run("down")


def report(results: dict, command: str, load: tuple, args) -> str:
    lines = ["# Single host vs cluster: each process's CPU and the round trips per request\n",
             f"Command: `{command}`  ",
             f"Machine: {os.cpu_count()} cores, load average {load[0][0]:.2f} before, {load[1][0]:.2f} after "
             f"(other engineers' builds share it); {args.clients} clients, {args.workers} workers per app host, "
             "all on loopback. CPU in ms per request (user + system, /proc); statements and Redis commands per "
             "request (INFO commandstats: the commands a script runs count too).\n",
             "| setup | request | req/s | p50 ms | p90 ms | CPU ms/req, all processes | statements/req | "
             "Redis commands/req | failed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, kinds in results.items():
        for kind, r in kinds.items():
            lines.append(f"| {name} | {kind} | {r['per_second']} | {r['p50_ms']} | {r['p90_ms']} | "
                         f"{r['cpu_ms_total']} | {r['statements']} | {r['redis_commands']} | {r['failures']} |")
    for kind, _ in KINDS:
        names = sorted({p for kinds in results.values() for p in kinds[kind]["cpu_ms"]})
        lines += ["", f"## {kind}: CPU ms per request by process\n",
                  "| process | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
        for process in names:
            lines.append(f"| {process} | " + " | ".join(
                str(kinds[kind]["cpu_ms"].get(process, "")) for kinds in results.values()) + " |")
        lines.append("| Redis commands | " + " | ".join(
            ", ".join(f"{c} {v}" for c, v in sorted(kinds[kind]["redis_by_command"].items())) or "none"
            for kinds in results.values()) + " |")
    return "\n".join(lines) + "\n"


def main():
    args, base = begin(__doc__, "cluster")
    load_before = os.getloadavg()
    results = {name: measure(Setup(name, base / name.split()[0], Path(args.binary).resolve(), args.workers), args)
               for name in ("single host", "cluster")}
    command = "python3 bench/cluster.py " + " ".join(sys.argv[1:])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"command": command, "nproc": os.cpu_count(),
                                                  "load_average_before": load_before,
                                                  "load_average_after": os.getloadavg(),
                                                  "clients": args.clients, "workers": args.workers,
                                                  "results": results}, indent=2) + "\n")
    text = report(results, command, (load_before, os.getloadavg()), args)
    (out / "results.md").write_text(text)
    print(text)
    subprocess.run(["rm", "-rf", str(base)])


if __name__ == "__main__":
    main()
