"""The live stream through nginx's Nchan module (deploy/nginx/ireporter-live.conf,
live_publish_url in the test stack): a subscriber gets each new photo as it
is committed, and idle subscribers hold no worker of the server."""
from __future__ import annotations

import json
import os
import signal
import time
import urllib.request

import pytest

from e2e import OURS
from servers import app_password, check_json, photo, unique_name
from appclient import AppClient, Endpoint
from subscriber import Subscriber

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no live stream")]


def test_a_new_photo_reaches_every_subscriber_at_once(endpoint):
    subscribers = [Subscriber(endpoint) for _ in range(20)]
    try:
        with AppClient(endpoint) as phone:
            user = unique_name("live")
            check_json(phone.register(user, app_password("l")), "register")
            started = time.monotonic()
            assert phone.upload(photo(), "live one").body == b'{"successful":1}'
            for s in subscribers:
                got = s.next_photo(started + 2)
                assert (got["title"], got["username"]) == ("live one", user), got
            assert time.monotonic() - started < 2
            rows = check_json(phone.stream(), "stream")["result"]
            assert rows[0] == got, "the message is the photo as the stream shows it"
    finally:
        for s in subscribers:
            s.close()


def test_idle_subscribers_hold_no_worker(endpoint, base_url):
    subscribers = [Subscriber(endpoint) for _ in range(300)]
    try:
        status_url = base_url.split("/iReporter/")[0] + "/ireporter-status?json"
        status = json.loads(urllib.request.urlopen(status_url, timeout=10).read())
        assert status["active processes"] <= 1, status  # the one answering this
        with AppClient(endpoint) as phone:
            started = time.monotonic()
            assert phone.stream().status == 200
            assert time.monotonic() - started < 1
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
        os.kill(nginx, signal.SIGHUP)
        time.sleep(1.5)  # the old workers are gone, their connections closed
        subscriber = Subscriber(endpoint)
        try:
            titles = [f"after {n}" for n in range(8)]
            for title in titles:
                assert phone.upload(photo(), title).body == b'{"successful":1}'
            got = [subscriber.next_photo(time.monotonic() + 5)["title"] for _ in titles]
            assert got == titles
        finally:
            subscriber.close()
