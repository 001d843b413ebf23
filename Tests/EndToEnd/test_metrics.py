"""The status page's metrics (`/ireporter-status?openmetrics`, issue 27) on
the test stack, behind nginx as deploy/nginx/ireporter.conf routes it: the
page is OpenMetrics that prometheus-client's parser accepts whole; a
request is counted by command and outcome with its duration, a JSON-RPC
batch's calls one each; a client's own command or method names never
become labels; upload bytes and throttle refusals are counted. Then
Debian's Prometheus scrapes the stack with deploy/prometheus/ireporter.yml
and answers a query for our requests. Loopback only.
"""
from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import e2e
import servers
from appclient import AppClient
from e2e import OURS
from openmetrics import scrape, value
from reactions import rpc

pytestmark = pytest.mark.skipif(not OURS, reason="the PHP original has no metrics")

REQUESTS = "ireporter_requests_total"
DURATIONS = "ireporter_request_duration_seconds_count"


def test_the_page_is_openmetrics_with_every_family(base_url):
    families = scrape(base_url)
    kinds = {name: family.type for name, family in families.items()}
    expected = {
        "ireporter_requests": "counter", "ireporter_request_duration_seconds": "histogram",
        "ireporter_database_errors": "counter", "ireporter_redis_errors": "counter", "ireporter_s3_errors": "counter",
        "ireporter_throttle_refusals": "counter", "ireporter_upload_bytes": "counter",
        "ireporter_stream_changes_unconfirmed": "counter", "ireporter_live_publish_failures": "counter",
        "ireporter_worker_processes": "gauge", "ireporter_prepared_statements": "gauge",
        "ireporter_accepted_connections": "counter", "ireporter_start_time_seconds": "gauge",
    }
    assert {name: kinds.get(name) for name in expected} == expected, kinds
    assert families["ireporter_request_duration_seconds"].unit == "seconds"
    busy = value(families, "ireporter_worker_processes", state="busy")
    assert busy >= 1, "the worker answering this"


def test_a_stream_is_counted_with_its_duration(base_url, client):
    before = scrape(base_url)
    # Not the plain stream: the stack's nginx may answer that from the server's file, uncounted here.
    assert client().call({"command": "stream", "count": "5"}).status == 200
    after = scrape(base_url)
    assert value(after, REQUESTS, command="stream", outcome="ok") == value(before, REQUESTS, command="stream", outcome="ok") + 1
    assert value(after, DURATIONS, command="stream") == value(before, DURATIONS, command="stream") + 1
    # Each worker's connection holds the statements it prepared.
    assert value(after, "ireporter_prepared_statements") >= 1


def test_batch_calls_count_one_each_and_client_names_are_no_labels(base_url, client):
    before = scrape(base_url)
    phone = client()
    _, answers = rpc(phone, [{"jsonrpc": "2.0", "id": 1, "method": "stream", "params": {}},
                             {"jsonrpc": "2.0", "id": 2, "method": "no-such-method-4711", "params": {}}])
    assert [("result" in a, "error" in a) for a in answers] == [(True, False), (False, True)], answers
    assert phone.call({"command": "no-such-command-4711"}).status == 200
    after = scrape(base_url)

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)
    assert grew(REQUESTS, command="stream", outcome="ok") == 1
    assert grew(REQUESTS, command="unknown", outcome="method-not-found") == 1
    assert grew(REQUESTS, command="unknown", outcome="unknown-command") == 1
    assert grew(DURATIONS, command="rpc-batch") == 1
    labels = {v for family in after.values() for s in family.samples for v in s.labels.values()}
    assert not any("4711" in v for v in labels), labels


def test_upload_bytes_are_counted(base_url, client, images):
    phone = client()
    name = servers.unique_name("metrics")
    r = phone.register(name, e2e.app_password("pw"))
    assert r.status == 200 and b"IdUser" in r.body, r.body
    before = scrape(base_url)
    r = phone.upload(images.photo, "metrics")
    assert r.status == 200 and "error" not in r.json(), r.body
    body = phone.last_request.split(b"\r\n\r\n", 1)[1]
    after = scrape(base_url)
    assert value(after, "ireporter_upload_bytes_total") - value(before, "ireporter_upload_bytes_total") == len(body)
    assert value(after, REQUESTS, command="upload", outcome="ok") == value(before, REQUESTS, command="upload", outcome="ok") + 1


