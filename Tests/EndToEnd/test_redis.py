"""Sessions and counters in Redis, end to end (issue 18): two app hosts
(each nginx + our server, `session_store = redis`, one `redis_url`) on one
database and one private redis-server on loopback, all started here.

  - the app's flow (register, upload, stream, photos, logout) through a host;
  - a phone logged in through one host is logged in on the other, its
    session kept as phpredis keeps it (`PHPREDIS_SESSION:<id>`);
  - failed logins through one host block the account on the other;
  - a front nginx (deploy/nginx/ireporter-front.conf) spreads a phone's
    requests over both hosts, and skips a host that is down;
  - the live stream across hosts (Nchan's channel in the same Redis,
    deploy/nginx/ireporter-live.conf's two lines): a subscriber on one host
    gets the photo posted through the other;
  - Redis stopped: clear JSON answers, no worker lost; started again:
    service is back without restarting anything;
  - each host's nginx answers the plain stream from its server's file
    (`stream_answer_file`): a change through one host removes the other's
    before it is answered; a host whose listener is stopped delays a change
    by a bounded wait, not forever; with Redis down no host keeps one.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_redis.py
"""
from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint
from subscriber import photo_reaches_every_host

PORTS = (servers.http_port(2), servers.http_port(3))
FRONT_PORT = servers.http_port(1)
FRONT_URL = f"http://127.0.0.1:{FRONT_PORT}/iReporter/"
REDIS_PORT = 6391
UNAVAILABLE = {"error": "The service is temporarily unavailable, please try again"}


class RedisServer:
    """A private redis-server on 127.0.0.1:REDIS_PORT, nothing kept on disk."""

    def __init__(self, directory: Path):
        servers.need_tool("redis-server", "redis-server")
        self.directory = directory
        self.proc = None

    def start(self):
        servers.port_free(REDIS_PORT)
        self.proc = subprocess.Popen(["redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1",
                                      "--dir", str(self.directory), "--save", "", "--appendonly", "no",
                                      "--logfile", str(self.directory / "redis.log")],
                                     stdin=subprocess.DEVNULL, env=servers.clean_env(), start_new_session=True)
        servers.wait_for(lambda: self.cli("PING") == "PONG", 10, what="redis-server")
        return self

    def cli(self, *args: str) -> str:
        p = subprocess.run(["redis-cli", "-p", str(REDIS_PORT), *args], capture_output=True, text=True, timeout=10)
        return p.stdout.strip()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


@pytest.fixture(scope="module")
def hosts():
    with servers.workspace("redis") as space:
        redis = space.start(RedisServer(space.base))
        apps, nginxes = [], []
        # Nchan keeps the live channel in the same Redis, as the snippet's comment says.
        live_in_redis = {"#nchan_redis_url redis://127.0.0.1:6379;": f"nchan_redis_url redis://127.0.0.1:{REDIS_PORT};",
                         "#nchan_use_redis on;": "nchan_use_redis on;"}
        for n, port in enumerate(PORTS):
            # Where the host's nginx (stack.sh render-nginx) looks for the stream's answer.
            answers = space.base / f"host{n}" / "ireporter"
            answers.mkdir(parents=True, exist_ok=True)
            servers.chown_www(answers)
            server = space.start(servers.OurServer(space.base / f"host{n}", servers.binary(), space.db.url, workers=2,
                                                   session_store="redis", stream_answer_file=answers / "stream-answer",
                                                   redis_url=f"redis://127.0.0.1:{REDIS_PORT}/0",
                                                   # A change waits up to half of it for each host's confirmation:
                                                   # a listener descheduled longer on a loaded machine is no failure here.
                                                   redis_timeout_ms=4000,
                                                   live_publish_url=f"http://127.0.0.1:{port}/ireporter-publish",
                                                   live_publish_key=servers.PUBLISH_KEY))
            nginxes.append(space.start(servers.Nginx(space.base / f"host{n}", port, server.socket_path,
                                                     server.upload_dir, live_edits=live_in_redis)))
            apps.append((server, f"http://127.0.0.1:{port}/iReporter/"))
        space.start(servers.FrontNginx(space.base, FRONT_PORT, list(PORTS)))
        yield redis, apps, nginxes


def test_the_apps_flow_with_sessions_in_redis(hosts):
    redis, apps, _ = hosts
    server, url = apps[0]
    servers.app_flow(url, server.upload_dir, tag="redis", logs=lambda: servers.tail(server.log_path))
    assert list(server.session_dir.glob("sess_*")) == [], "no session file: the sessions are in Redis"


