"""`make cluster-up`, end to end (issue 18): the real scripts/cluster.sh
starts, once for the module and on ports of its own, three Galera nodes,
Redis, the S3 server (scripts/s3-server.py: the photos' bucket), two app
hosts (server + nginx each) and the front nginx; `down` stops it all at the end.

  - the app's flows through the front, with requests landing on both hosts
    (the front's X-Upstream header names the host that answered);
  - a live subscriber on one host gets a photo posted through the other;
  - two phones behind the front (two loopback addresses) are counted apart
    by the registration and login throttles, and a phone's own
    X-Forwarded-For naming the other changes nothing (the hosts take the
    address the front sets, from the front only);
  - faults during a bounded load of uploads, logins and streams through the
    front: kill -9 of a Galera node and its return (IST), an app host
    stopped and started again, an app host's server killed (kill -9) and
    started again, Redis restarted, the S3 server frozen (SIGSTOP) for ten
    seconds. Per fault: acknowledged
    photos lost, orphans, failed requests and their answers (clear JSON
    errors only), seconds to recover. The figures go to the file named by
    IREPORTER_CLUSTER_FIGURES, when set (docs/SCALING.md quotes them).

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_cluster.py
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from mastodon import Mastodon

import servers
from appclient import AppClient, Endpoint, multipart_body, multipart_content_type
from e2e import UPLOAD_FOLDER_MARKER
from phone_load import PhoneLoad
from subscriber import photo_reaches_every_host

FRONT_PORT = 8110
APP_PORTS = (8111, 8112)
GALERA_PORT = 3420  # nodes 3420-3422; Galera's own ports 3430-3452
REDIS_PORT = 6393
S3_PORT = 9413
FRONT_URL = f"http://127.0.0.1:{FRONT_PORT}/iReporter/"
HOST_URLS = [f"http://127.0.0.1:{port}/iReporter/" for port in APP_PORTS]
SCRIPT = servers.REPO / "scripts" / "cluster.sh"
UNAVAILABLE = {"error": "The service is temporarily unavailable, please try again"}
FIGURES: dict[str, dict] = {}


class Cluster:
    """scripts/cluster.sh's cluster in `directory` (on this module's ports
    unless given others: test_cluster_restart.py has its own)."""

    def __init__(self, directory: Path, front_port: int = FRONT_PORT, app_ports: tuple[int, int] = APP_PORTS,
                 galera_port: int = GALERA_PORT, redis_port: int = REDIS_PORT, s3_port: int = S3_PORT,
                 **settings: str):
        self.directory = directory
        self.redis_port = redis_port
        # This PATH: the script's deps.sh checks for the python3 running the tests.
        self.env = servers.clean_env(PATH=os.environ["PATH"], CLUSTER_DIR=str(directory), PORT=str(front_port),
                                     APP_PORTS=" ".join(map(str, app_ports)), GALERA_PORT=str(galera_port),
                                     REDIS_PORT=str(redis_port), S3_PORT=str(s3_port), SKIP_BUILD="1",
                                     BINARY=str(servers.binary()), **settings)
        self.galera_nodes = servers.GaleraNodes(directory / "galera", galera_port)
        # Each host's spool files; the photos are in the bucket.
        self.spool_dirs = [directory / f"host{n}" / "spool" for n in (1, 2)]

    def script(self, *args: str, timeout: float = 400) -> str:
        p = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=self.env)
        assert p.returncode == 0, f"cluster.sh {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def galera(self, *args: str) -> float:
        """Runs a galera.sh command; returns the seconds it took."""
        started = time.monotonic()
        self.galera_nodes.script(*args)
        return time.monotonic() - started

    def kill_node(self, node: int):
        os.kill(int((self.directory / "galera" / f"node{node}" / "mariadbd.pid").read_text()), signal.SIGKILL)

    def redis(self, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", str(self.redis_port), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()

    def s3_url(self) -> str:
        return (self.directory / "s3" / "s3.url").read_text().strip()

    def keys(self) -> list[str]:
        return servers.s3_keys(self.s3_url())

    def object(self, key: str) -> bytes:
        return servers.s3_client(self.s3_url()).get_object(Bucket=self.s3_url().rsplit("/", 1)[1], Key=key)["Body"].read()

    def repair(self, *args: str) -> str:
        """`ireporter repair` with app host 1's configuration."""
        host = self.directory / "host1"
        p = subprocess.run([str(host / "bin" / "ireporter"), "repair", *args, "--config", str(host / "ireporter.conf")],
                           capture_output=True, text=True, timeout=120, env=servers.clean_env())
        assert p.returncode == 0, f"repair {args}: {p.stdout}\n{p.stderr}"
        return p.stdout

    def logs(self) -> str:
        return "\n".join(servers.tail(self.directory / f"host{n}" / "ireporter.log") for n in (1, 2))


