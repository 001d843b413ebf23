"""A subscriber to the live stream (/iReporter/live, nginx's Nchan module), as
a browser's EventSource is: test_live.py and test_redis.py (across hosts).
`source` is the loopback address it connects from (127.x.y.z): nginx allows
only so many subscribers per address (deploy/nginx/ireporter-live.conf)."""
from __future__ import annotations

import itertools
import json
import selectors
import socket
import time
import urllib.request

from appclient import Endpoint


class Subscriber:
    """An EventSource subscriber to /iReporter/live, its headers read."""

    def __init__(self, endpoint: Endpoint, timeout: float = 10, source: str | None = None, path: str | None = None):
        """`path`: another channel than the photos' (a person's notifications)."""
        self.sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.sock.sendall((f"GET {path or endpoint.path('live')} HTTP/1.1\r\nHost: {endpoint.host_header}\r\n"
                           "Accept: text/event-stream\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, f"the subscription was closed: {head!r}"
            head += chunk
        assert b" 200 " in head.split(b"\r\n", 1)[0] and b"text/event-stream" in head.lower(), head
        self.pending = head.split(b"\r\n\r\n", 1)[1].replace(b"\r\n", b"\n")

    def next_row(self, deadline: float) -> dict:
        """The next message's first row: a photo, or a notification (SSE: `data:` lines; an empty line ends an event)."""
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


def subscribe_all(endpoint: Endpoint, sources: list[str], deadline: float,
                  forwarded: bool = False) -> tuple[list[socket.socket], list[bytes]]:
    """One subscription from each of `sources` (an address may recur), sent
    at once, as a flood would: the sockets nginx answered 200 (held open),
    and the status lines of the others (closed). Bounded by `deadline`.
    `forwarded`: the test plays a proxy on the same host, connecting from
    127.0.0.1 with each source in X-Forwarded-For (any address, IPv6 too)."""
    selector = selectors.DefaultSelector()
    heads: dict[socket.socket, bytes] = {}
    for source in sources:
        s = socket.create_connection((endpoint.host, endpoint.port), timeout=10,
                                     source_address=None if forwarded else (source, 0))
        s.sendall((f"GET {endpoint.path('live')} HTTP/1.1\r\nHost: {endpoint.host_header}\r\n"
                   + (f"X-Forwarded-For: {source}\r\n" if forwarded else "")
                   + "Accept: text/event-stream\r\n\r\n").encode())
        s.setblocking(False)
        heads[s] = b""
        selector.register(s, selectors.EVENT_READ)
    accepted, refused = [], []
    while len(accepted) + len(refused) < len(sources) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            s = key.fileobj
            chunk = s.recv(4096)
            heads[s] += chunk
            if b"\r\n" in heads[s] or not chunk:
                selector.unregister(s)
                status = heads[s].split(b"\r\n", 1)[0]
                if b" 200 " in status:
                    accepted.append(s)
                else:
                    refused.append(status)
                    s.close()
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    selector.close()
    return accepted, refused


# The title of the probes photo_reaches_every_host publishes, and skips.
PROBE = "probe of the live channel "


def photo_reaches_every_host(upload_url: str, subscriber_urls: list[str], publish_key: str, tag: str):
    """A live subscriber on each of `subscriber_urls` (app hosts, or a front)
    gets the photo a new user posts through `upload_url` within 5 s: the live
    channel is shared through Redis. Each subscription is first seen to be
    in place, Nchan's in Redis included, which its 200 alone does not say:
    probes are published through `upload_url`'s host (with `publish_key`,
    its live_publish_key) until every subscriber has heard one."""
    import servers
    from appclient import AppClient
    user = servers.unique_name(tag)
    title = f"posted through {upload_url} by {user}"
    subscribers = [Subscriber(Endpoint(url)) for url in subscriber_urls]
    try:
        publish_probes_until_heard(upload_url.split("/iReporter/")[0] + "/ireporter-publish", publish_key, subscribers)
        with AppClient(Endpoint(upload_url), timeout=30) as phone:
            assert phone.register(user, servers.app_password("live")).json()["result"][0]["username"] == user
            started = time.monotonic()
            assert phone.upload(servers.photo(), title).json() == {"successful": 1}
        for subscriber in subscribers:
            got = subscriber.next_row(started + 5)
            while got["title"].startswith(PROBE):  # (published before the last one was heard)
                got = subscriber.next_row(started + 5)
            assert (got["title"], got["username"]) == (title, user), got
    finally:
        for subscriber in subscribers:
            subscriber.close()


def publish_probes_until_heard(publish_url: str, publish_key: str, subscribers: list[Subscriber], within: float = 15):
    """Publishes a probe to the photos' channel every half second until each
    of `subscribers` has read one (bounded by `within` seconds)."""
    deadline = time.monotonic() + within
    waiting = list(subscribers)
    for n in itertools.count(1):
        assert time.monotonic() < deadline, f"{len(waiting)} of {len(subscribers)} subscribers heard no probe"
        probe = json.dumps({"result": [{"IdPhoto": "0", "title": f"{PROBE}{n}", "IdUser": "0", "username": ""}]})
        request = urllib.request.Request(publish_url, data=probe.encode(), headers={
            "Content-Type": "application/json", "X-IReporter-Publish-Key": publish_key})
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()
        heard_by = time.monotonic() + 0.5
        for subscriber in list(waiting):
            try:
                if subscriber.next_row(heard_by)["title"].startswith(PROBE):
                    waiting.remove(subscriber)
            except TimeoutError:
                pass
        if not waiting:
            return