def test_a_phone_logged_in_on_one_host_is_logged_in_on_the_other(hosts):
    redis, apps, _ = hosts
    user, password = servers.unique_name("redis2"), servers.app_password("secret")
    with AppClient(Endpoint(apps[0][1]), timeout=30) as phone, AppClient(Endpoint(apps[1][1]), timeout=30) as same:
        assert phone.register(user, password).json()["result"][0]["username"] == user
        sid = phone.session_id
        stored = redis.cli("GET", f"PHPREDIS_SESSION:{sid}")
        assert stored.startswith('IdUser|s:') and "ireporter_created|i:" in stored, stored
        assert 0 < int(redis.cli("TTL", f"PHPREDIS_SESSION:{sid}")) <= 7 * 86400
        same.jar.update([f"PHPSESSID={sid}; path=/"])
        r = same.upload(servers.photo(), f"via the other host {user}")
        assert r.json() == {"successful": 1}, r.body
        assert same.logout().status == 200
        assert redis.cli("EXISTS", f"PHPREDIS_SESSION:{sid}") == "0"
        assert phone.upload(servers.photo(), "after logout").json() == {"error": "Authorization required"}

        # The throttle's counters are in Redis too: five failures on one host
        # block the other. (For 1 s: on a stalled machine the right password
        # may come after that, so three tries; the hosts not sharing the
        # counters fail all three.)
        for _ in range(3):
            for _ in range(5):
                phone.login(user, servers.app_password("wrong"))
            r = same.login(user, password).json()
            if "error" in r:
                break
        assert r["error"].startswith("Too many failed logins"), r


def answered_by(response) -> str:
    """The app host that answered through the front (its last upstream, after a retry)."""
    return response.header("X-Upstream").split(",")[-1].strip()


def test_the_front_spreads_a_phones_requests_over_both_hosts(hosts):
    user, password = servers.unique_name("front"), servers.app_password("front")
    seen = set()
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        registered = phone.register(user, password)
        assert registered.json()["result"][0]["username"] == user
        uploaded = phone.upload(servers.photo(), f"through the front {user}")
        assert uploaded.json() == {"successful": 1}, uploaded.body
        seen |= {answered_by(registered), answered_by(uploaded)}
        for _ in range(10):
            stream = phone.stream()
            assert stream.json()["result"][0]["title"] == f"through the front {user}", "read-your-writes on every host"
            seen.add(answered_by(stream))
    assert seen == {f"127.0.0.1:{port}" for port in PORTS}, seen


def test_a_host_that_is_down_is_skipped_and_used_again_once_back(hosts):
    user, password = servers.unique_name("frontdown"), servers.app_password("front")
    _, _, (down, _) = hosts  # the first app host's nginx
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        assert phone.register(user, password).json()["result"][0]["username"] == user
        down.stop()
        try:
            answers = [phone.upload(servers.photo(), f"while a host is down {user}"), phone.login(user, password),
                       *(phone.stream() for _ in range(6))]
            assert [r.status for r in answers] == [200] * len(answers), [r.body[:200] for r in answers]
            assert answers[0].json() == {"successful": 1}
            assert {answered_by(r) for r in answers} == {f"127.0.0.1:{PORTS[1]}"}
        finally:
            down.start()
        # Left out for fail_timeout (5 s), then tried again.
        servers.wait_for(lambda: answered_by(phone.stream()) == f"127.0.0.1:{PORTS[0]}", 15,
                         what="the front using the host again")


def test_a_subscriber_on_one_host_sees_a_photo_posted_through_the_other(hosts):
    _, apps, _ = hosts
    photo_reaches_every_host(apps[0][1], [url for _, url in apps], servers.PUBLISH_KEY, "redislive")


def answer_file(server) -> Path:
    return server.base / "ireporter" / "stream-answer"


def kept_stream(client: AppClient, server) -> bytes:
    """The host's plain stream once its server keeps it in the file its nginx
    answers from (the first stream after a change is the server's)."""
    path = answer_file(server)

    def kept():
        body = client.stream().body
        return body if path.exists() and path.read_bytes().split(b"\n", 1)[1] == body else None
    return servers.wait_for(kept, 10, interval=0.1, what=str(path))


def refresher_of(server) -> int:
    """The host's answer refresher, which listens for the other hosts' changes."""
    return next(pid for pid in servers.children_all(server.pid) if servers.proc_name(pid) == "answer-refresh")


@contextlib.contextmanager
def writer_and_viewer(hosts, source: str):
    """A phone registered through the first host (from `source`: the
    registration throttle counts by address) and a viewer of the second;
    with the two hosts' servers."""
    _, ((writer, writer_url), (reader, reader_url)), _ = hosts
    user = servers.unique_name("answer")
    with AppClient(Endpoint(writer_url), timeout=30, source=source) as phone, \
            AppClient(Endpoint(reader_url), timeout=30) as viewer:
        assert phone.register(user, servers.app_password("answer")).json()["result"][0]["username"] == user
        yield writer, reader, phone, viewer


