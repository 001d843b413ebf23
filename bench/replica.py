#!/usr/bin/env python3
"""What read-your-writes on a GTID replica adds to a read: one
`MASTER_GTID_WAIT(position, timeout)` round trip before a signed-in user's
first replica read of a request (ReplicaReads, docs/SCALING.md).

Starts scripts/replica.sh's pair on loopback (a directory and port of its
own), writes one row on the primary, then in one session on the replica
(TCP, as the application user, the mariadb client) times STATEMENTS indexed
SELECTs alone and each after a MASTER_GTID_WAIT for a position the replica
already has (the usual case: the write was applied long before the read).
Run as root, one benchmark at a time:

    python3 bench/replica.py --out bench/results/<date>-replica
"""
from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "replica.sh"


def run(*args: str, stdin: str | None = None) -> str:
    p = subprocess.run(list(args), input=stdin, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def timed_session(password: str, port: int, text: str) -> float:
    started = time.monotonic()
    run("mariadb", "-h", "127.0.0.1", "-P", str(port), "-u", "ireport", f"-p{password}", "-N", "-B", "iReport",
        stdin=text)
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default="/tmp/ireporter-bench-replica")
    parser.add_argument("--port", type=int, default=3386)
    parser.add_argument("--statements", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    run(str(SCRIPT), "start", args.dir, str(args.port))
    try:
        run(str(SCRIPT), "sql", args.dir, str(args.port), "primary", "-e",
            "INSERT IGNORE INTO login (username, pass) VALUES ('bench-replica', 'x')")
        position = run(str(SCRIPT), "sql", args.dir, str(args.port), "primary", "-N", "-B", "-e",
                       "SELECT @@gtid_binlog_pos").strip()
        password = Path(args.dir, "primary", "ireport.password").read_text().strip()
        select = "SELECT IdUser FROM login WHERE IdUser = 1;\n"
        wait = f"SELECT MASTER_GTID_WAIT('{position}', 1);\n"
        best = {"select": float("inf"), "wait_then_select": float("inf")}
        for _ in range(args.rounds):  # the best of each: the machine is shared
            best["select"] = min(best["select"], timed_session(password, args.port + 1, select * args.statements))
            best["wait_then_select"] = min(best["wait_then_select"],
                                           timed_session(password, args.port + 1, (wait + select) * args.statements))
        figures = {
            "statements": args.statements, "position": position,
            "select_ms": round(best["select"] * 1000 / args.statements, 3),
            "wait_then_select_ms": round(best["wait_then_select"] * 1000 / args.statements, 3),
        }
        figures["added_ms"] = round(figures["wait_then_select_ms"] - figures["select_ms"], 3)
    finally:
        run(str(SCRIPT), "stop", args.dir)
        subprocess.run(["rm", "-rf", args.dir], check=False)
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "replica.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