@pytest.fixture(scope="module")
def cluster():
    servers.need_root()
    for port in (FRONT_PORT, *APP_PORTS, GALERA_PORT, REDIS_PORT, S3_PORT):
        servers.port_free(port)
    base = servers.make_workdir("cluster")
    # The loads' phones all come from 127.0.0.1 through the front, and on a
    # fast machine register more than a network's hundred an hour (a new user
    # every 100 uploads, under upload_rate_limit): no fault test is about that.
    # A change waits up to half of redis_timeout_ms for each host's
    # confirmation: a listener descheduled longer on a loaded machine would
    # break read-your-writes here, by design, not by a defect.
    cluster = Cluster(base / "cluster", CLUSTER_EXTRA_CONFIG="registration_limit = 1000000\nredis_timeout_ms = 4000")
    try:
        printed = cluster.script("up").strip().splitlines()
        assert printed[-1] == FRONT_URL, printed
        yield cluster
    finally:
        subprocess.run([str(SCRIPT), "down"], capture_output=True, timeout=300, env=cluster.env)
        if os.environ.get("IREPORTER_CLUSTER_FIGURES") and FIGURES:
            Path(os.environ["IREPORTER_CLUSTER_FIGURES"]).write_text(json.dumps(FIGURES, indent=2) + "\n")
        servers.remove_workdir(base)


def answered_by(response) -> str:
    """The app host that answered through the front (its last upstream, after a retry)."""
    return response.header("X-Upstream").split(",")[-1].strip()


def test_cluster_up_started_everything_and_status_says_so(cluster):
    status = cluster.script("status")
    assert status.count("running (pid") == 3 + 2 * 2 + 3, status  # front, Redis, S3; nginx + server per host; nodes
    assert status.count("Synced, Primary, cluster size 3") == 3, status
    config = (cluster.directory / "host2" / "ireporter.conf").read_text()
    assert f"db_nodes = 127.0.0.1:{GALERA_PORT + 1},127.0.0.1:{GALERA_PORT + 2},127.0.0.1:{GALERA_PORT}" in config
    assert "session_store = redis" in config and f"upload_dir = {cluster.spool_dirs[1]}\n" in config
    assert "photo_store = s3\n" in config and f"s3_url = {cluster.s3_url()}\n" in config
    # Every migration applied: 007's unique index on login.username.
    assert "username" in cluster.galera_nodes.sql(3, "SHOW INDEX FROM login WHERE Non_unique = 0")


def test_make_up_and_cluster_up_refuse_a_port_the_other_holds(cluster):
    # `make up` on the front's port (its RUN_DIR never made: refused first).
    p = subprocess.run([str(servers.REPO / "scripts" / "stack.sh"), "up"], capture_output=True, text=True, timeout=60,
                       env=dict(cluster.env, RUN_DIR=str(cluster.directory / "single"), PORT=str(FRONT_PORT)))
    assert p.returncode != 0 and f"127.0.0.1:{FRONT_PORT} is taken" in p.stderr, p.stderr
    assert not (cluster.directory / "single").exists()
    # A second cluster whose front would take a port the first one holds.
    p = subprocess.run([str(SCRIPT), "up"], capture_output=True, text=True, timeout=60,
                       env=dict(cluster.env, CLUSTER_DIR=str(cluster.directory / "second"), PORT=str(APP_PORTS[0])))
    assert p.returncode != 0 and f"127.0.0.1:{APP_PORTS[0]} is taken" in p.stderr, p.stderr
    assert not (cluster.directory / "second").exists()


