"""`upload_deadline` behind nginx (deploy/nginx/ireporter.conf sends
REQUEST_START, nginx's `$msec` when it sent the request): an upload that
waited for a free worker in the socket's backlog counts that wait, as nginx's
60 s and the phone's own timeout count it. Our server with one worker and
a deadline of 1 s; the photos table locked by another session holds the
worker with one upload while a second waits for it.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_upload_deadline.py
"""
from __future__ import annotations

import socket
import threading
import time

import pytest

import servers
from appclient import AppClient, Endpoint, FilePart, multipart_body, multipart_content_type, read_response

PORT = servers.http_port(1)
API = f"http://127.0.0.1:{PORT}/iReporter/"
TOO_LATE = {"error": "The server took too long to store the photo and did not keep it, please send it again"}


@pytest.fixture(scope="module")
def site():
    with servers.server_behind_nginx("deadline", PORT, workers=1, upload_deadline=1) as server:
        yield server


def test_an_upload_that_waited_for_a_worker_counts_the_wait(site):
    user, password, _ = servers.prepare_load_user(API, "backlog")
    with AppClient(Endpoint(API)) as phone:
        assert phone.login(user, password).status == 200
        cookie = f"PHPSESSID={phone.session_id}"
    titles = {name: servers.unique_name(name) for name in ("holding", "queued", "in time")}
    answers: dict = {}

    def upload(name: str):
        with AppClient(Endpoint(API), timeout=60) as phone:
            answers[name] = phone.call({"command": "upload", "title": titles[name]}, file=servers.photo(), cookie=cookie)

    holding = threading.Thread(target=upload, args=("holding",), daemon=True)
    with servers.table_locked(site.db, "photos"):
        holding.start()
        servers.wait_for(lambda: servers.waiting_for_table(site.db, "INSERT INTO photos") == 1, 15,
                         what="the only worker's upload waiting for the locked table")
        # The second upload, whole in nginx's hands when sendall returns (it
        # sends it on at once), then waits for the worker: 1.5 s, past its 1 s
        # before the server reads it.
        body = multipart_body([("command", "upload"), ("title", titles["queued"])], [FilePart(servers.photo())])
        queued = socket.create_connection(("127.0.0.1", PORT), timeout=60)
        queued.sendall((f"POST /iReporter/ HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\n"
                        f"Content-Type: {multipart_content_type()}\r\nContent-Length: {len(body)}\r\n"
                        f"Cookie: {cookie}\r\nConnection: close\r\n\r\n").encode() + body)
        time.sleep(1.5)
    holding.join(30)
    with queued:
        answers["queued"], _ = read_response(queued, "POST")
    assert answers["holding"].json() == TOO_LATE, answers["holding"]
    assert answers["queued"].json() == TOO_LATE, answers["queued"]
    log = servers.tail(site.log_path, 50)
    assert "upload of user" in log and "past upload_deadline" in log
    assert site.db.sql(f"SELECT COUNT(*) FROM photos WHERE title IN ('{titles['holding']}', '{titles['queued']}')").strip() == "0"
    upload("in time")
    assert answers["in time"].json() == {"successful": 1}
