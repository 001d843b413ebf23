#!/usr/bin/env python3
"""wrkrun.py - run one wrk benchmark and account for where the CPU and memory went.

  wrkrun.py --name NAME --server ours|php|ceiling [--out results.jsonl]
            --group app=PIDFILE --group nginx=PIDFILE --group db=PIDFILE
            [--status-url URL] [--wait-quiet S] -- wrk -t2 -c32 -d10s ... URL

Modelled on the PHP reference's bench/wrkrun.py. Around the wrk run it
snapshots the CPU time (utime+stime from /proc/<pid>/stat) of every process
on the machine and the machine totals (/proc/stat), and reports CPU seconds
per group. A group is the process in a pid file plus all its descendants
(our server: master + worker processes; php-fpm: master + pool; nginx:
master + workers; MariaDB). Also: wrk's own CPU (its rusage), kernel softirq
(loopback TCP is mostly accounted there) and "other" (every other process on
the machine: interference from whatever else runs on it).

Memory: while wrk runs, a sampler reads every 0.2 s the VmRSS of each
group's processes and every 2 s their PSS (from smaps_rollup) and the
groups' members, and keeps the peak of each sum; at the end it also sums
VmHWM (each process's lifetime peak RSS). PSS and the process table are
not read more often: on 2 cores a full sample took ~6.5 ms of a CPU (1 ms
per process's smaps_rollup), and five a second, at the bench's nice,
lifted the p99 of a fast server's stream from ~4 to 10-13 ms
(bench/profile-changes.md entry 31).

The nginx stub_status before/after (--status-url) shows whether anything
besides wrk sent requests during the run.

wrk must run one of bench/lua/*.lua (they print the WRKJSON line).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

HZ = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count()


def proc_table():
    """pid -> (ppid, comm, cpu_ticks)"""
    t = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(")")
        comm = s[s.find("(") + 1:r]
        fields = s[r + 2:].split()
        # fields[0] = state (field 3); utime = field 14, stime = field 15
        t[int(d)] = (int(fields[1]), comm, int(fields[11]) + int(fields[12]))
    return t


def machine_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return {"busy": user + nice + system + irq + softirq + steal, "idle": idle + iowait,
            "iowait": iowait, "softirq": softirq, "irq": irq, "steal": steal}


def read_pid(pidfile):
    try:
        return int(open(pidfile).read().strip())
    except (OSError, ValueError):
        return None


def groups(table, pidfiles):
    """group name -> set of pids (a pid file's process and all its descendants)"""
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out = {}
    for name, pf in pidfiles.items():
        root = read_pid(pf)
        seen, todo = set(), [root] if root else []
        while todo:
            p = todo.pop()
            if p in seen or p not in table:
                continue
            seen.add(p)
            todo.extend(children.get(p, []))
        out[name] = seen
    return out


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class MemorySampler(threading.Thread):
    """Peak of the summed VmRSS / PSS of each group while wrk runs."""

    def __init__(self, pidfiles, interval=0.2, full_every=10):
        super().__init__(daemon=True)
        self.pidfiles = pidfiles
        self.interval = interval
        self.full_every = full_every  # samples; a full one reads PSS and the groups' members too
        self.stop = threading.Event()
        self.rss_peak = {n: 0 for n in pidfiles}
        self.pss_peak = {n: 0 for n in pidfiles}
        self.nprocs = {n: 0 for n in pidfiles}
        self.members = None
        self.samples = 0

    def sample(self, full=True):
        if full or self.members is None:
            self.members = groups(proc_table(), self.pidfiles)
        for name, pids in self.members.items():
            self.rss_peak[name] = max(self.rss_peak[name], sum(status_kib(p, "VmRSS") for p in pids))
            if full:
                self.pss_peak[name] = max(self.pss_peak[name], sum(pss_kib(p) for p in pids))
            self.nprocs[name] = max(self.nprocs[name], len(pids))
        self.samples += 1

    def run(self):
        while not self.stop.is_set():
            self.sample(full=self.samples % self.full_every == 0)
            self.stop.wait(self.interval)


def nginx_requests(url):
    if not url:
        return None
    try:
        s = urllib.request.urlopen(url, timeout=5).read().decode()
        return int(s.splitlines()[2].split()[2])
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True, help="scenario name")
    ap.add_argument("--server", required=True, help="ours, php or ceiling")
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--note", default="")
    ap.add_argument("--group", action="append", default=[], metavar="NAME=PIDFILE",
                    help="a process group to account (first one: the application)")
    ap.add_argument("--status-url", default="")
    ap.add_argument("--wait-quiet", type=float, default=0, help="max seconds to wait for a quiet machine")
    ap.add_argument("--quiet-cores", type=float, default=0.15)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    pidfiles = dict(g.split("=", 1) for g in a.group)

    busy = None
    if a.wait_quiet > 0:
        # wait (up to --wait-quiet seconds) for a 2 s window in which the rest
        # of the machine uses less than --quiet-cores: other sessions share it
        deadline = time.monotonic() + a.wait_quiet
        while True:
            # machine-wide busy time (so short-lived processes count too)
            # minus what the benchmarked groups themselves used
            ta, ma = proc_table(), machine_ticks()
            time.sleep(2)
            tb, mb = proc_table(), machine_ticks()
            mine = set().union(*groups(tb, pidfiles).values())
            own = sum(tb[q][2] - ta[q][2] for q in mine if q in ta)
            busy = max(0, (mb["busy"] - ma["busy"]) - own) / HZ / 2
            if busy < a.quiet_cores or time.monotonic() > deadline:
                break
        print(f"(rest of machine before start: {busy:.2f} cores)")

    sampler = MemorySampler(pidfiles)
    req0 = nginx_requests(a.status_url)
    t0, m0 = proc_table(), machine_ticks()
    w0 = time.monotonic()
    sampler.start()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - w0
    t1, m1 = proc_table(), machine_ticks()
    sampler.stop.set()
    sampler.join()
    sampler.sample()
    req1 = nginx_requests(a.status_url)

    g = groups(t1, pidfiles)
    mine = set().union(*g.values())
    cpu = {}
    for name, pids in g.items():
        # processes that started during the run count from zero
        cpu[name] = sum(t1[q][2] - (t0[q][2] if q in t0 else 0) for q in pids) / HZ
    cpu["wrk"] = ru.ru_utime + ru.ru_stime
    other_by_comm = {}
    for q, (_, comm, ticks) in t1.items():
        if q in mine or q == os.getpid() or q == p.pid:
            continue
        d = (ticks - t0[q][2] if q in t0 else ticks) / HZ  # started during the run: all of it
        if d > 0:
            other_by_comm[comm] = other_by_comm.get(comm, 0) + d
    cpu["other_procs"] = sum(other_by_comm.values())
    cpu["softirq"] = (m1["softirq"] - m0["softirq"]) / HZ
    cpu["steal"] = (m1["steal"] - m0["steal"]) / HZ
    cpu["machine_busy"] = (m1["busy"] - m0["busy"]) / HZ
    cpu["machine_idle"] = (m1["idle"] - m0["idle"]) / HZ
    cpu["iowait"] = (m1["iowait"] - m0["iowait"]) / HZ
    # busy time nobody above accounts for: processes that started and exited
    # during the run (other sessions' compilers, tests...), irq
    cpu["unaccounted"] = max(0.0, cpu["machine_busy"] - sum(cpu[n] for n in pidfiles) - cpu["wrk"]
                             - cpu["other_procs"] - cpu["softirq"])

    res = {"name": a.name, "server": a.server, "rep": a.rep, "cmd": " ".join(cmd),
           "wall_s": round(wall, 3), "note": a.note, "groups": list(pidfiles),
           "exit": os.waitstatus_to_exitcode(status),
           "quiet_before_cores": None if busy is None else round(busy, 2),
           "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
    m = re.search(r"^WRKJSON (\{.*\})$", out, re.M)
    if m:
        res.update(json.loads(m.group(1)))
        res["rps"] = round(res["requests"] / (res["duration_us"] / 1e6), 1)
    nm = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    res["non2xx"] = int(nm.group(1)) if nm else 0
    if req0 is not None and req1 is not None and m:
        # the second status request counts itself; nginx also counts the
        # requests wrk still had in flight when it stopped (up to one per
        # connection), so a difference <= connections is normal
        res["nginx_requests"] = req1 - req0 - 1
        res["foreign_requests_approx"] = req1 - req0 - 1 - res["requests"]
    res["cpu_s"] = {k: round(v, 3) for k, v in cpu.items()}
    res["cpu_cores"] = {k: round(v / wall, 3) for k, v in cpu.items()}
    res["other_top"] = dict(sorted(((k, round(v, 2)) for k, v in other_by_comm.items()),
                                   key=lambda kv: -kv[1])[:5])
    res["rss_peak_kib"] = sampler.rss_peak
    res["pss_peak_kib"] = sampler.pss_peak
    res["nprocs"] = sampler.nprocs
    res["hwm_kib"] = {n: sum(status_kib(q, "VmHWM") for q in pids) for n, pids in g.items()}
    res["mem_samples"] = sampler.samples
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps(res) + "\n")

    # human summary
    print(out.rstrip())
    if m:
        cc = res["cpu_cores"]
        errs = res["err_connect"] + res["err_read"] + res["err_write"] + res["err_timeout"]
        print(f"== {a.name} [{a.server}]: {res['rps']} req/s, p50 {res['p50_us']/1000:.2f} ms, "
              f"p99 {res['p99_us']/1000:.2f} ms, p99.9 {res['p999_us']/1000:.2f} ms, socket errors {errs}, "
              f"bad status {res['bad_status']}, bad body {res['bad_body']}"
              + (f" (first: {res['bad_sample']!r})" if res["bad_sample"] else ""))
        split = ", ".join(f"{n} {cc[n]}" for n in pidfiles)
        print(f"   CPU (cores of {NCPU}): {split}, wrk {cc['wrk']}, softirq {cc['softirq']}, "
              f"other procs {cc['other_procs']} {res['other_top']}, unaccounted {cc['unaccounted']}, idle {cc['machine_idle']}")
        mem = ", ".join(f"{n} {res['rss_peak_kib'][n]/1024:.1f} MiB RSS / {res['pss_peak_kib'][n]/1024:.1f} PSS"
                        f" ({res['nprocs'][n]} procs)" for n in pidfiles)
        print(f"   peak memory: {mem}")
        if "nginx_requests" in res:
            print(f"   nginx counted {res['nginx_requests']} requests, wrk completed {res['requests']} "
                  f"(difference {res['foreign_requests_approx']})")
    else:
        print(f"== {a.name} [{a.server}]: no WRKJSON line from wrk (exit {res['exit']})")
    return 0 if res["exit"] == 0 and m else 1


if __name__ == "__main__":
    sys.exit(main())
