"""The access log of the test stack (scripts/stack.sh sets `access_log`),
read as an operator reads it after a complaint: each line says how the
request ended (`outcome=ok`, or the failure's name), which JSON-RPC or
Flickr method it called (`call=`), and the id nginx gave the request
(`request_id=`, passed by deploy/nginx/ireporter.conf as REQUEST_ID), the
same the client got back as `X-Request-Id`. Loopback only.
"""
from __future__ import annotations

import os
import re

import pytest

import servers
from appclient import AppClient
from e2e import OURS
from reactions import rpc

pytestmark = pytest.mark.skipif(not OURS, reason="the PHP original has no access log of its own")


@pytest.fixture
def access_line(env):
    """The access line of a request, found by the id the answer carried."""
    log = env.run_dir / "access.log"

    def find(response) -> dict[str, str]:
        request_id = response.header("X-Request-Id")
        assert request_id and re.fullmatch(r"[0-9a-f]{32}", request_id), response.headers
        line = servers.wait_for(lambda: next((l for l in log.read_text().splitlines()
                                              if f" request_id={request_id} " in l), None), 5,
                                what=f"the access line of {request_id}")
        return dict(field.split("=", 1) for field in line.split(" ")[1:])
    return find


def test_a_failed_login_is_no_success_in_the_access_log(endpoint, access_line):
    with AppClient(endpoint, source="127.0.20.1") as c:
        failed = access_line(c.login("nobody-at-all", "guess"))
        assert (failed["command"], failed["outcome"], failed["call"]) == ("login", "authorization-failed", "-"), failed
        assert failed["client"] == "127.0.20.1", failed
        # A page of the stream (the plain one may be nginx's: test_stream_answer.py).
        ok = access_line(c.call({"command": "stream", "count": "5"}))
        assert (ok["command"], ok["outcome"]) == ("stream", "ok"), ok
        needs_login = access_line(c.call({"command": "comment", "IdPhoto": "1", "text": "hi"}))
        assert needs_login["outcome"] == "authorization-required", needs_login
        unknown = access_line(c.call({"command": "nosuchcommand"}))
        assert unknown["outcome"] == "unknown-command", unknown


def test_json_rpc_lines_name_the_method_and_each_call_of_a_batch(endpoint, access_line):
    with AppClient(endpoint, source="127.0.20.2") as c:
        r, _ = rpc(c, {"jsonrpc": "2.0", "method": "login", "params": {"username": "nobody", "password": "x"}, "id": 1})
        line = access_line(r)
        assert (line["command"], line["call"], line["outcome"]) == ("rpc", "login", "authorization-failed"), line
        r, _ = rpc(c, [{"jsonrpc": "2.0", "method": "stream", "params": {}, "id": 1},
                       {"jsonrpc": "2.0", "method": "no such method", "id": 2},
                       {"jsonrpc": "2.0", "method": "effects", "id": 3}])
        line = access_line(r)
        assert (line["call"], line["outcome"]) == ("stream,no%20such%20method,effects", "ok,method-not-found,ok"), line
        r, _ = rpc(c, b"{not json")
        assert access_line(r)["outcome"] == "invalid-request"


def test_flickr_lines_name_the_method(endpoint, access_line):
    with AppClient(endpoint, source="127.0.20.3") as c:
        line = access_line(c.get("services/rest/?method=flickr.test.echo&format=json&nojsoncallback=1"))
        assert (line["command"], line["call"], line["outcome"]) == ("flickr", "flickr.test.echo", "ok"), line
        line = access_line(c.get("services/rest/?method=flickr.photos.getInfo&photo_id=999999999"))
        assert (line["call"], line["outcome"]) == ("flickr.photos.getInfo", "flickr-error-1"), line


def test_every_request_gets_its_own_id(endpoint):
    with AppClient(endpoint) as c:
        ids = {c.call({"command": "stream"}).header("X-Request-Id") for _ in range(5)}
    assert len(ids) == 5 and None not in ids, ids


def test_the_server_log_says_which_photo_was_stored_and_deleted_by_whom(env, endpoint, images):
    """"My photo vanished": the server's log names each photo stored and
    deleted, with its owner (and the sweep the files it set aside)."""
    log = env.run_dir / "ireporter.log"
    with AppClient(endpoint) as c:
        user = c.register(f"logged{os.getpid()}", "pw").json()["result"][0]["IdUser"]
        assert c.upload(images.photo, "Logged").json() == {"successful": 1}
        photo = next(p["IdPhoto"] for p in c.call({"command": "stream", "IdUser": user}).json()["result"])
        servers.wait_for(lambda: f"photo {photo} of user {user} stored" in log.read_text(), 5, what="the upload's line")
        assert c.call({"command": "delete", "IdPhoto": photo}).json() == {"successful": 1}
        servers.wait_for(lambda: f"photo {photo} of user {user} deleted" in log.read_text(), 5, what="the deletion's line")