def test_the_apps_flows_through_the_front_land_on_both_hosts(cluster):
    servers.app_flow(FRONT_URL, None, tag="cluster", logs=cluster.logs)
    user, password = servers.unique_name("cluster"), servers.app_password("secret")
    title = f"through the cluster {user}"
    answers = []
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        def call(r):
            answers.append(r)
            return r.json() if (r.header("Content-Type") or "").startswith("application/json") else r

        assert call(phone.register(user, password))["result"][0]["username"] == user
        r = phone.logout()
        answers.append(r)
        assert r.status == 200 and phone.session_id is None
        assert call(phone.login(user, password))["result"][0]["username"] == user
        assert call(phone.upload(servers.photo(), title)) == {"successful": 1}, cluster.logs()
        for _ in range(4):
            mine = [row for row in call(phone.stream())["result"] if row["title"] == title]
            assert len(mine) == 1, "read-your-writes on every host"
        id_photo = mine[0]["IdPhoto"]
        for name in (f"{id_photo}.jpg", f"{id_photo}-thumb.jpg"):
            r = call(phone.get(f"upload/{name}"))
            assert r.status == 200 and r.body == cluster.object(f"upload/{name}"), name
        assert call(phone.call([("command", "comment"), ("IdPhoto", id_photo), ("text", "Nice!")]))["result"][0]["text"] == "Nice!"
        assert [c["text"] for c in call(phone.call([("command", "comments"), ("IdPhoto", id_photo)]))["result"]] == ["Nice!"]
        assert call(phone.call([("command", "like"), ("IdPhoto", id_photo)]))["result"][0]["likes"] == "1"
        counts = call(phone.call([("command", "dislike"), ("IdPhoto", id_photo)]))["result"][0]
        assert (counts["likes"], counts["dislikes"], counts["myvote"]) == ("0", "1", "-1"), counts
        assert call(phone.call([("command", "delete"), ("IdPhoto", id_photo)])) == {"successful": 1}
        assert [row for row in call(phone.stream())["result"] if row["IdPhoto"] == id_photo] == []
        assert not [key for key in cluster.keys() if key.startswith(f"upload/{id_photo}") or f"/{id_photo}_" in key]
        answers.append(phone.logout())
        assert call(phone.upload(servers.photo(), "after logout")) == {"error": "Authorization required"}
    assert {answered_by(r) for r in answers} == {f"127.0.0.1:{port}" for port in APP_PORTS}


def test_a_subscriber_on_one_host_gets_a_photo_posted_through_the_other(cluster):
    publish_key = (cluster.directory / "host2" / "publish.key").read_text().strip()
    photo_reaches_every_host(HOST_URLS[1], [HOST_URLS[0], FRONT_URL], publish_key, "clusterlive")


def test_a_persons_notification_channel_has_one_name_on_every_host(cluster):
    """The channel is named by the hosts' live_publish_key: with a key per
    host (as cluster.sh made them before), notifications made through the
    other host never reached the person live."""
    user = servers.unique_name("channel")
    with AppClient(Endpoint(HOST_URLS[0]), timeout=30) as phone, AppClient(Endpoint(HOST_URLS[1]), timeout=30) as same:
        assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
        same.jar.update([f"PHPSESSID={phone.session_id}; path=/"])
        channels = [client.call({"command": "notification_channel"}).json() for client in (phone, same)]
    assert channels[0] == channels[1] and channels[0]["result"][0]["channel"].startswith("/iReporter/live/notifications-"), channels
    keys = {(cluster.directory / f"host{n}" / "publish.key").read_text() for n in (1, 2)}
    assert len(keys) == 1, "one live_publish_key"


