"""The commands beyond the 2012 app's five (issue 15), as flows through a
real web server: two phones, a photo, votes, a comment with markup, the
stream with its extras, a refused and an accepted delete; the same over
JSON-RPC; cross-origin refusal. Used through nginx (test_reactions.py) and
Apache (test_deploy_apache.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from appclient import AppClient, Endpoint
from servers import app_password, check_json, photo, unique_name


def reactions_flow(base_url: str, upload_dir: Optional[Path] = None, tag: str = "react",
                   logs: Callable[[], str] = lambda: "") -> None:
    try:
        _reactions_flow(base_url, upload_dir, tag)
    except (AssertionError, OSError, Exception) as e:  # noqa: B014 - add the logs to any failure
        raise AssertionError(f"{type(e).__name__}: {e}\n{logs()}") from e


def _reactions_flow(base_url: str, upload_dir: Optional[Path], tag: str) -> None:
    owner_name, fan_name = unique_name(tag), unique_name(tag)
    with AppClient(Endpoint(base_url), timeout=30) as owner, AppClient(Endpoint(base_url), timeout=30) as fan:
        check_json(owner.register(owner_name, app_password("o")), "register owner")
        check_json(fan.register(fan_name, app_password("f")), "register fan")
        assert owner.upload(photo(), "to like").body == b'{"successful":1}'
        mine = [row for row in check_json(owner.call({"command": "stream", "extras": "created,width,height"}),
                                          "stream")["result"] if row["username"] == owner_name]
        assert len(mine) == 1 and mine[0]["width"] and mine[0]["created"], mine
        id_photo = mine[0]["IdPhoto"]

        voted = check_json(fan.call({"command": "like", "IdPhoto": id_photo}), "like")["result"][0]
        assert (voted["likes"], voted["myvote"]) == ("1", "1"), voted
        markup = '<img src=x onerror="alert(1)">'
        r = fan.call({"command": "comment", "IdPhoto": id_photo, "text": markup})
        assert r.header("Content-Type") == "application/json" and b"<\\/" not in r.body, r.body
        assert check_json(r, "comment")["result"][0]["text"] == markup
        listed = check_json(fan.call({"command": "comments", "IdPhoto": id_photo}), "comments")["result"]
        assert [c["text"] for c in listed] == [markup]

        page = check_json(fan.call({"command": "stream", "IdPhoto": id_photo, "extras": "likes,comments,myvote"}),
                          "stream extras")["result"]
        assert [(p["likes"], p["comments"], p["myvote"]) for p in page] == [("1", "1", "1")], page
        assert check_json(fan.call({"command": "stream", "since": id_photo}), "since")["result"] == []

        refused = fan.call({"command": "delete", "IdPhoto": id_photo})
        assert refused.json() == {"error": "You can only delete your own photos"}, refused.body
        assert owner.call({"command": "delete", "IdPhoto": id_photo}).body == b'{"successful":1}'
        assert check_json(fan.call({"command": "stream", "IdPhoto": id_photo}), "gone")["result"] == []
        if upload_dir is not None:
            assert not (upload_dir / f"{id_photo}.jpg").exists() and not (upload_dir / f"{id_photo}-thumb.jpg").exists()


def rpc(client: AppClient, payload, content_type: str = "application/json", headers=()):
    """POST /iReporter/rpc; the answer and its parsed JSON (None for an empty body)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    r = client.request("POST", client.ep.path("rpc"), body, content_type, extra_headers=headers)
    assert r.status in (200, 204), f"rpc: HTTP {r.status} {r.body[:300]!r}"
    if r.status == 204:
        assert r.body == b"", r.body
        return r, None
    assert r.header("Content-Type") == "application/json", r.headers
    return r, json.loads(r.body)


def jsonrpc_flow(base_url: str, logs: Callable[[], str] = lambda: "") -> None:
    """JSON-RPC through a real web server: a login and a vote in one batch
    (the cookie set), a notification (204), the standard errors, never an
    HTTP error or a body that is not JSON."""
    try:
        _jsonrpc_flow(base_url)
    except (AssertionError, OSError, Exception) as e:  # noqa: B014 - add the logs to any failure
        raise AssertionError(f"{type(e).__name__}: {e}\n{logs()}") from e


