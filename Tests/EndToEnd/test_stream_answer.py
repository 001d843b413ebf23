"""Issue 30: the test stack's nginx answers the 2012 app's plain `stream`
from the file the server keeps (`stream_answer_file`,
deploy/nginx/ireporter-stream-answer.conf and .lua), as an operator sets it
up: without a FastCGI round trip, so it answers while every process of the
server is stopped (SIGSTOP); byte for byte the server's answer; and never
older than the last change (the server removes the file and counts the
removal in `stream-answer.epoch` before it answers an upload or a
deletion; each nginx worker answers from its copy of the file only while
that count stays). Anything else than the plain stream, and a file past
its end, goes to the server."""
from __future__ import annotations

import json
import os
import sys
import time

import pytest

import servers
from appclient import AppClient, Response, multipart_content_type
from e2e import OURS, SUCCESS, app_password
from servers import check_json, photo, unique_name

pytestmark = pytest.mark.skipif(not OURS, reason="the PHP original has no stream answer file")

# The headers of an answer of index.php that the app and its HTTP library may look at.
SAME_HEADERS = ("Content-Type", "Expires", "Cache-Control", "Pragma")
# How long a block of requests with the server stopped may take: the server's
# file must end no sooner (it ends stream_cache_ms, 1 s, after it is made).
STOPPED_FOR_MS = 800


@pytest.fixture
def answer_file(env):
    path = env.run_dir / "ireporter" / "stream-answer"
    assert path.parent.is_dir(), "the stack's server folder"
    return path


def server_stopped(env):
    """Every process of the stack's server stopped (SIGSTOP), resumed after."""
    supervisor = int((env.run_dir / "ireporter" / "ireporter.pid").read_text())
    return servers.stopped([supervisor, *servers.children_all(supervisor)])


def urlencoded_stream(client: AppClient, query: str = "") -> Response:
    return client.request("POST", client.ep.path(query), b"command=stream", "application/x-www-form-urlencoded", None)


def kept_answer(client: AppClient, answer_file, unlike: bytes | None = None, ahead_ms: int | None = None) -> bytes:
    """The plain stream once the server has kept it in the file (the first
    stream after a change is the server's, which keeps it; a worker whose
    own copy is still current keeps none until it ends, within a second).
    With `ahead_ms`: once the file (its first line says when it ends) ends
    at least that far from now, for a server about to be stopped: its
    refresher makes the file again only ~125 ms before its end, and a
    stream after the end goes to the stopped server and hangs."""
    def kept():
        answer = client.stream().body
        try:
            content = answer_file.read_bytes()
        except FileNotFoundError:
            return None
        if content == unlike:
            return None
        if ahead_ms is not None and int(content.split(b"\n", 1)[0]) - time.time() * 1000 < ahead_ms:
            return None
        return answer
    if ahead_ms is None:
        return servers.wait_for(kept, 5, interval=0.1, what="the stream answer file")
    # A file lasts stream_cache_ms (1 s): far enough ahead only just after it is made, about once a second.
    return servers.wait_for(kept, 15, interval=0.02, what=f"a stream answer file ending {ahead_ms} ms ahead")


def count_a_removal(answer_file):
    """What the server does at every removal of the answer: the count in
    `<file>.epoch` moves on (in place: nginx maps the file, and a shorter
    one, even for a moment, would kill the worker that reads it)."""
    fd = os.open(answer_file.with_name("stream-answer.epoch"), os.O_RDWR)
    try:
        count = int.from_bytes(os.pread(fd, 8, 0), sys.byteorder)
        assert os.pwrite(fd, (count + 1).to_bytes(8, sys.byteorder), 0) == 8
    finally:
        os.close(fd)


def test_nginx_answers_the_plain_stream_while_the_server_is_stopped(env, endpoint, answer_file):
    with AppClient(endpoint, timeout=5) as app, AppClient(endpoint, timeout=5) as form:
        # The stopped server cannot make the file again: it must outlast the block.
        expected = kept_answer(app, answer_file, ahead_ms=STOPPED_FOR_MS)
        assert answer_file.read_bytes().split(b"\n", 1)[1] == expected
        with server_stopped(env):
            # The app's own shape (multipart, AFNetworking's boundary), and a urlencoded form.
            assert app.stream().body == expected
            assert urlencoded_stream(form).body == expected
            # A session cookie changes nothing in the plain stream's answer.
            app.jar.update(["PHPSESSID=abcdefghijklmnopqrstuv0123456789; path=/"])
            assert app.stream().body == expected


