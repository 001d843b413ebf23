"""Behind a TLS terminator or load balancer on the same host, every client
arrives from 127.0.0.1. deploy/nginx/ireporter.conf's realip lines, enabled
as its comment says, give the server the client's own address again:

  - the login throttle tells clients apart (one blocked, another not);
  - the loopback-only status page stays closed to a forwarded client.

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
