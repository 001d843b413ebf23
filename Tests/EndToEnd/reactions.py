"""The commands beyond the 2012 app's five (issue 15), as one flow through
a real web server: two phones, a photo, votes, a comment with markup, the
stream with its cursors and extras, a refused and an accepted delete. Used
through nginx (test_reactions.py) and Apache (test_deploy_apache.py)."""
from __future__ import annotations

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
