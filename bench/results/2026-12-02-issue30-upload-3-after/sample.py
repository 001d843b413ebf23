# Run beside a bench run of `/work/isolated.sh upload30` (its /tmp is /work/tmp-upload30): python3 sample.py SECONDS
# Samples our workers' state during a run: running, or the syscall they wait in (poll: on which socket).
import os, struct, time, collections, sys
master = int(open('/work/tmp-upload30/ireporter-macro/stack/ireporter/ireporter.pid').read())
W = [int(p) for p in os.popen(f'pgrep -P {master}').read().split()]
c = collections.Counter(); n = 0
end = time.time() + float(sys.argv[1])
names = {'7': 'poll', '74': 'fsync', '202': 'futex', '0': 'read', '1': 'write', '232': 'epoll_wait', '61': 'wait4', '45': 'recvfrom', '44': 'sendto', '2': 'open', '257': 'openat', '82': 'rename', '86': 'link', '56': 'clone', '435': 'clone3'}
while time.time() < end:
    for w in W:
        try: s = open(f'/proc/{w}/syscall').read().split()
        except Exception: continue
        n += 1
        if s[0] == 'running': c['running (CPU)'] += 1; continue
        key = names.get(s[0], 'sys ' + s[0])
        if s[0] == '7':
            try:
                with open(f'/proc/{w}/mem', 'rb') as m:
                    m.seek(int(s[1], 16)); data = m.read(8)
                fd = struct.unpack('iHH', data)[0]
                target = os.readlink(f'/proc/{w}/fd/{fd}')
                key += ' fd%d timeout %d' % (fd, int(s[3], 16) if int(s[3], 16) < 2**31 else -1)
            except Exception as e: key += ' ?'
        c[key] += 1
    time.sleep(0.005)
for k, v in c.most_common(14): print('%5.1f%%  %s' % (100 * v / n, k))
print(n, 'samples of', len(W), 'workers')