def _jsonrpc_flow(base_url: str) -> None:
    name = unique_name("rpc")
    with AppClient(Endpoint(base_url), timeout=30) as phone:
        check_json(phone.register(name, app_password("r")), "register")
        assert phone.upload(photo(), "rpc photo").body == b'{"successful":1}'
        rows = check_json(phone.stream(), "stream")["result"]
        id_photo = int(next(row["IdPhoto"] for row in rows if row["username"] == name))
        phone.jar.clear()
        r, answer = rpc(phone, [
            {"jsonrpc": "2.0", "method": "login", "params": {"username": name, "password": app_password("r")}, "id": 1},
            {"jsonrpc": "2.0", "method": "like", "params": {"IdPhoto": id_photo}, "id": "two"},
            {"jsonrpc": "2.0", "method": "stream", "params": {"IdPhoto": id_photo, "extras": "likes,myvote"}, "id": 3},
        ])
        assert [a["id"] for a in answer] == [1, "two", 3], answer
        assert answer[1]["result"][0]["likes"] == "1" and answer[2]["result"][0]["myvote"] == "1", answer
        assert any(c.startswith("PHPSESSID=") for c in r.set_cookies), r.headers
        _, nothing = rpc(phone, {"jsonrpc": "2.0", "method": "unvote", "params": {"IdPhoto": id_photo}})
        assert nothing is None
        _, answer = rpc(phone, {"jsonrpc": "2.0", "method": "stream", "params": {"IdPhoto": id_photo, "extras": "likes"},
                                "id": None})
        assert answer["result"][0]["likes"] == "0" and answer["id"] is None, answer
        _, document = rpc(phone, {"jsonrpc": "2.0", "method": "rpc.discover", "id": 1})
        # Every command but upload and preview (they take a file: multipart forms only) and export (it
        # answers one), search included;
        # named rather than counted, so that a branch adding commands does not break it.
        methods = {method["name"] for method in document["result"]["methods"]}
        assert document["result"]["openrpc"].startswith("1.") and not methods & {"upload", "preview", "export"}, methods
        assert {"stream", "comment", "comments", "like", "unvote", "delete", "search", "feed", "follow"} <= methods, methods
        for body, content_type, code in ((b'{"jsonrpc":"2.0",', "application/json", -32700),
                                         (b'{"jsonrpc":"2.0","method":"stream","id":1}', "text/plain", -32600),
                                         (b"[" + b'{"jsonrpc":"2.0","method":"effects","id":1},' * 20 + b"1]",
                                          "application/json", -32600),
                                         (b"[" * 5000 + b"]" * 5000, "application/json", -32700),
                                         (b"\xff\xfe", "application/json", -32700)):
            _, answer = rpc(phone, body, content_type)
            assert answer["error"]["code"] == code and answer["id"] is None, (body[:40], answer)
        r = phone.get("rpc")
        assert r.status == 200 and json.loads(r.body)["error"]["code"] == -32600, r.body


def cross_origin_flow(base_url: str) -> None:
    """A browser on another web site cannot change anything with a logged-in
    cookie; reading is allowed, and the app (which sends neither header)
    is not affected."""
    name = unique_name("xo")
    with AppClient(Endpoint(base_url), timeout=30) as phone:
        check_json(phone.register(name, app_password("x")), "register")
        assert phone.upload(photo(), "mine").body == b'{"successful":1}'
        rows = check_json(phone.stream(), "stream")["result"]
        id_photo = next(row["IdPhoto"] for row in rows if row["username"] == name)
        from appclient import multipart_body, multipart_content_type
        delete = multipart_body([("command", "delete"), ("IdPhoto", id_photo)])
        host = phone.ep.host_header
        for headers in ([("Origin", "http://evil.example")], [("Sec-Fetch-Site", "cross-site")],
                        [("Origin", "null")], [("Origin", f"http://{host}"), ("Sec-Fetch-Site", "same-site")]):
            r = phone.request("POST", phone.ep.path(), delete, multipart_content_type(), extra_headers=headers)
            assert r.json() == {"error": "Requests from other web sites are not allowed"}, (headers, r.body)
            _, answer = rpc(phone, {"jsonrpc": "2.0", "method": "delete", "params": {"IdPhoto": id_photo}, "id": 1},
                            headers=headers)
            assert answer["error"]["code"] == -32003, (headers, answer)
        r = phone.request("POST", phone.ep.path(), multipart_body([("command", "stream"), ("IdPhoto", id_photo)]),
                          multipart_content_type(), extra_headers=[("Origin", "http://evil.example")])
        assert check_json(r, "cross-origin stream")["result"][0]["IdPhoto"] == id_photo
        r = phone.request("POST", phone.ep.path(), delete, multipart_content_type(),
                          extra_headers=[("Origin", f"http://{host}"), ("Sec-Fetch-Site", "same-origin")])
        assert r.body == b'{"successful":1}', r.body
