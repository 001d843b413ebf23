#!/usr/bin/env python3
"""service_manager.py - what systemd does with deploy/systemd/ireporter.socket
and ireporter.service, for a host where systemd is not PID 1 (this test
machine: `ps -p 1` is the VM's init), so that the restart behaviour the units
configure can be tested:

  - the socket (ListenStream, SocketUser/Group/Mode, Backlog) is opened once
    and kept for the manager's whole life, requests waiting in it included
    (`--listen`; without it the service opens its own, as under `make up`);
  - ExecStart runs as User/Group with that socket on fd 3, LISTEN_FDS=1 and
    LISTEN_PID set to its own pid;
  - when the main process dies of a signal or fails (Restart=on-failure),
    the processes it leaves (its workers: this process is their subreaper,
    as systemd is for the unit's cgroup): with ExitType=cgroup the service
    lasts until they end (here bounded by TimeoutStopSec, then SIGKILL);
    with ExitType=main and KillMode=mixed systemd stops the unit, whose
    SIGTERM goes to the main process alone (gone), so they get SIGKILL at
    once. ExecStart runs again RestartSec later, on the same socket;
  - SIGTERM to the manager: KillSignal to the main process (the stop).

Every event is a JSON line in --events: {"t": monotonic seconds, "event":
"start"|"exit"|"empty", "pid": ..., "status": ...}.

    service_manager.py --events FILE [--listen PATH --mode 0660 --backlog 511]
        --user www-data --group www-data --restart-sec 0.2 --timeout-stop 40
        --kill-signal SIGTERM --kill-mode mixed --exit-type cgroup -- EXECSTART...
"""
from __future__ import annotations

import argparse
import ctypes
import grp
import json
import os
import pwd
import signal
import socket
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", required=True)
    ap.add_argument("--listen")
    ap.add_argument("--mode", default="0660")
    ap.add_argument("--backlog", type=int, default=511)
    ap.add_argument("--user", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--restart-sec", type=float, required=True)
    ap.add_argument("--timeout-stop", type=float, required=True)
    ap.add_argument("--kill-signal", default="SIGTERM")
    ap.add_argument("--kill-mode", choices=["mixed"], required=True)
    ap.add_argument("--exit-type", choices=["main", "cgroup"], default="main")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    uid, gid = pwd.getpwnam(args.user).pw_uid, grp.getgrnam(args.group).gr_gid

    listener = None
    if args.listen:
        if os.path.exists(args.listen):
            os.unlink(args.listen)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(args.listen)
        os.chown(args.listen, uid, gid)
        os.chmod(args.listen, int(args.mode, 8))
        listener.listen(args.backlog)

    events = open(args.events, "a", buffering=1)

    def event(name: str, **fields):
        events.write(json.dumps({"t": time.monotonic(), "event": name, **fields}) + "\n")

    state = {"main": 0, "stopping": False}

    def stop(_sig, _frame):
        state["stopping"] = True
        if state["main"]:
            os.kill(state["main"], getattr(signal, args.kill_signal))
    signal.signal(signal.SIGTERM, stop)

    def start() -> int:
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
                if listener is not None:
                    if listener.fileno() != 3:
                        os.dup2(listener.fileno(), 3)
                    os.set_inheritable(3, True)
                    env.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
                devnull = os.open("/dev/null", os.O_RDONLY)
                os.dup2(devnull, 0)
                os.execve(command[0], command, env)
            finally:
                os._exit(127)
        event("start", pid=pid)
        return pid

    state["main"] = start()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if pid != state["main"]:
            continue  # a worker the dead main process left, reaped
        event("exit", pid=pid, status=status)
        state["main"] = 0
        failed = os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0
        # The unit's "cgroup": the workers left behind, re-parented to us.
        deadline = time.monotonic() + (args.timeout_stop if args.exit_type == "cgroup" else 0)
        reported = False
        while children() and time.monotonic() < deadline:
            if not reported and time.monotonic() > deadline - args.timeout_stop + 1:
                reported = True
                event("waiting", left=[(p, open(f"/proc/{p}/cmdline").read().replace("\0", " "))
                                       for p in children()])
            reap()
            time.sleep(0.01)
        left = children()
        for orphan in left:
            os.kill(orphan, signal.SIGKILL)
        reap()
        event("empty", killed=left)
        if state["stopping"] or not failed:
            return 0
        time.sleep(args.restart_sec)
        if state["stopping"]:
            return 0
        state["main"] = start()


def children() -> list[int]:
    me = os.getpid()
    found = []
    for tid in os.listdir(f"/proc/{me}/task"):
        try:
            found += [int(c) for c in open(f"/proc/{me}/task/{tid}/children").read().split()]
        except OSError:
            pass
    alive = []
    for pid in found:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            alive.append(pid)
    return alive


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    sys.exit(main())
