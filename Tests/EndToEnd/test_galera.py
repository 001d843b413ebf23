"""The server on a MariaDB Galera cluster, end to end (issue 18): three
nodes on loopback (scripts/galera.sh, started once for the module), two of
our servers (each behind its own nginx, one upload folder and one session
folder, as two servers of one host) whose workers connect to different
nodes (`db_nodes`, worker N starting at node N).

  - the app's flows with each request landing on another server and node:
    a write through one is read at once through the other;
  - one name registered through both at once: one account, the other answer
    "username exists" (the unique index of migration 007);
  - kill -9 of a node during a bounded load of uploads, logins and streams:
    clear JSON answers only, no acknowledged photo lost, no orphan, the node
    rejoins by incremental state transfer. The figures go to the file named
    by IREPORTER_GALERA_FIGURES, when set (docs/SCALING.md quotes them).

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_galera.py
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint

PORTS = (servers.http_port(0), servers.http_port(1))
GALERA_PORT = 3340  # nodes 3340-3342, their replication, IST and SST ports 3350-3372
SCRIPT = servers.REPO / "scripts" / "galera.sh"
UNAVAILABLE = {"error": "The service is temporarily unavailable, please try again"}


class Galera:
    """scripts/galera.sh's three nodes in `directory`."""

    def __init__(self, directory: Path):
        servers.need_tool("/usr/sbin/mariadbd", "mariadb-server")
        if not Path("/usr/lib/galera/libgalera_smm.so").exists():
            pytest.fail("galera-4 is not installed: scripts/deps.sh installs it", pytrace=False)
        self.directory = directory

    def script(self, *args: str, timeout: float = 200) -> str:
        p = subprocess.run([str(SCRIPT), args[0], str(self.directory), str(GALERA_PORT), *args[1:]],
                           capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, f"galera.sh {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def start(self):
        for n in range(3):
            servers.port_free(GALERA_PORT + n)
        self.script("start")
        return self

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", str(self.directory), str(GALERA_PORT)], capture_output=True, timeout=200)

    def sql(self, node: int, text: str) -> str:
        return self.script("sql", str(node), "-N", "-B", "-e", text, timeout=60)

    def status(self, node: int, name: str) -> str:
        return self.sql(node, f"SHOW GLOBAL STATUS LIKE '{name}'").split("\t")[-1].strip()

    def node_address(self, node: int) -> str:
        return f"127.0.0.1:{GALERA_PORT + node - 1}"

    def kill(self, node: int):
        pid = int((self.directory / f"node{node}" / "mariadbd.pid").read_text())
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster():
    servers.need_root()
    base = servers.make_workdir("galera")
    galera = Galera(base / "cluster").start()
    started = []
    try:
        url = galera.script("url").strip()
        apps = []
        shared = {}
        # Server A's worker on node 1, server B's on node 2; each may move to any node.
        for n, (port, first) in enumerate(zip(PORTS, (1, 2))):
            nodes = ",".join(galera.node_address((first - 1 + k) % 3 + 1) for k in range(3))
            server = servers.OurServer(base / f"host{n}", servers.binary(), url, workers=1, db_nodes=nodes, **shared)
            server.start()
            started.append(server)
            shared = shared or {"upload_dir": server.upload_dir, "session_dir": server.session_dir}
            nginx = servers.Nginx(base / f"host{n}", port, server.socket_path, shared["upload_dir"]).start()
            started.append(nginx)
            apps.append((server, f"http://127.0.0.1:{port}/iReporter/"))
        yield galera, apps
    finally:
        for thing in reversed(started):
            thing.stop()
        galera.stop()
        servers.remove_workdir(base)


def logs(apps) -> str:
    return "\n".join(servers.tail(server.log_path) for server, _ in apps)


def local_commits(galera) -> list[int]:
    return [int(galera.status(n, "wsrep_local_commits")) for n in (1, 2, 3)]


def test_the_apps_flows_across_servers_and_nodes(cluster):
    galera, apps = cluster
    (server_a, url_a), (_, url_b) = apps
    before = local_commits(galera)
    user, password = servers.unique_name("galera"), servers.app_password("secret")
    with AppClient(Endpoint(url_a), timeout=30) as a, AppClient(Endpoint(url_b), timeout=30) as b:
        assert a.register(user, password).json()["result"][0]["username"] == user, logs(apps)
        assert b.login(user, password).json()["result"][0]["username"] == user, "the account is on node 2 at once"
        a.jar.update([f"PHPSESSID={b.session_id}; path=/"])

        for uploader, reader, title in ((a, b, f"via A {user}"), (b, a, f"via B {user}")):
            assert uploader.upload(servers.photo(), title).json() == {"successful": 1}, logs(apps)
            mine = [row for row in reader.stream().json()["result"] if row["title"] == title]
            assert len(mine) == 1, f"{title} not in the other server's stream at once"
        id_photo = mine[0]["IdPhoto"]
        assert (server_a.upload_dir / f"{id_photo}-thumb.jpg").is_file()

        r = b.call([("command", "comment"), ("IdPhoto", id_photo), ("text", "Nice!")]).json()
        assert r["result"][0]["text"] == "Nice!", r
        assert [c["text"] for c in a.call([("command", "comments"), ("IdPhoto", id_photo)]).json()["result"]] == ["Nice!"]
        assert a.call([("command", "like"), ("IdPhoto", id_photo)]).json()["result"][0]["likes"] == "1"
        counts = b.call([("command", "dislike"), ("IdPhoto", id_photo)]).json()["result"][0]
        assert (counts["likes"], counts["dislikes"], counts["comments"], counts["myvote"]) == ("0", "1", "1", "-1"), counts
        assert b.call([("command", "delete"), ("IdPhoto", id_photo)]).json() == {"successful": 1}
        assert [row for row in a.stream().json()["result"] if row["IdPhoto"] == id_photo] == []

    after = local_commits(galera)
    assert after[0] > before[0] and after[1] > before[1], f"writes committed on nodes 1 and 2: {before} -> {after}"
    counts = {galera.sql(n, "SELECT COUNT(*) FROM login; SELECT COUNT(*) FROM photos; SELECT COUNT(*) FROM comments")
              for n in (1, 2, 3)}
    assert len(counts) == 1, f"the three nodes hold the same rows: {counts}"


def test_one_name_registered_through_both_servers_at_once_makes_one_account(cluster):
    galera, apps = cluster
    (_, url_a), (_, url_b) = apps
    taken = None
    for round_ in range(20):
        user = servers.unique_name(f"race{round_}")
        answers = [None, None]

        def register(i, url):
            with AppClient(Endpoint(url), timeout=30) as phone:
                answers[i] = phone.register(user, servers.app_password("pw")).json()

        threads = [threading.Thread(target=register, args=(i, url)) for i, url in enumerate((url_a, url_b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        created = [a for a in answers if a and "result" in a]
        refused = [a for a in answers if a and "error" in a]
        assert len(created) == 1 and len(refused) == 1, f"round {round_}: {answers}\n{logs(apps)}"
        taken = taken or refused[0]
        assert refused[0] == taken, f"one answer for a taken name: {answers}\n{logs(apps)}"
        assert galera.sql(3, f"SELECT COUNT(*) FROM login WHERE username = '{user}'").strip() == "1"
    with AppClient(Endpoint(url_a), timeout=30) as phone:
        phone.register("someone", servers.app_password("pw"))
        assert phone.register("someone", servers.app_password("pw")).json() == taken, "the same as today's answer"


def test_a_node_killed_during_load_loses_nothing_and_rejoins(cluster):
    galera, apps = cluster
    (server_a, url_a), (_, url_b) = apps
    clients, duration, kill_at, restart_at = 4, 20.0, 4.0, 10.0
    users = []
    for n in range(clients):
        user = servers.unique_name(f"load{n}")
        with AppClient(Endpoint(url_a), timeout=30) as phone:
            assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
        users.append(user)

    acknowledged: list[str] = []
    answers: dict[str, int] = {}
    bad: list[str] = []
    ok_after_kill: list[float] = []
    lock = threading.Lock()
    start = time.monotonic()
    stop = threading.Event()
    killed = {}

    def note(op: str, r, t: float):
        try:
            body = r.json()
        except Exception:
            body = None
        with lock:
            if r.status != 200 or not isinstance(body, dict) or not ("result" in body or "successful" in body
                                                                     or "error" in body):
                bad.append(f"{op}: HTTP {r.status} {r.body[:120]!r}")
                return
            key = "ok" if "error" not in body else body["error"]
            answers[f"{op}: {key}"] = answers.get(f"{op}: {key}", 0) + 1
            if key == "ok" and "killed" in killed and t > killed["killed"]:
                ok_after_kill.append(t)

    def load(n: int):
        user, count = users[n], 0
        phones = [AppClient(Endpoint(url), timeout=30) for url in (url_a, url_b)]
        try:
            for phone in phones:
                phone.login(user, servers.app_password("pw"))
            while not stop.is_set() and time.monotonic() - start < duration:
                phone = phones[count % 2]
                op = ("upload", "stream", "login")[count % 3]
                try:
                    if op == "upload":
                        title = f"{user} #{count}"
                        r = phone.upload(servers.photo(), title)
                        if r.status == 200 and r.body == servers.SUCCESS:
                            with lock:
                                acknowledged.append(title)
                    elif op == "stream":
                        r = phone.stream()
                    else:
                        r = phone.login(user, servers.app_password("pw"))
                    note(op, r, time.monotonic() - start)
                except OSError as e:
                    with lock:
                        bad.append(f"{op}: {type(e).__name__} {e}")
                count += 1
        finally:
            for phone in phones:
                phone.close()

    threads = [threading.Thread(target=load, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    try:
        time.sleep(kill_at)
        galera.kill(1)  # server A's node
        killed["killed"] = time.monotonic() - start
        time.sleep(max(0.0, restart_at - (time.monotonic() - start)))
        log = galera.directory / "node1" / "error.log"
        # (a whole copy, SST, logs "IST received" too: only IST without SST is incremental)
        text = log.read_text(errors="replace")
        transfers_before = (text.count("IST received"), text.count("SST completed"))
        restarted = time.monotonic()
        galera.script("start-node", "1")
        rejoin_seconds = time.monotonic() - restarted
    finally:
        for t in threads:
            t.join(duration + 60)
        stop.set()
    assert all(not t.is_alive() for t in threads), "a load thread hung"

    # Every acknowledged photo is on every node, with its files.
    titles = {}
    for n in (1, 2, 3):
        rows = galera.sql(n, "SELECT IdPhoto, title FROM photos WHERE title LIKE 'load%'").splitlines()
        titles[n] = {line.split("\t")[1]: line.split("\t")[0] for line in rows}
    lost = [t for t in acknowledged if any(t not in titles[n] for n in (1, 2, 3))]
    all_ids = set(galera.sql(2, "SELECT IdPhoto FROM photos").split())
    upload_dir = server_a.upload_dir
    files = {p.name.split(".")[0] for p in upload_dir.glob("*.jpg") if "-thumb" not in p.name}
    rows_without_files = [i for i in all_ids if not (upload_dir / f"{i}.jpg").is_file()
                          or not (upload_dir / f"{i}-thumb.jpg").is_file()]
    files_without_rows = sorted(files - all_ids)
    first_ok = min((t for t in ok_after_kill if t > killed["killed"]), default=None)
    text = log.read_text(errors="replace")
    ist = text.count("IST received") > transfers_before[0] and text.count("SST completed") == transfers_before[1]
    figures = {
        "clients": clients, "seconds": duration, "killed node 1 at": round(killed["killed"], 2),
        "requests": sum(answers.values()) + len(bad), "answers": answers, "not clear JSON": bad,
        "acknowledged uploads": len(acknowledged), "acknowledged photos lost": len(lost),
        "rows without files": len(rows_without_files), "files without rows": len(files_without_rows),
        "seconds from the kill to the next success": None if first_ok is None else round(first_ok - killed["killed"], 2),
        "seconds for node 1 to rejoin (start to Synced)": round(rejoin_seconds, 2),
        "rejoined by IST": ist,
    }
    if os.environ.get("IREPORTER_GALERA_FIGURES"):
        Path(os.environ["IREPORTER_GALERA_FIGURES"]).write_text(json.dumps(figures, indent=2) + "\n")
    detail = json.dumps(figures, indent=2) + "\n" + logs(apps)
    assert bad == [], detail
    assert all(key.endswith(": ok") or key.endswith(UNAVAILABLE["error"]) for key in answers), detail
    assert lost == [] and rows_without_files == [] and files_without_rows == [], detail
    assert len(acknowledged) >= 10 and first_ok is not None, detail
    assert ist and galera.status(1, "wsrep_local_state_comment") == "Synced", detail
    assert galera.status(1, "wsrep_cluster_size") == "3", detail