# Two phones behind the front, each on a loopback address of its own (the
# front itself reaches the hosts from 127.0.0.1).
OWNER, GUESSER = "127.0.24.2", "127.0.24.3"


def forging(phone: AppClient, fields: dict[str, str], address: str):
    """The app's call, with the phone's own X-Forwarded-For naming `address`."""
    return phone.request("POST", phone.ep.path(), multipart_body(sorted(fields.items())), multipart_content_type(),
                         extra_headers=[("X-Forwarded-For", address)]).json()


def test_phones_behind_the_front_are_counted_by_their_own_addresses(cluster):
    def counters(kind: str, address: str) -> list[str]:
        return cluster.redis("KEYS", f"ireporter:counter-ms:{kind}*{address}").split()

    def count(key: str) -> int:
        return int(cluster.redis("GET", key).split()[0])

    user, password = servers.unique_name("owner"), servers.app_password("right")
    with AppClient(Endpoint(FRONT_URL), timeout=30, source=OWNER) as owner, \
            AppClient(Endpoint(FRONT_URL), timeout=30, source=GUESSER) as guesser:
        assert owner.register(user, password).json()["result"][0]["username"] == user
        assert [count(key) for key in counters("register-network:", OWNER)] == [1]
        # A registration from the guesser, claiming to be the owner, counts as the guesser's.
        other = servers.unique_name("guesser")
        assert forging(guesser, {"command": "register", "username": other, "password": password},
                       OWNER)["result"][0]["username"] == other
        assert [count(key) for key in counters("register-network:", GUESSER)] == [1]
        assert [count(key) for key in counters("register-network:", OWNER)] == [1]
        timed = False
        for _ in range(3):
            # The guesser, still claiming the owner's address, guesses until it is held back ...
            failed = None  # when the last failure was sent
            for _ in range(12):
                sent = time.monotonic()
                answer = forging(guesser, {"command": "login", "username": user, "password": "wrong"}, OWNER)
                if "Too many failed logins" in answer.get("error", ""):
                    break
                failed = sent
            else:
                pytest.fail(f"the guesser was never held back: {answer}")
            assert counters("login:", GUESSER) and not counters("login:", OWNER)
            # ... even with the right password, while the block surely lasts: a
            # second from the failure that set it, or what the refusal announced
            # less its rounding up. 0.25 s: each server process reads Redis's
            # clock (TIME) once a minute, a round trip late, and counts on its own.
            waits = int(re.fullmatch(r"Too many failed logins, try again in (\d+) seconds", answer["error"]).group(1))
            holds = max(failed + 1 if failed is not None else 0, sent + waits - 1) - 0.25
            answer = forging(guesser, {"command": "login", "username": user, "password": password}, OWNER)
            if time.monotonic() < holds:
                assert "Too many failed logins" in answer.get("error", ""), answer
                timed = True
                break
            # Answered too late to tell (the block may have ended, the right password let in): again.
        # ... the owner, behind the same front, is not.
        assert owner.login(user, password).json()["result"][0]["username"] == user
    assert not counters("login:", OWNER)
    if not timed:
        pytest.skip("the right password never reached the hosts while the guesser's block surely lasted")


# ----------------------------------------------------------------- faults

def front_load(tag: str) -> PhoneLoad:
    """Four phones looping over upload, stream and login through the front."""
    return PhoneLoad([FRONT_URL], tag)


def objects_without_rows(cluster) -> int:
    ids = set(cluster.galera_nodes.read(2, "SELECT IdPhoto FROM photos").split())
    # (the tree's original is PUT first: an upload cut short may leave it alone)
    object_ids = {m.group(1) or m.group(2) for key in cluster.keys()
                  for m in [re.match(r"^(?:upload/(\d+)(?:-thumb)?|photos/\d+/\d+/(\d+)_[0-9a-f]+(?:_\w)?)\.jpg$", key)] if m}
    return len(object_ids - ids)


