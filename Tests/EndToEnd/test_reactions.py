"""The commands of issue 15 through nginx (the test stack): the new form
commands, JSON-RPC at /iReporter/rpc, cross-origin refusal, effects; a
vote read back through every worker of a server whose streams are cached."""
from __future__ import annotations

import json
import urllib.request
from xml.etree import ElementTree

import pytest

import servers
from appclient import AppClient, Endpoint, jpeg_size
from e2e import OURS
from reactions import cross_origin_flow, jsonrpc_flow, reactions_flow, rpc
from servers import app_password, check_json, photo, unique_name

CACHED_PORT = servers.http_port(1)

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no such commands")]


def test_reactions_through_nginx(base_url, upload_dir):
    reactions_flow(base_url, upload_dir, "nginx")


def test_jsonrpc_through_nginx(base_url):
    jsonrpc_flow(base_url)


def test_cross_origin_state_changes_are_refused(base_url):
    cross_origin_flow(base_url)


def test_line_breaks_in_comments_and_invisible_text_refused(client, images, base_url):
    """Issue 24: a comment keeps its line breaks (CR LF sent, LF stored),
    escaped in every answer: the form API's and JSON-RPC's JSON, Flickr's XML
    and JSON. Issue 26: a Braille blank is no name, and blank or invisible
    text is refused with the same JSON error shape, over both APIs."""
    phone = client()
    name = unique_name("lines")
    check_json(phone.register(name, app_password("l")), "register")
    assert phone.upload(images.photo, "lines").body == b'{"successful":1}'
    id_photo = next(row["IdPhoto"] for row in check_json(phone.stream(), "stream")["result"] if row["username"] == name)

    r = phone.call({"command": "comment", "IdPhoto": id_photo, "text": "first line\r\nsecond line"})
    assert b'"text":"first line\\nsecond line"' in r.body, r.body
    _, answer = rpc(phone, {"jsonrpc": "2.0", "method": "comment", "params": {"IdPhoto": id_photo, "text": "one\ntwo"},
                            "id": 1})
    assert answer["result"][0]["text"] == "one\ntwo", answer
    listed = check_json(phone.call({"command": "comments", "IdPhoto": id_photo}), "comments")["result"]
    assert [c["text"] for c in listed] == ["one\ntwo", "first line\nsecond line"]

    rest = base_url + "services/rest/?api_key=k&method=flickr.photos.comments.getList&photo_id=" + str(id_photo)
    xml = urllib.request.urlopen(rest, timeout=10).read()
    assert b">first line&#10;second line<" in xml, xml
    assert [c.text for c in ElementTree.fromstring(xml).find("comments")] == ["first line\nsecond line", "one\ntwo"]
    flickr_json = json.loads(urllib.request.urlopen(rest + "&format=json&nojsoncallback=1", timeout=10).read())
    assert [c["_content"] for c in flickr_json["comments"]["comment"]] == ["first line\nsecond line", "one\ntwo"]

    for text, error in (("   ", "Comments cannot be blank"), ("\u200b", "Comments cannot contain invisible characters"),
                        ("a\u2060b", "Comments cannot contain invisible characters"),
                        ("x\n" * 20 + "x", "Comments are limited to 20 lines")):
        assert phone.call({"command": "comment", "IdPhoto": id_photo, "text": text}).json() == {"error": error}, text
        _, answer = rpc(phone, {"jsonrpc": "2.0", "method": "comment", "params": {"IdPhoto": id_photo, "text": text},
                                "id": 2})
        assert answer["error"]["code"] == -32000 and answer["error"]["message"] == error, answer
    assert phone.upload(images.photo, "\ufeff").json() == {"error": "Titles cannot contain invisible characters"}

    for braille in ("\u2800", name + "\u2800"):
        refused = client().register(braille, app_password("b"))
        assert refused.json() == {"error": "Usernames cannot contain control or invisible characters"}, refused.body
        _, answer = rpc(client(), {"jsonrpc": "2.0", "method": "register",
                                   "params": {"username": braille, "password": app_password("b")}, "id": 3})
        assert answer["error"]["message"] == "Usernames cannot contain control or invisible characters", answer


def test_an_effect_is_rendered_into_the_stored_photo_and_previewed(client, images, upload_dir):
    phone = client()
    check_json(phone.register(unique_name("fx"), app_password("fx")), "register")
    effects = [e["effect"] for e in check_json(phone.call({"command": "effects"}), "effects")["result"]]
    assert "sepia" in effects and len(effects) >= 8, effects
    r = phone.call({"command": "upload", "title": "mono", "effect": "mono"}, file=images.photo)
    assert r.body == b'{"successful":1}', r.body
    [row] = [p for p in check_json(phone.call({"command": "stream", "count": "1", "extras": "width,height"}),
                                   "stream")["result"]]
    stored = phone.get("upload/%s.jpg" % row["IdPhoto"]).body
    assert (int(row["width"]), int(row["height"])) == jpeg_size(stored) == jpeg_size(images.photo)
    w, h, rgb = images.rgb_pixels(stored)
    assert max(max(rgb[i:i + 3]) - min(rgb[i:i + 3]) for i in range(0, len(rgb), 3 * 97)) <= 6, "not gray"
    r = phone.call({"command": "preview", "effect": "sepia"}, file=images.photo)
    assert r.status == 200 and r.header("Content-Type") == "image/jpeg" and jpeg_size(r.body), r.headers
    r = phone.call({"command": "upload", "title": "x", "effect": "oilpaint"}, file=images.photo)
    assert r.json() == {"error": "Unknown effect: the effects command lists them"}, r.body


@pytest.fixture(scope="module")
def cached_streams():
    """A server of 3 workers behind nginx whose cached streams only the
    installation's stream generation renews (stream_cache_ms: a minute)."""
    with servers.server_behind_nginx("reactions-cached", CACHED_PORT, workers=3, stream_cache_ms=60000):
        yield f"http://127.0.0.1:{CACHED_PORT}/iReporter/"


def test_a_vote_is_in_the_voters_next_stream_on_every_worker(cached_streams):
    with AppClient(Endpoint(cached_streams), timeout=30) as owner, AppClient(Endpoint(cached_streams), timeout=30) as fan:
        check_json(owner.register(unique_name("cached"), app_password("o")), "register owner")
        check_json(fan.register(unique_name("cached"), app_password("f")), "register fan")
        assert owner.upload(photo(), "cached").body == b'{"successful":1}'

        def newest() -> tuple[str, str]:
            row = check_json(fan.call({"command": "stream", "extras": "likes,myvote"}), "stream")["result"][0]
            return row["likes"], row["myvote"]

        # Enough requests that every worker keeps its copy (and the fan's votes on it).
        assert [newest() for _ in range(12)] == [("0", "0")] * 12
        id_photo = check_json(fan.call({"command": "stream", "count": "1"}), "newest")["result"][0]["IdPhoto"]
        check_json(fan.call({"command": "like", "IdPhoto": id_photo}), "like")
        assert [newest() for _ in range(12)] == [("1", "1")] * 12, "the like, at once, whichever worker answers"
        check_json(fan.call({"command": "unvote", "IdPhoto": id_photo}), "unvote")
        assert [newest() for _ in range(12)] == [("0", "0")] * 12
