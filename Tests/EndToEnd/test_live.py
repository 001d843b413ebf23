"""The live stream through nginx's Nchan module (deploy/nginx/ireporter-live.conf,
live_publish_url in the test stack): a subscriber gets each new photo as it
is committed, and idle subscribers hold no worker of the server. A flood of
subscriptions is refused while the API answers, idle subscribers are closed,
and only the server (with its key) may publish (issue 26)."""
from __future__ import annotations

import json
import os
import select
import signal
import time
import urllib.error
import urllib.request

import pytest

import servers
from e2e import OURS
from servers import app_password, check_json, photo, unique_name
from appclient import AppClient, Endpoint
from subscriber import Subscriber, subscribe_all

# deploy/nginx/ireporter-live.conf's limits.
PER_ADDRESS = 20

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no live stream")]


def test_a_new_photo_reaches_every_subscriber_at_once(endpoint):
    subscribers = [Subscriber(endpoint) for _ in range(20)]
    try:
        with AppClient(endpoint) as phone:
            user = unique_name("live")
            check_json(phone.register(user, app_password("l")), "register")
            assert phone.upload(photo(), "live one").body == b'{"successful":1}'
            # From the upload's answer (published before it): the fan-out alone.
            answered = time.monotonic()
            for s in subscribers:
                got = s.next_row(answered + 5)
                assert (got["title"], got["username"]) == ("live one", user), got
            assert time.monotonic() - answered < 5
            rows = check_json(phone.stream(), "stream")["result"]
            assert rows[0] == got, "the message is the photo as the stream shows it"
    finally:
        for s in subscribers:
            s.close()


def test_idle_subscribers_hold_no_worker(endpoint, base_url):
    # 300 subscribers, 15 addresses (the limit is per address).
    subscribers = [Subscriber(endpoint, source=f"127.0.3.{n // PER_ADDRESS + 1}") for n in range(300)]
    try:
        status_url = base_url.split("/iReporter/")[0] + "/ireporter-status?json"
        status = json.loads(urllib.request.urlopen(status_url, timeout=10).read())
        assert status["active processes"] <= 1, status  # the one answering this
        with AppClient(endpoint) as phone:
            started = time.monotonic()
            assert phone.stream().status == 200
            # Answered beside 300 subscribers; 5 s leaves a busy machine room.
            assert time.monotonic() - started < 5
    finally:
        for s in subscribers:
            s.close()


def test_photos_reach_subscribers_across_an_nginx_reload(endpoint, env):
    """Each worker keeps its connection to the publisher location between
    uploads; a reload closes them all (the old nginx workers drop their idle
    connections), and no photo may be lost for that."""
    if env.run_dir is None:
        pytest.skip("needs IREPORTER_RUN_DIR (the stack's nginx.pid)")
    with AppClient(endpoint) as phone:
        check_json(phone.register(unique_name("reload"), app_password("r")), "register")
        for n in range(8):  # every worker has published at least once, most likely
            assert phone.upload(photo(), f"before {n}").body == b'{"successful":1}'
        nginx = int((env.run_dir / "nginx" / "nginx.pid").read_text())
        old_workers = servers.children(nginx)
        os.kill(nginx, signal.SIGHUP)
        assert servers.wait_gone(old_workers, 10), "the old workers are gone, their connections closed"
        subscriber = Subscriber(endpoint)
        try:
            titles = [f"after {n}" for n in range(8)]
            for title in titles:
                assert phone.upload(photo(), title).body == b'{"successful":1}'
            got = [subscriber.next_row(time.monotonic() + 5)["title"] for _ in titles]
            assert got == titles
        finally:
            subscriber.close()


def api_answers(endpoint: Endpoint, web_site: str, within: float):
    """stream, login and the web page answer 200, each within `within` s."""
    with AppClient(endpoint, timeout=10) as phone:
        name = unique_name("calm")
        check_json(phone.register(name, app_password("c")), "register")
        for call in (phone.stream, lambda: phone.login(name, app_password("c"))):
            started = time.monotonic()
            check_json(call(), "during the flood")
            assert time.monotonic() - started < within
    started = time.monotonic()
    with urllib.request.urlopen(web_site, timeout=10) as page:
        assert page.status == 200 and b"<html" in page.read().lower()
    assert time.monotonic() - started < within