def photos_check(cluster, load: PhoneLoad) -> dict:
    """Acknowledged photos on every node with their objects; orphans either
    way. Objects without a row (a PUT the store took after its request gave
    up, a worker killed between its PUTs and its commit) are what `ireporter
    repair` sets aside: counted before it runs, and after."""
    titles = {n: set(cluster.galera_nodes.read(n, "SELECT title FROM photos").splitlines()) for n in (1, 2, 3)}
    lost = [t for t in load.acknowledged if any(t not in titles[n] for n in (1, 2, 3))]
    ids = set(cluster.galera_nodes.read(2, "SELECT IdPhoto FROM photos").split())
    keys = set(cluster.keys())
    spools = [p.name for d in cluster.spool_dirs for p in d.iterdir() if p.is_file()]
    figures = {"acknowledged photos lost": len(lost),
               "rows without files": sum(1 for i in ids if f"upload/{i}.jpg" not in keys or f"upload/{i}-thumb.jpg" not in keys),
               "objects without a row before repair": objects_without_rows(cluster),
               # (the server's marker of an upload folder stays)
               "other files left in the upload folder": sorted(n for n in spools if n != UPLOAD_FOLDER_MARKER)}
    if figures["objects without a row before repair"]:
        figures["repair"] = next(line for line in cluster.repair("--grace", "0", "--yes").splitlines() if " rows, " in line)
    figures["files without rows"] = objects_without_rows(cluster)
    return figures


def check(cluster, name: str, figures: dict, allowed_errors: set[str]):
    FIGURES[name] = figures
    detail = json.dumps(figures, indent=2) + "\n" + cluster.logs()
    assert figures["not clear JSON"] == [], detail
    errors = {key.split(": ", 1)[1] for key in figures["answers"] if key.split(": ", 1)[1] != "ok"}
    assert errors <= {f"error: {e}" for e in allowed_errors}, detail
    assert figures["acknowledged photos lost"] == 0 and figures["rows without files"] == 0, detail
    assert figures["files without rows"] == 0 and figures["other files left in the upload folder"] == [], detail
    assert figures["acknowledged uploads"] >= 5, detail


def test_a_galera_node_killed_and_back_during_load(cluster):
    load = front_load("faultdb")

    def fault():
        cluster.kill_node(1)  # app host 1's first node
        time.sleep(3)
        log = cluster.directory / "galera" / "node1" / "error.log"
        # (a whole copy, SST, logs "IST received" too: only IST without SST is incremental)
        before = log.read_text(errors="replace")
        rejoin = cluster.galera("start-node", "1")
        text = log.read_text(errors="replace")
        recovered = log.parent / "recover.log"  # galera.sh's --wsrep-recover after the kill
        transfer.extend(line for line in (recovered.read_text(errors="replace") if recovered.exists() else "").splitlines()
                        if "Recovered position" in line)
        transfer.extend(line for line in text[len(before):].splitlines()
                        if re.search(r"Recovered position|start_position|IST|SST|State transfer|\[ERROR\]", line))
        return {"seconds for the node to rejoin (start to Synced)": round(rejoin, 2),
                "rejoined by IST": text.count("IST received") > before.count("IST received")
                and text.count("SST completed") == before.count("SST completed")}

    transfer: list[str] = []
    figures = load.run(fault)
    figures.update(photos_check(cluster, load))
    check(cluster, "kill -9 of Galera node 1, start-node 1 after 3 s", figures, {UNAVAILABLE["error"]})
    assert figures["rejoined by IST"], "node 1's state transfer, as its log tells it:\n" + "\n".join(transfer[-40:])
    # Said in the log of host 1, whose first worker starts at node 1 (each worker at its own node): its
    # connection there lost, or (a worker that had none yet) refused.
    said = rf"database node 127\.0\.0\.1:{GALERA_PORT} (lost, going on with another|refused, trying another)"
    assert re.search(said, (cluster.directory / "host1" / "ireporter.log").read_text(errors="replace")), cluster.logs()
    assert cluster.galera_nodes.sql(1, "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").split()[-1] == "3"


