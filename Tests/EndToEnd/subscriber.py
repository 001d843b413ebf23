"""A subscriber to the live stream (/iReporter/live, nginx's Nchan module), as
a browser's EventSource is: test_live.py and test_redis.py (across hosts)."""
from __future__ import annotations

import json
import socket
import time

from appclient import Endpoint


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
