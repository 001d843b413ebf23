"""Login and registration defences through nginx, tried as the service's
users and attackers would (docs/SECURITY.md, "Online guessing"):

  - a guesser on a few accounts behind a shared address (carrier NAT, an
    office) locks nobody else behind it out, not even from registering;
  - thirty honest typos there, each followed by the right password, do not
    add up;
  - credential stuffing across 50 accounts from one address is slowed;
  - a guesser spread over many addresses on one account is slowed, for at
    most a minute at a time;
  - every spelling of a name the column matches alike (invalid UTF-8
    included) counts against that name's counters;
  - a flood of registrations of a taken name leaves `stream` fast (no
    password hash is computed for it), and registrations from one address
    are counted;
  - every failed login and every refusal is one line of the server's log
    that deploy/fail2ban's filter reads (fail2ban-regex on the log the
    server wrote): the client's address, never one a username forges, and
    nothing for a successful login.

Every client connects from its own loopback address (127.0.x.y reaches the
server like any other address: nginx passes it as REMOTE_ADDR), so the
counters of 127.0.0.1, which the rest of the suite uses, are not touched.
Accounts are made with plain stored values (the PHP version's rows) where
only the throttle is under test, so guessing costs no Argon2 hash. Loads
are bounded in count and time; loopback only.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

import e2e
import servers
from conftest import reset_state
from appclient import AppClient
from e2e import AUTH_FAILED, OURS, USER_EXISTS, check_api_headers

pytestmark = [pytest.mark.usefixtures("hashing_stack"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no throttling")]

TOO_MANY = b'{"error":"Too many failed logins, try again in '
TOO_MANY_REGISTRATIONS = b'{"error":"Too many registrations, try again in '


def signed_in(id_user, name: str) -> bytes:
    return b'{"result":[{"IdUser":"%d","username":"%s"}]}' % (int(id_user), name.encode())


def reload_workers(base: str):
    """SIGUSR2 to the supervisor (the workers' parent), then wait for the new pool."""
    before = {p["pid"] for p in servers.status(base)["processes"]}
    stat = Path(f"/proc/{next(iter(before))}/stat").read_text()
    os.kill(int(stat.rsplit(")", 1)[1].split()[1]), signal.SIGUSR2)
    servers.wait_for(lambda: not {p["pid"] for p in servers.status(base)["processes"]} & before, 20,
                     interval=0.2, what="a new pool of workers")


@pytest.fixture(scope="module")
def hashing_stack(fresh_db, env, db, endpoint):
    """The schema with login.pass widened (passwords hashed, as after
    `migrate-passwords`), and workers that know it: each looks at the
    column at most once a minute, so the pool is replaced. Afterwards the
    stack is left as the other modules leave it (narrow, plain values)."""
    base = f"http://{endpoint.host_header}/"
    db.run((e2e.REPO_ROOT / "sql/migrations/001-widen-pass.sql").read_text())
    reload_workers(base)
    yield
    reset_state(env, db)
    reload_workers(base)


def add_accounts(db, names, password="pw"):
    """Rows as the PHP version wrote them: the password as sent, not hashed."""
    db.run("INSERT INTO login (username, pass) VALUES "
           + ",".join(f"('{n}', '{password}-{n}')" for n in names) + ";")
    return {n: int(i) for i, n in db.run("SELECT IdUser, username FROM login")}


def login(endpoint, source: str, name, password) -> bytes:
    with AppClient(endpoint, source=source) as c:
        r = c.login(name, password)
        check_api_headers(r)
        return r.body


class Attempt(NamedTuple):
    answer: bytes
    sent: float  # time.monotonic() before connecting: the server saw it later
    answered: float  # ... once answered: the server saw it before


def timed_login(endpoint, source: str, name, password) -> Attempt:
    sent = time.monotonic()
    answer = login(endpoint, source, name, password)
    return Attempt(answer, sent, time.monotonic())


def seconds_announced(refused: bytes) -> int:
    assert refused.startswith(TOO_MANY), refused
    return int(refused[len(TOO_MANY):].split(b" ")[0])


# The server's clock (CLOCK_MONOTONIC, like time.monotonic()) counts whole milliseconds.
CLOCK_SLACK = 0.05


def login_once_let_in(endpoint, source: str, name, password, within: float) -> bytes:
    """The first answer that is not a refusal, asked every 0.1 s while the
    block lasts, at most `within` s: the server's own window, waited for
    (a refused attempt counts against no one)."""
    def answer():
        a = login(endpoint, source, name, password)
        return None if a.startswith(TOO_MANY) else a
    return servers.wait_for(answer, within, interval=0.1, what=f"the block on {name!r} to end")


def expect_slowed(attempts: list[Attempt], allowed: int):
    """`allowed` answered normally, then refused. A block lasts a second or
    more from the failure that set it, and at least what a refusal announces
    less its rounding up: on a slow machine it may end before the attempts
    do, and the attempt then let through blocks again, longer. Each attempt
    let through must come after the block before it could have ended, and
    some are refused."""
    answers = [a.answer for a in attempts]
    assert all(a == AUTH_FAILED for a in answers[:allowed]), answers[:allowed]
    ends = attempts[allowed - 1].sent + 1  # the earliest the block in force can end
    for i, a in enumerate(attempts[allowed:], allowed):
        if a.answer == AUTH_FAILED:
            assert a.answered > ends - CLOCK_SLACK, \
                (f"attempt {i} let through {ends - a.answered:.3f} s before the block could end", answers)
            ends = a.sent + 1
        else:
            assert a.answer.startswith(TOO_MANY), answers
            ends = max(ends, a.sent + seconds_announced(a.answer) - 1)
    assert any(a.startswith(TOO_MANY) for a in answers[allowed:]), answers


def test_a_guesser_behind_a_shared_address_locks_nobody_else_out(endpoint, db):
    ids = add_accounts(db, ["ann", "ben", "cat", "dan", "eve"])
    nat = "127.0.10.1"
    for name in ["ann", "ben", "cat", "dan"]:
        expect_slowed([timed_login(endpoint, nat, name, "guess") for _ in range(8)], allowed=5)
    assert login(endpoint, nat, "eve", "pw-eve") == signed_in(ids["eve"], "eve")
    with AppClient(endpoint, source=nat) as c:
        r = c.register("fay", "pw-fay")
        assert r.body == signed_in(max(ids.values()) + 1, "fay"), r.body
        assert c.session_id
    assert login(endpoint, "127.0.10.2", "ann", "pw-ann") == signed_in(ids["ann"], "ann")


def test_thirty_honest_typos_do_not_add_up(endpoint, db):
    names = [f"typo{i}" for i in range(31)]
    ids = add_accounts(db, names)
    nat = "127.0.11.1"
    for name in names[:30]:
        assert login(endpoint, nat, name, "typo") == AUTH_FAILED
        assert login(endpoint, nat, name, f"pw-{name}") == signed_in(ids[name], name)
    assert login(endpoint, nat, "typo30", "pw-typo30") == signed_in(ids["typo30"], "typo30")


def test_credential_stuffing_across_50_accounts_is_slowed(endpoint, db):
    names = [f"stuffed{i}" for i in range(50)]
    ids = add_accounts(db, names)
    expect_slowed([timed_login(endpoint, "127.0.12.1", n, "leaked-elsewhere") for n in names], allowed=20)
    # Registering there is not a login: never throttled by the block.
    with AppClient(endpoint, source="127.0.12.1") as c:
        assert c.register("stuffing-witness", "pw").body.startswith(b'{"result":[{"IdUser":')
    assert login(endpoint, "127.0.12.2", "stuffed0", "pw-stuffed0") == signed_in(ids["stuffed0"], "stuffed0")


def test_a_guesser_spread_over_many_addresses_is_slowed_for_a_minute_at_most(endpoint, db):
    ids = add_accounts(db, ["target"])
    answers = [login(endpoint, f"127.0.13.{i}", "target", f"guess{i}") for i in range(1, 101)]
    assert all(a == AUTH_FAILED for a in answers), answers
    # The 100th failure's block (1 s) ends: the next failure blocks for 2 s.
    assert login_once_let_in(endpoint, "127.0.13.101", "target", "guess101", within=5) == AUTH_FAILED
    waits = seconds_announced(login(endpoint, "127.0.14.1", "target", "pw-target"))
    assert 1 <= waits <= 60, waits
    assert login_once_let_in(endpoint, "127.0.14.1", "target", "pw-target", within=waits + 5) \
        == signed_in(ids["target"], "target")


def test_every_spelling_of_a_name_counts_against_it(endpoint, db):
    ids = add_accounts(db, ["carol"])
    # c\xC3r\xD5l is not UTF-8; the latin1 column matches it with carol.
    assert login(endpoint, "127.0.15.1", b"c\xc3r\xd5l", "pw-carol") == signed_in(ids["carol"], "carol")
    spellings = [b"c\xc3r\xd5l", b"CAROL", b"carol ", b"c\xe3r\xf5l", b"\xc7\xc0R\xd3L"]
    assert [login(endpoint, "127.0.15.2", s, "guess") for s in spellings] == [AUTH_FAILED] * 5
    # The 5th failure's block (1 s) ends; the 6th blocks for 2 s.
    assert login_once_let_in(endpoint, "127.0.15.2", b"Carol", "guess", within=5) == AUTH_FAILED
    refused = login(endpoint, "127.0.15.2", "carol", "pw-carol")
    assert refused.startswith(TOO_MANY), refused


def registration_limit(env) -> int:
    """The stack's `registration_limit` (scripts/test.sh sets it), else its default."""
    assert env.run_dir, "IREPORTER_RUN_DIR: the stack's configuration"
    return int(servers.config_value((env.run_dir / "ireporter.conf").read_text(), "registration_limit") or 100)


def test_a_registration_flood_leaves_stream_fast(endpoint, db, env):
    """The issue's measurement, bounded: 128 concurrent registrations of a
    taken name from one address (the old server hashed each before looking
    at the name: stream's median went from 1 ms to 2.1 s), more than the
    address may make."""
    assert registration_limit(env) < 128 * 8, "the flood goes past the limit"
    add_accounts(db, ["taken"])

    def stream_times(n: int) -> list[float]:
        times = []
        with AppClient(endpoint) as c:
            for _ in range(n):
                t0 = time.monotonic()
                # The whole stream as the server answers it (the plain one may be nginx's: test_stream_answer.py).
                r = c.call({"command": "stream", "IdPhoto": "0"})
                times.append(time.monotonic() - t0)
                assert r.body.startswith(b'{"result":['), r.body
        return times

    baseline = statistics.median(stream_times(20))
    deadline = time.monotonic() + 20

    flooding = threading.Event()

    def flood(_):
        answers = []
        with AppClient(endpoint, source="127.0.16.1") as c:
            while len(answers) < 8 and time.monotonic() < deadline:
                answers.append(c.register("taken", "x").body)
                flooding.set()
        return answers

    with ThreadPoolExecutor(128) as ex:
        floods = [ex.submit(flood, i) for i in range(128)]
        assert flooding.wait(10), "the flood is answered"
        under_flood = stream_times(40)
        answers = [a for f in floods for a in f.result(timeout=30)]
    median = statistics.median(under_flood)
    # Timed beside 128 flooding threads (the GIL, a busy machine): relative to
    # the baseline and generous, capped well under the hashing server's 2.1 s.
    bound = max(0.5, min(20 * baseline, 1.0))
    assert median < bound, (f"stream median {median * 1000:.1f} ms under the flood (baseline "
                            f"{baseline * 1000:.1f} ms, bound {bound * 1000:.0f} ms)")
    assert answers and all(a == USER_EXISTS or a.startswith(TOO_MANY_REGISTRATIONS) for a in answers), set(answers)
    assert any(a.startswith(TOO_MANY_REGISTRATIONS) for a in answers), "registrations from one address are counted"


class ServerLog:
    """The lines the stack's server writes to its log from now on."""

    def __init__(self, env):
        assert env.run_dir, "IREPORTER_RUN_DIR: the stack's log"
        self.path = env.run_dir / "ireporter.log"
        self.start = self.path.stat().st_size

    def written(self, into: Path) -> Path:
        with open(self.path, "rb") as f:
            f.seek(self.start)
            into.write_bytes(f.read())
        return into


def banned_hosts(log: Path) -> list[str]:
    """The address of each line deploy/fail2ban's filter matches, as fail2ban
    reads it on a host east of UTC: each line's time must be read as now
    (within the jail's findtime), not hours ago."""
    tool = servers.need_tool("/usr/bin/fail2ban-regex", "fail2ban")
    filt = e2e.REPO_ROOT / "deploy/fail2ban/filter.d/ireporter.conf"
    out = subprocess.run([tool, "-o", "row", str(log), str(filt)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "TZ": "Asia/Tokyo"})
    assert out.returncode == 0, out.stderr
    rows = re.findall(r"^\['([^']+)',\s*([0-9.]+),", out.stdout, re.MULTILINE)
    assert all(abs(float(seconds) - time.time()) < 600 for _, seconds in rows), (time.time(), out.stdout)
    return [address for address, _ in rows]


def test_registrations_from_one_address_are_counted(endpoint, db, env, tmp_path):
    log = ServerLog(env)
    add_accounts(db, ["popular"])
    users = db.count("login")
    limit = registration_limit(env)
    # The count forgets `limit` registrations an hour, one every `leak` s
    # (CounterEntry.recordFailure: 9 s for 400): each that passes while the
    # registrations go on (45 ms each on a slow machine) lets one more in.
    leak = max(1000, 3_600_000 // limit) / 1000
    with AppClient(endpoint, source="127.0.17.1") as c:
        started = time.monotonic()
        answers = []

        def enough() -> bool:
            # 3 past the limit and one more per leak so far, to a refusal (bounded).
            past = 3 + min(int((time.monotonic() - started) / leak), 20)
            return (len(answers) >= limit + past and answers[-1].startswith(TOO_MANY_REGISTRATIONS)) \
                or len(answers) >= limit + 40
        while not enough():
            answers.append(c.register("popular", "x").body)
        leaked = int((time.monotonic() - started) / leak)
        assert all(a == USER_EXISTS for a in answers[:limit]), set(answers[:limit])
        assert all(a == USER_EXISTS or a.startswith(TOO_MANY_REGISTRATIONS) for a in answers), set(answers)
        # The limit, one per leak, and one if the first block (1 s) ended by chance before the next try.
        let_in = answers.count(USER_EXISTS)
        assert let_in <= limit + leaked + 1, (let_in, limit, leaked, answers[limit:])
        assert answers[-1].startswith(TOO_MANY_REGISTRATIONS), (leaked, answers[limit:])
        assert c.register("newcomer", "pw").body.startswith(TOO_MANY_REGISTRATIONS)
    assert db.count("login") == users
    with AppClient(endpoint, source="127.0.17.2") as c:
        assert c.register("newcomer", "pw").body.startswith(b'{"result":')
    refused = sum(a.startswith(TOO_MANY_REGISTRATIONS) for a in answers) + 1
    assert banned_hosts(log.written(tmp_path / "server.log")) == ["127.0.17.1"] * refused


def test_failed_logins_and_refusals_are_the_lines_fail2ban_reads(endpoint, db, env, tmp_path):
    ids = add_accounts(db, ["gail"])
    log = ServerLog(env)
    guesser = "127.0.18.1"
    attempts = [timed_login(endpoint, guesser, "gail", f"guess{i}") for i in range(7)]
    expect_slowed(attempts, allowed=5)
    answers = [a.answer for a in attempts]
    # A name made to look like the end of a line: the address stays the client's.
    forged = ['x" from 198.51.100.1', 'y\\" from 198.51.100.2',
              'z\n2026-01-01T00:00:00Z ireporter[1] warning: login failed for "a" from 198.51.100.3',
              # A long name is cut in the line (64 bytes shown, the count of the rest).
              "w" * 2000]
    assert [login(endpoint, "127.0.18.2", name, "guess") for name in forged] == [AUTH_FAILED] * 4
    # A successful login is no line (nor its address anywhere among the banned).
    assert login(endpoint, "127.0.19.1", "gail", "pw-gail") == signed_in(ids["gail"], "gail")
    server_log = log.written(tmp_path / "server.log")
    failed = answers.count(AUTH_FAILED)
    assert banned_hosts(server_log) == [guesser] * 7 + ["127.0.18.2"] * 4, server_log.read_text()
    text = server_log.read_text()
    assert text.count(f'login failed for "gail" from {guesser}\n') == failed, text
    assert text.count('login refused (throttled ') == 7 - failed, text
    assert 'for "x\\" from 198.51.100.1" from 127.0.18.2\n' in text, text
    assert f'for "{"w" * 64}\\+1936" from 127.0.18.2\n' in text, text


def test_the_shipped_jail_reads_the_server_log_with_the_filter(tmp_path):
    """deploy/fail2ban's jail beside Debian's fail2ban configuration, as
    DEPLOY.md installs it, parsed by fail2ban itself (`-d`: the commands it
    would give its server): the filter's lines, the web ports, the log."""
    tool = servers.need_tool("/usr/bin/fail2ban-client", "fail2ban")
    conf = tmp_path / "fail2ban"
    shutil.copytree("/etc/fail2ban", conf)
    for part in ("filter.d", "jail.d"):
        shutil.copy(e2e.REPO_ROOT / "deploy/fail2ban" / part / "ireporter.conf", conf / part / "ireporter.conf")
    log = tmp_path / "ireporter.log"
    log.write_text("")
    jail = conf / "jail.d/ireporter.conf"
    jail.write_text(jail.read_text().replace("/var/log/ireporter/ireporter.log", str(log)))
    out = subprocess.run([tool, "-c", str(conf), "-d"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    said = [line for line in out.stdout.splitlines() if "'ireporter'" in line]
    assert "['start', 'ireporter']" in said, out.stdout
    assert any("addfailregex" in line and "login failed for" in line and "registration refused" in line for line in said), said
    assert f"['set', 'ireporter', 'addlogpath', '{log}', 'head']" in said, said
    assert any("['port', 'http,https']" in line for line in said), said
    assert any("'addaction', 'nftables-multiport'" in line for line in said), said
