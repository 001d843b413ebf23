"""Kept FastCGI connections (issue 30): nginx with deploy/nginx/ireporter.conf
as shipped (the `ireporter_fcgi` upstream from its header, `fastcgi_keep_conn
on`), our server behind it.

  - the connections stay open between requests (ss sees them), and a
    worker serves them and new ones side by side: 16 clients on 1 worker,
    many more connections than workers, no request waits behind a kept
    connection (it would wait for nginx to close one: seconds);
  - SIGUSR2 under load: no request lost, every old worker gone within the
    upstream's keepalive_time;
  - max_requests recycling under load: no request lost, every first worker
    replaced;
  - SIGTERM with idle kept connections: the server leaves at once;
  - a stream right after an upload shows it, whichever worker answers;
  - the Mastodon-compatible API (deploy/nginx/ireporter-mastodon.conf) over
    the same kept connections, none of its requests lost to a reload.

Load: 8 clients x 2 s of stream/login requests, bounded in count and time,
loopback only.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_keep_conn.py
"""
from __future__ import annotations

import signal
import subprocess
import threading
import time

import pytest

import servers
from appclient import AppClient, Endpoint
from servers import Load, prepare_load_user

PORT = servers.http_port(0)
BASE = f"http://127.0.0.1:{PORT}/"
API = BASE + "iReporter/"
# deploy/nginx/ireporter.conf's upstream: keepalive_time 5s, keepalive_timeout 2s.
KEEPALIVE_TIME = 5


@pytest.fixture(scope="module")
def module_env():
    binary = servers.binary()
    with servers.workspace("keepconn") as space:
        server_dir = space.base / "server"
        # The socket and upload paths stay the same for every server a test starts.
        probe = servers.OurServer(server_dir, binary, space.db.url)
        nginx = space.start(servers.Nginx(space.base / "web", PORT, probe.socket_path, probe.upload_dir))
        assert "fastcgi_keep_conn on;" in (nginx.dir / "ireporter.conf").read_text()
        assert "fastcgi_keep_conn on;" in (nginx.dir / "ireporter-mastodon.conf").read_text()
        yield {"binary": binary, "db": space.db, "dir": server_dir, "nginx": nginx}


@pytest.fixture
def start_server(module_env):
    started = []

    def start(**keys) -> servers.OurServer:
        s = servers.OurServer(module_env["dir"], module_env["binary"], module_env["db"].url, **keys)
        started.append(s)
        s.start()
        servers.wait_for(lambda: len(s.workers()) == keys.get("workers", 3), 10, what="the workers")
        return s

    yield start
    for s in started:
        s.stop()
        assert not getattr(s, "leftover_workers", []), f"workers outlived the supervisor: {s.leftover_workers}"


def connections(server: servers.OurServer) -> int:
    """Connections to the server's socket that a worker has accepted, as ss sees them."""
    lines = subprocess.run(["ss", "-xanH"], capture_output=True, text=True, check=True, timeout=10).stdout
    return sum(1 for line in lines.splitlines()
               if len(line.split()) >= 5 and line.split()[1] == "ESTAB" and line.split()[4] == str(server.socket_path))


def report(server: servers.OurServer, module_env, outcomes) -> str:
    return Load.describe(outcomes) + "\n" + servers.tail(server.log_path) + "\n" + module_env["nginx"].log_tail()