def test_a_flood_of_subscriptions_from_one_address_is_refused_and_the_api_answers(endpoint, web_site):
    """Issue 26: one client opened 2,000 idle subscriptions and nginx ran out
    of connections for everyone. Now an address gets 20; the rest are
    refused at once (429), and the API and the page answer meanwhile."""
    started = time.monotonic()
    accepted, refused = subscribe_all(endpoint, ["127.0.4.1"] * 300, deadline=started + 15)
    try:
        assert len(accepted) == PER_ADDRESS, (len(accepted), refused[:3])
        assert len(refused) == 300 - PER_ADDRESS and all(b" 429 " in status for status in refused), refused[:3]
        # Well before subscribe_all's deadline (15 s): 300 connections on a busy machine.
        assert time.monotonic() - started < 10, "refused promptly"
        # Another address still subscribes, and the API answers.
        other = Subscriber(endpoint, source="127.0.4.2")
        other.close()
        api_answers(endpoint, web_site, within=5)
    finally:
        for s in accepted:
            s.close()


def test_only_the_server_publishes(endpoint, base_url):
    """Behind a proxy on the same host everyone is a loopback client: the
    publisher location asks for the server's key, and a publish without it
    (or with another) reaches no subscriber."""
    publish = base_url.split("/iReporter/")[0] + "/ireporter-publish"
    fake = json.dumps({"result": [{"IdPhoto": "1", "title": "fake", "IdUser": 1, "username": "x"}]}).encode()
    subscriber = Subscriber(endpoint, source="127.0.5.1")
    try:
        for headers in ({}, {"X-IReporter-Publish-Key": "guess"}, {"X-IReporter-Publish-Key": ""}):
            request = urllib.request.Request(publish, data=fake, headers={"Content-Type": "application/json", **headers})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 403, headers
        subscriber.sock.settimeout(1)
        readable, _, _ = select.select([subscriber.sock], [], [], 1)
        pending = subscriber.sock.recv(65536) if readable else b""
        assert b"fake" not in subscriber.pending + pending
        # The server's own publish still arrives.
        with AppClient(endpoint) as phone:
            check_json(phone.register(unique_name("pub"), app_password("p")), "register")
            started = time.monotonic()
            assert phone.upload(photo(), "real one").body == b'{"successful":1}'
            assert subscriber.next_row(started + 3)["title"] == "real one"
    finally:
        subscriber.close()


def test_no_nginx_version_in_headers_or_error_pages(base_url):
    for url in (base_url, base_url.split("/iReporter/")[0] + "/no-such-page"):
        try:
            response = urllib.request.urlopen(url, timeout=10)
            server, body = response.headers["Server"], response.read()
        except urllib.error.HTTPError as error:
            server, body = error.headers["Server"], error.read()
        assert server == "nginx", (url, server)
        assert b"nginx/" not in body, (url, body[:200])


# A private nginx with the shipped snippet, its total and timeout made small
# so that the test fills the stream and waits for the timeout in seconds.
FLOOD_PORT = servers.http_port(3)
TOTAL = 60
LIVE_EDITS = {"limit_conn ireporter_live_all 1000;": f"limit_conn ireporter_live_all {TOTAL};",
              "nchan_subscriber_timeout 5m;": "nchan_subscriber_timeout 2s;"}


@pytest.fixture(scope="module")
def small_live():
    url = f"http://127.0.0.1:{FLOOD_PORT}/iReporter/"
    with servers.server_behind_nginx("live-flood", FLOOD_PORT, live_edits=LIVE_EDITS, workers=2,
                                     live_publish_url=f"http://127.0.0.1:{FLOOD_PORT}/ireporter-publish",
                                     live_publish_key=servers.PUBLISH_KEY):
        yield url


def test_the_live_stream_full_from_many_addresses_leaves_the_api_answering(small_live):
    endpoint = Endpoint(small_live)
    sources = [f"127.0.6.{n % 8 + 1}" for n in range(8 * 15)]  # 15 from each of 8 addresses: 120
    started = time.monotonic()
    accepted, refused = subscribe_all(endpoint, sources, deadline=started + 15)
    try:
        assert len(accepted) == TOTAL and len(refused) == len(sources) - TOTAL, (len(accepted), refused[:3])
        assert all(b" 429 " in status for status in refused), refused[:3]
        api_answers(endpoint, small_live.replace("/iReporter/", "/"), within=5)
        # Idle subscribers are closed after nchan_subscriber_timeout (2 s here).
        # (Its answer ends: Nchan's ":408 Request Timeout" comment, then the
        # last chunk or the connection closed.)
        open_ones = {s: b"" for s in accepted}
        deadline = time.monotonic() + 6
        while open_ones and time.monotonic() < deadline:
            readable, _, _ = select.select(list(open_ones), [], [], 0.5)
            for s in readable:
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    data = b""
                open_ones[s] += data
                if not data or b"408 Request Timeout" in open_ones[s]:
                    del open_ones[s]
        assert not open_ones, f"{len(open_ones)} subscribers still open 6 s after a 2 s timeout"
        # Room again: a new subscriber is accepted.
        again = Subscriber(endpoint, source="127.0.6.1")
        again.close()
    finally:
        for s in accepted:
            s.close()