def test_a_change_through_one_host_removes_the_other_hosts_stream_answer_before_it_is_answered(hosts):
    title = f"in the other host's next stream {servers.unique_name('answer')}"
    with writer_and_viewer(hosts, "127.0.30.1") as (writer, reader, phone, viewer):
        kept_stream(phone, writer)
        before = kept_stream(viewer, reader)
        # The reader host's server stopped but for its listener: its nginx answers from the file.
        with servers.stopped([reader.pid, *servers.children(reader.pid)]):
            assert viewer.stream().body == before
        assert phone.upload(servers.photo(), title).json() == {"successful": 1}
        assert not answer_file(writer).exists() and not answer_file(reader).exists(), \
            "the upload was answered once no host's nginx could answer the stream from before it"
        assert viewer.stream().json()["result"][0]["title"] == title
        # What an operator sees of it.
        check = subprocess.run([str(writer.binary), "check", "--config", str(writer.config_path)],
                               env=servers.clean_env(), capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "\nok   stream answer listeners: 2 host(s) listen on ireporter:stream-changed:0;" in check.stdout, check.stdout
        assert "\nok   stream_answer_file: " in check.stdout, check.stdout


def test_a_host_whose_listener_is_stopped_delays_a_change_a_bounded_time(hosts):
    title = f"while a host's listener is stopped {servers.unique_name('deaf')}"
    with writer_and_viewer(hosts, "127.0.30.2") as (writer, reader, phone, viewer):
        kept_stream(viewer, reader)
        logged = writer.log_path.read_text(errors="replace").count("did not confirm a change")
        with servers.stopped([refresher_of(reader)]):
            started = time.monotonic()
            assert phone.upload(servers.photo(), title).json() == {"successful": 1}
            # Half of redis_timeout_ms (2 s), and the upload's own time on a loaded machine.
            assert time.monotonic() - started < 10, "waited for the stopped host at most half of redis_timeout_ms"
        servers.wait_for(lambda: writer.log_path.read_text(errors="replace").count("did not confirm a change") > logged, 5,
                         what="the writer's warning")
        # Resumed, the listener hears the change it missed.
        servers.wait_for(lambda: viewer.stream().json()["result"][0]["title"] == title, 5,
                         what="the photo in the other host's stream")


def text_if_there(path) -> str | None:
    """The file's text; None while it is not there (the old refresher
    removes its mark as it leaves, maybe between a check and a read)."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def test_after_a_reload_the_new_refresher_listens_and_changes_still_reach_the_host(hosts):
    title = f"after the other host's reload {servers.unique_name('reload')}"
    with writer_and_viewer(hosts, "127.0.30.3") as (writer, reader, phone, viewer):
        old = refresher_of(reader)
        mark = answer_file(reader).with_name("stream-answer.listening")
        assert mark.read_text() == str(old)
        reader.signal(signal.SIGUSR2)
        servers.wait_for(lambda: text_if_there(mark) not in (None, "", str(old))
                         and not servers.proc_alive(old), 15, what="the new refresher listening, the old one gone")
        assert mark.read_text() == str(refresher_of(reader))
        kept_stream(viewer, reader)
        assert phone.upload(servers.photo(), title).json() == {"successful": 1}
        assert not answer_file(reader).exists()
        assert viewer.stream().json()["result"][0]["title"] == title


def test_redis_down_answers_clearly_and_service_comes_back(hosts):
    redis, apps, _ = hosts
    (server, url), (_, other) = apps
    user, password = servers.unique_name("redis3"), servers.app_password("secret")
    workers = sorted(server.workers())
    with AppClient(Endpoint(url), timeout=30) as phone:
        assert phone.register(user, password).json()["result"][0]["username"] == user
        redis.stop()
        try:
            # No host hears the others' changes: none keeps a stream answer.
            for host, _ in apps:
                servers.wait_for(lambda: not answer_file(host).exists()
                                 and not answer_file(host).with_name("stream-answer.listening").exists(),
                                 5, what=f"{answer_file(host)} removed")
            assert phone.upload(servers.photo(), "while down").json() == UNAVAILABLE
            assert phone.login(user, password).json() == UNAVAILABLE
            assert isinstance(phone.stream().json()["result"], list), "the stream is still served"
            # Alive, not ready: a balancer's check leaves the host out (issue 27).
            status, body = servers.http_get(f"http://127.0.0.1:{PORTS[0]}/ireporter-ready")
            assert status == 503 and "\nredis: " in body and "database" not in body, (status, body)
            assert servers.http_get(f"http://127.0.0.1:{PORTS[0]}/ireporter-ping") == (200, "pong\n")
            check = subprocess.run([str(server.binary), "check", "--config", str(server.config_path)],
                                   env=servers.clean_env(), capture_output=True, text=True, timeout=60)
            assert check.returncode == 1 and "\nFAIL redis: " in check.stdout, check.stdout + check.stderr
        finally:
            redis.start()
        servers.wait_for(lambda: servers.http_get(f"http://127.0.0.1:{PORTS[0]}/ireporter-ready") == (200, "ready\n"), 10, what="ready once Redis answers")
        for host, _ in apps:
            servers.wait_for(lambda: answer_file(host).with_name("stream-answer.listening").exists(), 10,
                             what="the host's listener subscribed again")
        assert sorted(server.workers()) == workers, "no worker crashed"
        # A Redis that keeps nothing on disk forgot the session: log in again.
        assert phone.upload(servers.photo(), "after").json() == {"error": "Authorization required"}
        assert phone.login(user, password).json()["result"][0]["username"] == user
        assert phone.upload(servers.photo(), "after").json() == {"successful": 1}
