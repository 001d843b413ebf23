"""The live stream through nginx's Nchan module (deploy/nginx/ireporter-live.conf,
live_publish_url in the test stack): a subscriber gets each new photo as it
is committed, and idle subscribers hold no worker of the server."""
from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest

from e2e import OURS
from servers import app_password, check_json, photo, unique_name
from appclient import AppClient, Endpoint

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no live stream")]


class Subscriber:
    """An EventSource subscriber to /iReporter/live, its headers read."""

    def __init__(self, endpoint: Endpoint, timeout: float = 10):
        self.sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout)
        self.sock.sendall((f"GET {endpoint.path('live')} HTTP/1.1\r\nHost: {endpoint.host_header}\r\n"
                           "Accept: text/event-stream\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, f"the subscription was closed: {head!r}"
            head += chunk
        assert b" 200 " in head.split(b"\r\n", 1)[0] and b"text/event-stream" in head.lower(), head
        self.pending = head.split(b"\r\n\r\n", 1)[1].replace(b"\r\n", b"\n")

    def next_photo(self, deadline: float) -> dict:
        """The next message's photo (SSE: `data:` lines; an empty line ends an event)."""
        while True:
            while b"\n\n" in self.pending:
                event, self.pending = self.pending.split(b"\n\n", 1)
                data = b"".join(line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:"))
                if data:
                    return json.loads(data)["result"][0]
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            assert chunk, "the subscription ended"
            self.pending += chunk.replace(b"\r\n", b"\n")

    def close(self):
        self.sock.close()


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
