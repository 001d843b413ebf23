#!/usr/bin/env python3
"""What our workers wait for during one wrk run (bench/run.sh with STATES=1).

    worker_states.py MASTER_PID_FILE TITLE OUT

Waits (at most 60 s: run.sh's wait for a quiet machine comes first) for a
wrk process to start, then samples every ~5 ms, until wrk is gone, each of
the master's children's /proc/<pid>/syscall: on a CPU (or runnable), or the
system call it sleeps in; for poll, which descriptor and timeout (the
timeout tells the peer: 30000 ms MariaDB's read timeout, ~500 ms the live
feed's publish, -1 the next request). Appends a table to OUT. The sampling
costs ~0.07 of a core, which the run loses.
"""
import collections, os, struct, sys, time

NAMES = {'0': 'read', '1': 'write', '2': 'open', '7': 'poll', '44': 'sendto', '45': 'recvfrom',
         '61': 'wait4', '74': 'fsync', '75': 'fdatasync', '82': 'rename', '86': 'link',
         '202': 'futex', '230': 'clock_nanosleep', '232': 'epoll_wait', '257': 'openat', '277': 'sync_file_range'}


def wrk_pid():
    """A running wrk's pid, read from /proc (spawning pgrep every few ms took
    half a core from the run it watched)."""
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if open(f'/proc/{entry}/comm').read().strip() == 'wrk':
                    return int(entry)
            except OSError:
                continue
    return None


def poll_detail(pid, args):
    """poll(fds, n, timeout): the first descriptor and the timeout."""
    try:
        with open(f'/proc/{pid}/mem', 'rb') as mem:
            mem.seek(int(args[1], 16))
            fd = struct.unpack('iHH', mem.read(8))[0]
        timeout = int(args[3], 16)
        return ' fd%d timeout %d' % (fd, timeout if timeout < 2**31 else -1)
    except (OSError, ValueError, IndexError, struct.error):
        return ' ?'


def main():
    pid_file, title, out = sys.argv[1], sys.argv[2], sys.argv[3]
    deadline, wrk = time.time() + 60, None
    while wrk is None:
        if time.time() > deadline:
            return
        time.sleep(0.1)  # a scan of /proc each time: not so often that the machine is never quiet
        wrk = wrk_pid()
    master = int(open(pid_file).read())
    workers = [int(p) for p in os.popen(f'pgrep -P {master}').read().split()]
    counts, samples, started = collections.Counter(), 0, time.time()
    while os.path.exists(f'/proc/{wrk}'):
        for pid in workers:
            try:
                fields = open(f'/proc/{pid}/syscall').read().split()
            except OSError:
                continue
            samples += 1
            if fields[0] == 'running':
                counts['running (CPU)'] += 1
                continue
            key = NAMES.get(fields[0], 'syscall ' + fields[0])
            if fields[0] == '7':
                key += poll_detail(pid, fields)
            counts[key] += 1
        time.sleep(0.005)
    with open(out, 'a') as f:
        f.write(f'\n## {title}, {time.time() - started:.0f} s, {samples} samples of {len(workers)} processes\n')
        for key, n in counts.most_common(14):
            f.write('%5.1f%%  %s\n' % (100 * n / max(samples, 1), key))


if __name__ == '__main__':
    main()