def test_an_app_host_stopped_and_started_during_load(cluster):
    load = front_load("faulthost")

    def fault():
        started = time.monotonic()
        cluster.script("stop-host", "1")
        stopped = time.monotonic() - started
        time.sleep(3)
        started = time.monotonic()
        cluster.script("start-host", "1")
        return {"seconds to stop the host": round(stopped, 2),
                "seconds to start it (server + nginx, checked)": round(time.monotonic() - started, 2)}

    figures = load.run(fault, after=6)  # the front tries the host again after fail_timeout (5 s)
    figures.update(photos_check(cluster, load))
    check(cluster, "app host 1 stopped (nginx, then server), started after 3 s", figures, {UNAVAILABLE["error"]})
    seen = set()
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        for _ in range(6):
            seen.add(answered_by(phone.stream()))
    assert seen == {f"127.0.0.1:{port}" for port in APP_PORTS}, "both hosts answer again"


def test_an_app_hosts_server_killed_during_load_answers_json_and_comes_back(cluster):
    load = front_load("faultkill")

    def fault():
        server = cluster.directory / "host1" / "ireporter" / "ireporter.pid"
        os.kill(int(server.read_text()), signal.SIGKILL)  # its nginx stays up
        time.sleep(3)
        started = time.monotonic()
        cluster.script("start-host", "1")
        return {"seconds to start it again (start-host)": round(time.monotonic() - started, 2)}

    figures = load.run(fault)
    figures.update(photos_check(cluster, load))
    # The front answers the requests host 1's nginx got while its server was down.
    check(cluster, "app host 1's server killed (kill -9), start-host 1 after 3 s", figures, {UNAVAILABLE["error"]})


def test_a_mastodon_apps_media_posts_through_the_front(cluster):
    """A media waits for its status in the spool of the host that took it
    (with the bucket, each host's own): the front sends each app's token to
    one host, and asks each host in turn for a waiting media's picture.
    Before, a status reaching the other host was refused (422, "posted
    already") and the picture was a 404 there."""
    site = f"http://127.0.0.1:{FRONT_PORT}"
    user = servers.unique_name("mediaapp")
    with AppClient(Endpoint(FRONT_URL), timeout=30) as phone:
        assert phone.register(user, servers.app_password("pw")).json()["result"][0]["username"] == user
    client_id, client_secret = Mastodon.create_app("cluster media", scopes=["read", "write"],
                                                   redirect_uris="urn:ietf:wg:oauth:2.0:oob", api_base_url=site)
    app = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none",
                   request_timeout=30)
    app.log_in(user, "pw", scopes=["read", "write"], allow_http=True)
    pictures = set()
    for n in range(6):
        media = app.media_post(servers.photo(), mime_type="image/jpeg", file_name="photo.jpg")
        for attempt in range(2):  # the front's round robin: one of the two asks lands on the host without it
            with urllib.request.urlopen(site + urllib.parse.urlsplit(media["preview_url"]).path, timeout=30) as picture:
                assert picture.status == 200 and picture.read(3) == b"\xff\xd8\xff"
                pictures.add(picture.headers.get("X-Upstream"))
        posted = app.status_post(f"through the front {n}", media_ids=[media["id"]])
        assert posted["media_attachments"][0]["id"] != media["id"], "posted: the photo's own id"
    assert any("," in upstreams for upstreams in pictures), f"no picture was asked of the host without it: {pictures}"
    # The token in the query (access_token) is followed to the same host as in the header.
    hosts = set()
    for _ in range(4):
        for query, headers in (("", {"Authorization": f"Bearer {app.access_token}"}), (f"?access_token={app.access_token}", {})):
            request = urllib.request.Request(f"{site}/api/v1/accounts/verify_credentials{query}", headers=headers)
            with urllib.request.urlopen(request, timeout=30) as answer:
                hosts.add(answer.headers["X-Upstream"])
    assert len(hosts) == 1, hosts


