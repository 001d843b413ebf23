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

import time
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint

HTTP_PORT = servers.http_port(0)
PRIMARY_PORT = 3376  # the replica on 3377
# Counted from the write's whole second: 3 s is 2 at least, well past the
# anonymous stream right after the upload (2 could be 1).
DELAY_SECONDS = 3


class ReplicaPair(servers.DatabaseScript):
    """scripts/replica.sh's primary and replica in `directory`."""

    def __init__(self, directory: Path):
        super().__init__("replica.sh", directory, PRIMARY_PORT)

    def start(self):
        self.script("start")

    def stop_replica(self):
        servers.run_script("mariadb.sh", "stop", str(self.directory / "replica"), timeout=120)

    def replica_sql(self, text: str) -> str:
        return self.script("sql", "replica", "-N", "-B", "-e", text, timeout=60)


@pytest.fixture(scope="module")
def replicated():
    for port in (PRIMARY_PORT, PRIMARY_PORT + 1, HTTP_PORT):
        servers.port_free(port)
    with servers.workspace("replica", database=False) as space:
        pair = space.start(ReplicaPair(space.base / "db"))
        server = space.start(servers.OurServer(space.base / "host", servers.binary(), pair.script("url").strip(),
                                               workers=2, db_replicas=pair.script("replicas").strip(),
                                               db_replica_wait_ms=8000))
        space.start(servers.Nginx(space.base / "host", HTTP_PORT, server.socket_path, server.upload_dir))
        yield pair, server, f"http://127.0.0.1:{HTTP_PORT}/iReporter/"


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
                # The replica applies it 2 s at least after the write; read from
                # the primary without waiting, the stream takes milliseconds.
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
