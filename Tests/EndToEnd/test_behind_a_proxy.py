"""Behind a TLS terminator or load balancer on the same host, every client
arrives from 127.0.0.1. deploy/nginx/ireporter.conf's realip lines, enabled
as its comment says, give the server the client's own address again:

  - the login throttle tells clients apart (one blocked, another not);
  - the loopback-only status page stays closed to a forwarded client;
  - the live stream counts a client by its network (an IPv6 /64), as
    deploy/nginx/ireporter-live-limits.conf says.

The test's client plays the proxy: it connects from 127.0.0.1 and sends
X-Forwarded-For. Loopback only, a bounded number of requests.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_behind_a_proxy.py
"""
from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import servers
from appclient import Endpoint
from subscriber import subscribe_all

PORT = servers.http_port(3)
API = f"http://127.0.0.1:{PORT}/iReporter/"
REALIP = {f"#{line}": line for line in ("set_real_ip_from 127.0.0.1;", "set_real_ip_from ::1;",
                                        "real_ip_header X-Forwarded-For;", "real_ip_recursive off;")}


@pytest.fixture(scope="module")
def proxied():
    with servers.server_behind_nginx("proxy", PORT, nginx_edits=REALIP, workers=2) as server:
        yield server


def post(fields: dict[str, str], client: str) -> dict:
    request = urllib.request.Request(API, data=urllib.parse.urlencode(fields).encode(),
                                     headers={"X-Forwarded-For": client})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def seconds_announced(error: str) -> int:
    return int(re.fullmatch(r"Too many failed logins, try again in (\d+) seconds", error).group(1))


def test_the_throttle_tells_forwarded_clients_apart(proxied):
    user, password = servers.unique_name("proxied"), servers.app_password("right")
    assert post({"command": "register", "username": user, "password": password}, "203.0.113.1")["result"]
    timed = False
    for _ in range(3):
        failed = None  # when the last failure was sent
        for _ in range(12):
            sent = time.monotonic()
            answer = post({"command": "login", "username": user, "password": "wrong"}, "203.0.113.66")
            if "Too many failed logins" in answer.get("error", ""):
                break
            failed = sent
        else:
            pytest.fail(f"the guessing client was never slowed down: {answer}")
        # The guesser is held back, even with the right password, while the
        # block surely lasts: a second from the failure that set it, or what
        # the refusal announced less its rounding up (0.05 s: whole ms).
        holds = max(failed + 1 if failed is not None else 0, sent + seconds_announced(answer["error"]) - 1) - 0.05
        answer = post({"command": "login", "username": user, "password": password}, "203.0.113.66")
        if time.monotonic() < holds:
            assert "Too many failed logins" in answer.get("error", ""), answer
            timed = True
            break
        # Answered too late to tell (the block may have ended, the right password let in): again.
    # ... the real user, from another address behind the same proxy, is not.
    assert post({"command": "login", "username": user, "password": password}, "198.51.100.7")["result"]
    if not timed:
        pytest.skip("the right password never reached the server while the guesser's block surely lasted")


def test_the_status_page_stays_loopback_only(proxied):
    status = f"http://127.0.0.1:{PORT}/ireporter-status"
    with urllib.request.urlopen(status, timeout=10) as r:  # the operator, on the host
        assert r.status == 200
    request = urllib.request.Request(status, headers={"X-Forwarded-For": "203.0.113.9"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403


# deploy/nginx/ireporter-live.conf's limit per client.
LIVE_PER_CLIENT = 20


def test_the_live_stream_counts_an_ipv6_client_by_its_64(proxied):
    # Held open together: each group below counts against what came before it.
    held = []
    try:
        def subscribe_held(sources):
            accepted, refused = subscribe_all(Endpoint(API), sources, deadline=time.monotonic() + 15, forwarded=True)
            held.extend(accepted)
            assert all(b" 429 " in status for status in refused), refused[:3]
            return len(accepted)

        # One /64 whatever its addresses and however they are written (nginx
        # writes each its own way: 2001:db8:1:2::9, 2001:db8:1:2:a:b:c:d).
        one_64 = [f"2001:db8:1:2:{n:x}:5:6:7" for n in range(1, 21)]
        assert subscribe_held(one_64) == LIVE_PER_CLIENT
        assert subscribe_held(["2001:db8:1:2::9", "2001:0db8:0001:0002:ffff:0:0:1", "2001:db8:1:2:a:b:c:d"]) == 0
        assert subscribe_held(["2001:db8:1:3::1"]) == 1, "the next /64 is another client"
        # A /64 with zero groups of its own is written with `::` or without:
        # at most two keys, however many forms are tried.
        zero_64 = ([f"2001:db8:0:0:{n:x}::" for n in range(1, 21)]          # 2001:db8:0:0:1::
                   + [f"2001:db8::{n:x}:1:2:3" for n in range(1, 21)]       # 2001:db8::1:1:2:3
                   + [f"2001:db8::{n:x}" for n in range(1, 21)])            # 2001:db8::1
        assert subscribe_held(zero_64) == 2 * LIVE_PER_CLIENT
        # IPv4 as before, an IPv4-mapped address as its IPv4 address (not all
        # of them one `::` network).
        assert subscribe_held(["::ffff:203.0.113.7"] * 10 + ["203.0.113.7"] * 11) == LIVE_PER_CLIENT
        assert subscribe_held(["::ffff:203.0.113.8", "203.0.113.9"]) == 2
    finally:
        for s in held:
            s.close()


def test_the_front_counts_live_clients_as_the_app_hosts_do():
    def rules(name: str) -> list[str]:
        """The lines of the file's `map $remote_addr` block, its comments left out."""
        text = (servers.REPO / "deploy" / "nginx" / name).read_text()
        block = text.split("map $remote_addr ", 1)[1].split("}", 1)[0]
        return [line.split() for line in block.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]

    assert rules("ireporter-front.conf") == rules("ireporter-live-limits.conf")