def test_a_hosts_server_down_answers_json_rpc_and_mastodon_clients_in_their_own_shapes(cluster):
    """Through the front, a host whose nginx is up and whose server is down
    gave JSON-RPC clients the form API's error and Mastodon clients nginx's
    HTML 502. Each now gets its own shape: JSON-RPC's -32005, a JSON 503."""
    front = f"http://127.0.0.1:{FRONT_PORT}"
    rpc = json.dumps({"jsonrpc": "2.0", "method": "effects", "id": 7}).encode()

    def post(path: str, body: bytes, content_type: str):
        request = urllib.request.Request(front + path, data=body, headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.headers.get("X-Upstream"), json.loads(answer.read())
        except urllib.error.HTTPError as failure:
            return failure.code, failure.headers.get("X-Upstream"), json.loads(failure.read())

    server = cluster.directory / "host1" / "ireporter" / "ireporter.pid"
    os.kill(int(server.read_text()), signal.SIGKILL)  # its nginx stays up
    try:
        host1 = f"127.0.0.1:{APP_PORTS[0]}"

        def host1_down() -> bool:  # its workers follow the killed supervisor out
            try:
                urllib.request.urlopen(urllib.request.Request(f"http://{host1}/iReporter/rpc", data=rpc), timeout=10)
            except urllib.error.HTTPError as failure:
                return failure.code == 502
            return False
        servers.wait_for(host1_down, 15, what="host 1's nginx answering 502")
        rpc_unavailable = {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32005, "message": "The service is temporarily unavailable, please try again"}}
        apps = b"client_name=shape&redirect_uris=urn:ietf:wg:oauth:2.0:oob"
        # One kind at a time: host 1, left out for fail_timeout (5 s) after its 502, is tried again by the next request.
        for path, body, content_type, unavailable, answered in (
                ("/iReporter/rpc", rpc, "application/json", (200, rpc_unavailable), lambda b: b["id"] == 7 and "result" in b),
                ("/api/v1/apps", apps, "application/x-www-form-urlencoded",
                 (503, {"error": "Service temporarily unavailable, please try again"}), lambda b: "client_id" in b)):
            deadline = time.monotonic() + 20
            while True:
                status, upstream, answer = post(path, body, content_type)
                if upstream is None or upstream.endswith(host1):  # the front's own answer, or host 1's
                    assert (status, answer) == unavailable, (path, status, answer)
                    break
                assert status == 200 and answered(answer), (path, status, answer)
                assert time.monotonic() < deadline, f"host 1 never answered {path} through the front"
                time.sleep(0.5)
    finally:
        cluster.script("start-host", "1")


def test_the_s3_server_frozen_ten_seconds_during_load(cluster):
    load = front_load("faults3")
    pid = int((cluster.directory / "s3" / "s3-server.pid").read_text())

    def fault():
        os.kill(pid, signal.SIGSTOP)  # connections accepted by the kernel, never answered
        try:
            time.sleep(10)
        finally:
            os.kill(pid, signal.SIGCONT)
        return {"seconds the S3 server was frozen": 10}

    figures = load.run(fault, after=6)  # s3_timeout_ms (5 s) bounds the uploads that met it
    figures.update(photos_check(cluster, load))
    check(cluster, "S3 server frozen (SIGSTOP) for 10 s", figures, {UNAVAILABLE["error"]})


def test_redis_restarted_during_load_keeps_the_sessions(cluster):
    load = front_load("faultredis")

    def fault():
        started = time.monotonic()
        cluster.script("restart-redis")
        return {"seconds Redis was away (restart-redis)": round(time.monotonic() - started, 2)}

    figures = load.run(fault)
    figures.update(photos_check(cluster, load))
    # Its append-only file kept the sessions: no phone was logged out.
    check(cluster, "Redis restarted (restart-redis: SIGTERM, start)", figures, {UNAVAILABLE["error"]})
