"""A subscriber to the live stream (/iReporter/live, nginx's Nchan module), as
a browser's EventSource is: test_live.py and test_redis.py (across hosts).
`source` is the loopback address it connects from (127.x.y.z): nginx allows
only so many subscribers per address (deploy/nginx/ireporter-live.conf)."""
from __future__ import annotations

import json
import selectors
import socket
import time
from typing import Callable

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


def photo_reaches_every_host(upload_url: str, subscriber_urls: list[str], redis_keys: Callable[[], str], tag: str):
    """A live subscriber on each of `subscriber_urls` (app hosts, or a front)
    gets the photo a new user posts through `upload_url` within 5 s: the live
    channel is shared through Redis (`redis_keys`: its KEYS *, where Nchan's
    channel shows once it has the subscribers)."""
    import servers
    from appclient import AppClient
    user = servers.unique_name(tag)
    title = f"posted through {upload_url} by {user}"
    subscribers = [Subscriber(Endpoint(url)) for url in subscriber_urls]
    try:
        servers.wait_for(lambda: any(key.startswith("{channel:") for key in redis_keys().split()), 10,
                         what="Nchan's channel in Redis")
        with AppClient(Endpoint(upload_url), timeout=30) as phone:
            assert phone.register(user, servers.app_password("live")).json()["result"][0]["username"] == user
            started = time.monotonic()
            assert phone.upload(servers.photo(), title).json() == {"successful": 1}
        for subscriber in subscribers:
            got = subscriber.next_row(started + 5)
            assert (got["title"], got["username"]) == (title, user), got
    finally:
        for subscriber in subscribers:
            subscriber.close()