def test_throttle_refusals_are_counted(base_url, endpoint):
    before = scrape(base_url)
    name = servers.unique_name("guessed")
    answers = []
    with AppClient(endpoint, source="127.0.41.1") as c:
        for i in range(8):
            answers.append(c.login(name, f"guess{i}").body)
    refused = sum(a.startswith(b'{"error":"Too many failed logins') for a in answers)
    assert refused >= 1, answers
    after = scrape(base_url)
    grew = value(after, "ireporter_throttle_refusals_total", throttle="login") \
        - value(before, "ireporter_throttle_refusals_total", throttle="login")
    assert grew == refused


# ----------------------------------------------------------- Prometheus

@pytest.fixture(scope="module")
def prometheus(base_url, tmp_path_factory):
    """Debian's Prometheus on loopback, scraping the stack every second with
    deploy/prometheus/ireporter.yml (its target and interval rewritten)."""
    binary = servers.need_tool("/usr/bin/prometheus", "prometheus")
    work = tmp_path_factory.mktemp("prometheus")
    stack = urllib.parse.urlsplit(base_url).netloc
    config = servers.render(e2e.REPO_ROOT / "deploy/prometheus/ireporter.yml", work / "prometheus.yml",
                            {'targets: ["127.0.0.1:80"]': f'targets: ["{stack}"]',
                             "scrape_interval: 15s": "scrape_interval: 1s",
                             "/etc/prometheus/ireporter-alerts.yml": str(e2e.REPO_ROOT / "deploy/prometheus/ireporter-alerts.yml")})
    assert f'"{stack}"' in config and "scrape_interval: 1s" in config
    check = subprocess.run(["/usr/bin/promtool", "check", "config", str(work / "prometheus.yml")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    port = servers.unused_port()
    log = open(work / "prometheus.log", "wb")
    proc = subprocess.Popen([binary, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()
    try:
        yield {"url": f"http://127.0.0.1:{port}", "log": work / "prometheus.log", "proc": proc}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def query(prometheus, expression: str) -> list:
    url = prometheus["url"] + "/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            answer = json.loads(r.read())
    except OSError:
        return []  # not listening yet
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_prometheus_scrapes_our_requests(prometheus, client):
    def log():
        return Path(prometheus["log"]).read_text(errors="replace")[-3000:]
    assert prometheus["proc"].poll() is None, log()
    servers.wait_for(lambda: query(prometheus, 'up{job="ireporter"} == 1'), 60, interval=0.5,
                     what="Prometheus to scrape the stack (up == 1)")
    assert client().call({"command": "stream", "count": "5"}).status == 200  # one the server answers
    found = servers.wait_for(lambda: query(prometheus, 'ireporter_requests_total{job="ireporter",command="stream"}'), 30,
                             interval=0.5, what="a stream request in Prometheus")
    assert all(float(series["value"][1]) >= 1 for series in found), found
    histogram = query(prometheus, 'ireporter_request_duration_seconds_bucket{command="stream",le="+Inf"}')
    assert histogram and float(histogram[0]["value"][1]) >= 1, histogram


def test_the_alerts_fire_for_the_failures_they_name(prometheus):
    """deploy/prometheus/ireporter-alerts.yml: valid, each alert fed its
    failure's series (`promtool test rules`, Tests/EndToEnd/alerts), and
    loaded by the Prometheus that scrapes the stack, with the upload
    folder's free space to watch."""
    tests = Path(__file__).parent / "alerts" / "ireporter-alerts.test.yml"
    for command in (["check", "rules", str(e2e.REPO_ROOT / "deploy/prometheus/ireporter-alerts.yml")],
                    ["test", "rules", tests.name]):
        done = subprocess.run(["/usr/bin/promtool", *command], cwd=tests.parent, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    with urllib.request.urlopen(prometheus["url"] + "/api/v1/rules", timeout=5) as r:
        groups = json.loads(r.read())["data"]["groups"]
    names = {rule["name"] for group in groups for rule in group["rules"]}
    assert {"IReporterDown", "IReporterUploadsFailing", "IReporterDiskAlmostFull"} <= names, names
    free = servers.wait_for(lambda: query(prometheus, 'ireporter_upload_dir_free_bytes{job="ireporter"}'), 30, interval=0.5,
                            what="the upload folder's free space in Prometheus")
    assert float(free[0]["value"][1]) > 0, free
