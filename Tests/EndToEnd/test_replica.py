"""The server on a primary with a GTID read replica, end to end (issue 18):
scripts/replica.sh's pair on loopback (started once for the module), our
server behind nginx with `db_replicas`, so that streams are read from the
replica.

  - with replication delayed (MASTER_DELAY), a phone's very next stream
    after its upload shows its photo (its read waited for the replica:
    MASTER_GTID_WAIT), while an anonymous stream at that moment, read from
    the replica without waiting, does not show it yet (so without the wait
    this test fails);
  - with the replica stopped, uploads and streams go on through the
    primary: no error, nothing missing.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_replica.py
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint

HTTP_PORT = servers.http_port(0)
PRIMARY_PORT = 3376  # the replica on 3377
SCRIPT = servers.REPO / "scripts" / "replica.sh"
DELAY_SECONDS = 2


class ReplicaPair:
    """scripts/replica.sh's primary and replica in `directory`."""

    def __init__(self, directory: Path):
        servers.need_tool("/usr/sbin/mariadbd", "mariadb-server")
        self.directory = directory

    def script(self, *args: str, timeout: float = 120) -> str:
        p = subprocess.run([str(SCRIPT), args[0], str(self.directory), str(PRIMARY_PORT), *args[1:]],
                           capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, f"replica.sh {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def start(self):
        self.script("start")
        return self

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", str(self.directory)], capture_output=True, timeout=120)

    def stop_replica(self):
        subprocess.run([str(servers.REPO / "scripts" / "mariadb.sh"), "stop", str(self.directory / "replica")],
                       capture_output=True, timeout=120, check=True)

    def replica_sql(self, text: str) -> str:
        return self.script("sql", "replica", "-N", "-B", "-e", text, timeout=60)


@pytest.fixture(scope="module")
def replicated():
    servers.need_root()
    for port in (PRIMARY_PORT, PRIMARY_PORT + 1, HTTP_PORT):
        servers.port_free(port)
    base = servers.make_workdir("replica")
    pair = ReplicaPair(base / "db").start()
    started = []
    try:
        server = servers.OurServer(base / "host", servers.binary(), pair.script("url").strip(), workers=2,
                                   db_replicas=pair.script("replicas").strip(), db_replica_wait_ms=8000)
        server.start()
        started.append(server)
        started.append(servers.Nginx(base / "host", HTTP_PORT, server.socket_path, server.upload_dir).start())
        yield pair, server, f"http://127.0.0.1:{HTTP_PORT}/iReporter/"
    finally:
        for thing in reversed(started):
            thing.stop()
        pair.stop()
        servers.remove_workdir(base)


def titles(client: AppClient) -> list[str]:
    answer = client.stream().json()
    assert "result" in answer, answer
    return [row["title"] for row in answer["result"]]


def test_a_phones_next_stream_shows_its_upload_while_the_replica_lags(replicated):
    pair, server, url = replicated
    pair.replica_sql(f"STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = {DELAY_SECONDS}; START SLAVE")
    try:
        user = servers.unique_name("replica")
        with AppClient(Endpoint(url), timeout=30) as phone, AppClient(Endpoint(url), timeout=30) as anonymous:
            assert phone.register(user, servers.app_password("secret")).json()["result"][0]["username"] == user
            for n in range(2):
                title = f"lagging {n} {user}"
                assert phone.upload(servers.photo(), title).json() == {"successful": 1}, servers.tail(server.log_path)
                # The replica is DELAY_SECONDS behind: read without waiting, the photo is not there yet.
                assert title not in titles(anonymous), "the anonymous stream is read from the (delayed) replica"
                started = time.monotonic()
                assert titles(phone)[0] == title, "the phone's very next stream shows its upload"
                waited = time.monotonic() - started
                assert waited >= 0.5, f"the phone's stream waited for the replica ({waited:.2f} s)"
                assert title in titles(anonymous), "once applied, the replica shows it to everyone"
    finally:
        pair.replica_sql("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = 0; START SLAVE")


def test_with_the_replica_stopped_streams_come_from_the_primary(replicated):
    pair, server, url = replicated
    pair.stop_replica()
    try:
        user = servers.unique_name("replica")
        with AppClient(Endpoint(url), timeout=30) as phone, AppClient(Endpoint(url), timeout=30) as anonymous:
            assert phone.register(user, servers.app_password("secret")).json()["result"][0]["username"] == user
            title = f"replica down {user}"
            assert phone.upload(servers.photo(), title).json() == {"successful": 1}
            assert titles(phone)[0] == title
            for _ in range(4):
                assert titles(anonymous)[0] == title, "read from the primary, no error"
        assert "database replica failed, reads go to the primary" in server.log_path.read_text(errors="replace")
    finally:
        pair.start()