def streams(clients: int, rounds: int = 1) -> list[tuple[float, dict]]:
    """`clients` phones at once, each `rounds` streams: (seconds, answer) of each."""
    results, lock = [], threading.Lock()

    def phone():
        with AppClient(Endpoint(API), timeout=30) as p:
            for _ in range(rounds):
                t0 = time.monotonic()
                answer = p.stream().json()
                with lock:
                    results.append((time.monotonic() - t0, answer))

    threads = [threading.Thread(target=phone, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a phone hung"
    assert len(results) == clients * rounds
    return results


def test_connections_are_kept_and_none_waits_behind_them(start_server):
    server = start_server(workers=1)
    for _ in range(5):
        with AppClient(Endpoint(API)) as phone:
            assert "result" in phone.stream().json()
    # Idle now: nginx keeps the connection, the worker holds it.
    assert connections(server) >= 1, "no FastCGI connection kept between requests"
    # 16 phones at once on 1 worker: nginx opens more connections than it
    # keeps; the worker holding kept ones must take the new ones as well,
    # or a request waits for nginx to close a kept connection (seconds).
    results = streams(16, rounds=20)
    slowest = max(seconds for seconds, _ in results)
    assert all("result" in answer for _, answer in results)
    # Behind kept connections the phones would wait in turn, 2 s each (nginx's
    # keepalive_timeout): the last far past 5 s, which leaves a busy machine room.
    assert slowest < 5, f"a stream took {slowest:.2f} s"


def test_sigusr2_under_load_with_kept_connections(start_server, module_env):
    server = start_server(workers=3)
    user, password, expected = prepare_load_user(API, "keepreload")
    before = set(server.workers())
    server.write_config(workers=4)
    outcomes = Load(API, user, password, expected, clients=8, seconds=2.0).run(
        during=lambda: server.signal(signal.SIGUSR2), at=0.7)
    assert all(o.ok for o in outcomes) and len(outcomes) >= 40, report(server, module_env, outcomes)
    # The old workers serve their kept connections until nginx closes them.
    servers.wait_for(lambda: not any(servers.proc_alive(w) for w in before), KEEPALIVE_TIME + 5,
                     what="the old workers to leave")
    now = set(server.workers())
    assert len(now) == 4 and not now & before, (before, now)


def test_max_requests_recycling_under_load_with_kept_connections(start_server, module_env):
    server = start_server(workers=3, max_requests=20)
    user, password, expected = prepare_load_user(API, "keeprecycle")
    first = set(server.workers())
    # A worker leaves once it has served 20 requests; which worker nginx's
    # kept connections reach is nginx's choice, so a first worker may still
    # be short of 20 after a round: another round, at most 4.
    for round_ in range(4):
        outcomes = Load(API, user, password, expected, clients=8, seconds=2.0).run()
        assert all(o.ok for o in outcomes) and len(outcomes) >= 40, report(server, module_env, outcomes)
        try:
            servers.wait_for(lambda: not any(servers.proc_alive(w) for w in first), KEEPALIVE_TIME + 5,
                             what="the first workers to leave")
            break
        except AssertionError:
            if round_ == 3:
                raise
    servers.wait_for(lambda: len(server.workers()) == 3, 10, what="3 workers")
    assert "crashed" not in server.log_path.read_text(errors="replace")


def test_sigterm_with_idle_kept_connections_leaves_at_once(start_server):
    server = start_server(workers=2)
    streams(4, rounds=3)
    assert connections(server) >= 1
    took = server.stop()
    # Not held until the kept connections' idle timeout (a loaded machine's seconds aside).
    assert took is not None and took < KEEPALIVE_TIME - 1, f"stopping took {took} s"


def test_a_stream_after_an_upload_shows_it_on_every_worker(start_server):
    start_server(workers=3)
    user = servers.unique_name("keeprw")
    # Every worker's cached stream warm, on kept connections.
    streams(6, rounds=5)
    with AppClient(Endpoint(API), timeout=30) as phone:
        assert phone.register(user, servers.app_password("secret")).json()["result"][0]["username"] == user
        for n in range(3):
            title = f"kept {n} {user}"
            assert phone.upload(servers.photo(), title).json() == {"successful": 1}
            assert phone.stream().json()["result"][0]["title"] == title
            # Many phones at once, over the kept connections of all workers.
            for _, answer in streams(6, rounds=3):
                assert answer["result"][0]["title"] == title



def test_the_mastodon_api_over_kept_connections_through_a_reload(start_server, module_env):
    # The API's rate limit (per address) off: every app here is 127.0.0.1.
    server = start_server(workers=1, mastodon_rate_limit=0)
    with AppClient(Endpoint(API)) as app:
        instance = app.get(path="/api/v1/instance")
    assert instance.status == 200 and "uri" in instance.json(), instance
    assert connections(server) >= 1, "no FastCGI connection kept after the API's requests"
    before = set(server.workers())
    server.write_config(workers=2, mastodon_rate_limit=0)
    outcomes = Load(API, "", "", {"get": instance.body}, clients=6, seconds=2.0, get_path="/api/v1/instance").run(
        during=lambda: server.signal(signal.SIGUSR2), at=0.7)
    assert all(o.ok for o in outcomes) and len(outcomes) >= 30, report(server, module_env, outcomes)
    servers.wait_for(lambda: not any(servers.proc_alive(w) for w in before), KEEPALIVE_TIME + 5,
                     what="the old worker to leave")
