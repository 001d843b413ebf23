"""`make cluster-up` again after a fault (issue 24): the real
scripts/cluster.sh, once for the module on ports of its own, with the
photos in one shared folder (PHOTO_STORE=files: the S3 server keeps its
objects in memory, and a `down` would lose them).

Under a bounded load of uploads, logins and streams through the front,
Galera node 1 is killed (kill -9); then `cluster.sh down` and
`cluster.sh up`. Node 1 is not the one to bootstrap (node 2 stopped last,
cleanly: its grastate.dat says safe_to_bootstrap), and every later step
(the schema, the user) talks to that node. After it: every acknowledged
photo on all three nodes with its photo and thumbnail, and the cluster
serves through the front.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_cluster_restart.py
"""
from __future__ import annotations

import subprocess
import time

import pytest

import servers
from appclient import AppClient, Endpoint
from phone_load import PhoneLoad
from test_cluster import SCRIPT, UNAVAILABLE, Cluster

FRONT_PORT = 8130
APP_PORTS = (8131, 8132)
GALERA_PORT = 3520  # nodes 3520-3522; Galera's own ports 3530-3552
REDIS_PORT = 6397
S3_PORT = 9415  # not started: the photos are files
FRONT_URL = f"http://127.0.0.1:{FRONT_PORT}/iReporter/"


@pytest.fixture(scope="module")
def cluster():
    servers.need_root()
    for port in (FRONT_PORT, *APP_PORTS, GALERA_PORT, REDIS_PORT):
        servers.port_free(port)
    base = servers.make_workdir("cluster-restart")
    cluster = Cluster(base / "cluster", FRONT_PORT, APP_PORTS, GALERA_PORT, REDIS_PORT, S3_PORT, PHOTO_STORE="files",
                      CLUSTER_EXTRA_CONFIG="registration_limit = 1000000\nredis_timeout_ms = 4000")  # as test_cluster.py's
    try:
        assert cluster.script("up").strip().splitlines()[-1] == FRONT_URL
        yield cluster
    finally:
        subprocess.run([str(SCRIPT), "down"], capture_output=True, timeout=300, env=cluster.env)
        servers.remove_workdir(base)


def test_cluster_up_after_node_1_was_killed_under_load_keeps_every_photo(cluster):
    load = PhoneLoad([FRONT_URL], "restart")

    def fault():
        cluster.kill_node(1)
        return {}

    figures = load.run(fault)
    assert figures["not clear JSON"] == [], figures
    errors = {key.split(": ", 1)[1] for key in figures["answers"]} - {"ok"}
    assert errors <= {f"error: {UNAVAILABLE['error']}"}, figures
    assert figures["acknowledged uploads"] >= 5, figures

    started = time.monotonic()
    cluster.script("down")
    down = time.monotonic() - started
    started = time.monotonic()
    printed = cluster.script("up")
    up = time.monotonic() - started
    print(f"cluster.sh down {down:.1f} s, up {up:.1f} s")
    # Node 2 stopped last and cleanly: it holds the latest state, not node 1.
    assert f"node 2: starting on 127.0.0.1:{GALERA_PORT + 1} (bootstrapping a new cluster)" in printed, printed
    status = cluster.script("status")
    assert status.count("Synced, Primary, cluster size 3") == 3, status

    upload = cluster.directory / "upload"
    for node in (1, 2, 3):
        titles = set(cluster.galera_nodes.sql(node, "SELECT title FROM photos").splitlines())
        assert [t for t in load.acknowledged if t not in titles] == [], f"node {node} lost acknowledged photos"
    ids = cluster.galera_nodes.sql(1, "SELECT IdPhoto FROM photos").split()
    assert [i for i in ids if not (upload / f"{i}.jpg").is_file() or not (upload / f"{i}-thumb.jpg").is_file()] == []

    # The cluster serves: a photo uploaded before the fault, and a new one.
    user, password = load.users[0], servers.app_password("pw")
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        assert phone.login(user, password).json()["result"][0]["username"] == user
        first = load.acknowledged[0]
        before = cluster.galera_nodes.sql(2, f"SELECT IdPhoto FROM photos WHERE title = '{first}'").strip()
        assert phone.get(f"upload/{before}.jpg").body == (upload / f"{before}.jpg").read_bytes()
        assert phone.upload(servers.small_photo(), f"after the restart {user}").json() == {"successful": 1}
        assert f"after the restart {user}" in [row["title"] for row in phone.stream().json()["result"]]