def test_the_kept_answer_is_the_servers_answer_byte_for_byte(env, endpoint, answer_file):
    with AppClient(endpoint, timeout=5) as nginx_side, AppClient(endpoint, timeout=30) as server_side:
        kept_answer(nginx_side, answer_file, ahead_ms=STOPPED_FOR_MS)  # the stopped server cannot make it again
        with server_stopped(env):
            from_nginx = urlencoded_stream(nginx_side)
        from_server = urlencoded_stream(server_side, "?asked-of-the-server")  # a query string: the server's
        assert from_nginx.status_line.split(" ", 2)[1] == from_server.status_line.split(" ", 2)[1] == "200"
        assert from_nginx.body == from_server.body
        for name in SAME_HEADERS:
            assert from_nginx.header(name) == from_server.header(name), name
        assert from_nginx.header("Content-Length") == str(len(from_nginx.body))
        assert len(from_nginx.header("X-Request-Id") or "") == 32, "nginx's request id, as the server echoes it"
        assert from_nginx.set_cookies == [], "no session for a stream, as from the server"


def test_a_worker_answers_from_its_copy_until_a_removal_is_counted(env, endpoint, answer_file):
    ends = f"{int(time.time() * 1000) + 60_000}\n".encode()
    first, second = b'{"result":[{"title":"first"}]}', b'{"result":[{"title":"second"}]}'
    with AppClient(endpoint, timeout=5) as app, server_stopped(env):
        try:
            # Answers put in place behind the server's back (its refresher stopped), each far from its end.
            answer_file.write_bytes(ends + first)
            count_a_removal(answer_file)  # no worker keeps what it read before
            assert app.stream().body == first
            answer_file.write_bytes(ends + second)
            assert app.stream().body == first, "this connection's worker answers from its copy"
            count_a_removal(answer_file)
            assert app.stream().body == second, "a removal counted: the file read again"
        finally:
            answer_file.unlink(missing_ok=True)
            count_a_removal(answer_file)


def test_an_upload_or_a_deletion_is_in_the_very_next_stream(endpoint, answer_file):
    # Its own address: registrations from one address are throttled (golden's is 127.0.0.1).
    with AppClient(endpoint, timeout=30, source="127.0.30.1") as owner, AppClient(endpoint, timeout=30) as viewer:
        name = unique_name("answer")
        check_json(owner.register(name, app_password("s")), "register")
        kept = kept_answer(viewer, answer_file)
        assert viewer.stream().body == kept, "the viewer's nginx worker keeps its copy of the file"
        assert owner.upload(photo(), f"{name} new").body == SUCCESS
        assert not answer_file.exists(), "removed before the upload was answered"
        newest = viewer.stream().json()["result"][0]
        assert (newest["title"], newest["username"]) == (f"{name} new", name)
        # Made again by that stream (the server's), then answered from it.
        assert json.loads(kept_answer(viewer, answer_file))["result"][0] == newest
        assert owner.call({"command": "delete", "IdPhoto": newest["IdPhoto"]}).body == SUCCESS
        assert all(photo_["IdPhoto"] != newest["IdPhoto"] for photo_ in viewer.stream().json()["result"])


def test_other_calls_and_an_ended_answer_go_to_the_server(env, endpoint, answer_file):
    with AppClient(endpoint, timeout=30) as app:
        expected = kept_answer(app, answer_file)
        # What nginx must not answer from the file, each a different question to the server.
        assert app.call({"command": "stream", "count": "1"}).json()["result"] == app.stream().json()["result"][:1]
        assert app.call({"command": "streamer"}).body == b"", "an unknown command: the server's empty answer"
        multipart_extra = app.request("POST", app.ep.path(), b"--B\r\nContent-Disposition: form-data; name=\"command\""
                                      b"\r\n\r\nstream\r\n--B\r\nContent-Disposition: form-data; name=\"IdPhoto\"\r\n\r\n"
                                      b"0\r\n--B--\r\n", multipart_content_type("B"), None)
        assert multipart_extra.body == expected, "IdPhoto 0 is the whole stream, from the server"
        # A file past its end (a stopped server's, say) is not served: the server answers, and keeps a new one.
        ended = f"{int(time.time() * 1000) - 1}\n".encode() + b'{"result":"stale"}'
        answer_file.write_bytes(ended)
        count_a_removal(answer_file)  # the nginx workers' copies go (the server counts its own removals)
        assert app.stream().body == expected
        assert kept_answer(app, answer_file, unlike=ended) == expected
