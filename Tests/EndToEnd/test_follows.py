"""The follow graph, the home feed and notifications (issue 28) through
nginx: the form API and JSON-RPC, and each person's notifications live on a
channel of their own (deploy/nginx/ireporter-live.conf), which no one else
can name, subscribe to or publish on."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from appclient import AppClient
from e2e import OURS
from reactions import rpc
from servers import app_password, check_json, photo, unique_name
from subscriber import Subscriber

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no follows")]


def person(client: AppClient, prefix: str) -> tuple[str, str]:
    """A new account, signed in on `client`: its IdUser and name."""
    name = unique_name(prefix)
    user = check_json(client.register(name, app_password("f")), "register")["result"][0]
    return user["IdUser"], name


def rows(response) -> list[dict]:
    return check_json(response, "answer")["result"]


def test_follow_feed_and_notifications_over_the_form_api(client):
    alice, bob = client(), client()
    alice_id, alice_name = person(alice, "alice")
    bob_id, bob_name = person(bob, "bob")
    assert alice.upload(photo(), "hers").body == b'{"successful":1}'
    assert bob.upload(photo(), "his").body == b'{"successful":1}'
    hers, his = (next(p["IdPhoto"] for p in rows(alice.stream()) if p["title"] == t) for t in ("hers", "his"))

    assert [p["IdPhoto"] for p in rows(bob.call({"command": "feed"}))] == [his], "his own only"
    assert rows(bob.call({"command": "follow", "IdUser": alice_id})) == [
        {"IdUser": alice_id, "username": alice_name, "photos": "1", "followers": "1", "following": "0", "followed": "1"}]
    feed = rows(bob.call({"command": "feed", "extras": "likes,myvote"}))
    assert [(p["IdPhoto"], p["likes"]) for p in feed] == [(his, "0"), (hers, "0")]
    assert {k: v for k, v in feed[1].items() if k not in ("likes", "myvote")} == \
        rows(bob.call({"command": "stream", "IdPhoto": hers}))[0], "the stream's row shape"
    assert [p["IdPhoto"] for p in rows(bob.call({"command": "feed", "before": his}))] == [hers]
    assert rows(alice.call({"command": "followers", "IdUser": alice_id}))[0]["username"] == bob_name
    assert [r["IdUser"] for r in rows(alice.call({"command": "following", "IdUser": bob_id}))] == [alice_id]
    assert bob.call({"command": "follow", "IdUser": bob_id}).json() == {"error": "You cannot follow yourself"}
    assert bob.call({"command": "follow", "IdUser": "999999"}).json() == {"error": "No such account"}

    check_json(bob.call({"command": "like", "IdPhoto": hers}), "like")
    check_json(bob.call({"command": "comment", "IdPhoto": hers, "text": "lovely"}), "comment")
    check_json(alice.call({"command": "like", "IdPhoto": hers}), "her own like")
    told = rows(alice.call({"command": "notifications"}))
    assert [(n["type"], n["IdUser"], n["username"], n["IdPhoto"], n["text"]) for n in told] == [
        ("mention", bob_id, bob_name, hers, "lovely"), ("favourite", bob_id, bob_name, hers, None),
        ("follow", bob_id, bob_name, None, None)]
    assert rows(bob.call({"command": "notifications"})) == [], "nobody is told of their own doing"
    assert [n["type"] for n in rows(alice.call({"command": "notifications", "types": "follow"}))] == ["follow"]

    check_json(bob.call({"command": "unvote", "IdPhoto": hers}), "unvote")
    check_json(bob.call({"command": "unfollow", "IdUser": alice_id}), "unfollow")
    assert [n["type"] for n in rows(alice.call({"command": "notifications"}))] == ["mention"]
    assert [p["IdPhoto"] for p in rows(bob.call({"command": "feed"}))] == [his], "unfollowed"
    mention = told[0]["id"]
    assert bob.call({"command": "dismiss", "id": mention}).json() == {"error": "No such notification"}, "not his"
    assert alice.call({"command": "dismiss", "id": mention}).body == b'{"successful":1}'
    assert rows(alice.call({"command": "notifications"})) == []
    alice.logout()
    assert alice.call({"command": "feed"}).json() == {"error": "Authorization required"}


def test_the_same_over_json_rpc(client):
    alice, bob = client(), client()
    alice_id, _ = person(alice, "rpca")
    _, bob_name = person(bob, "rpcb")

    def call(who, method, **params):
        _, answer = rpc(who, {"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
        return answer

    assert call(bob, "follow", IdUser=int(alice_id))["result"][0]["followed"] == "1"
    assert call(bob, "person", IdUser=int(alice_id))["result"][0]["followers"] == "1"
    assert call(bob, "follow", IdUser=999999)["error"]["code"] == -32002
    assert call(bob, "follow", IdUser="x")["error"]["code"] == -32602
    assert call(alice, "follow", IdUser=int(alice_id))["error"] == {"code": -32000, "message": "You cannot follow yourself"}
    assert alice.upload(photo(), "rpc photo").body == b'{"successful":1}'
    assert [p["title"] for p in call(bob, "feed", count=1)["result"]] == ["rpc photo"]
    told = call(alice, "notifications")["result"]
    assert [(n["type"], n["username"]) for n in told] == [("follow", bob_name)]
    assert call(alice, "dismiss", all="1")["result"] == {"successful": 1}
    assert call(alice, "notifications")["result"] == []
    assert call(alice, "dismiss", id=1)["error"]["code"] == -32002
    assert call(client(), "feed")["error"]["code"] == -32001


def channel(client: AppClient) -> str:
    return rows(client.call({"command": "notification_channel"}))[0]["channel"]


def test_live_notifications_reach_their_recipient_alone(client, endpoint, base_url):
    """The channel's name is the permission: each person is told their own,
    another's cannot be derived (an HMAC under the server's key), and only
    the server publishes on it."""
    alice, bob, carol = client(), client(), client()
    alice_id, _ = person(alice, "livea")
    bob_id, bob_name = person(bob, "liveb")
    carol_id, carol_name = person(carol, "livec")
    alices, carols = channel(alice), channel(carol)
    assert alices != carols and alices.startswith("/iReporter/live/notifications-"), (alices, carols)
    assert channel(alice) == alices, "the same every time"
    assert client().call({"command": "notification_channel"}).json() == {"error": "Authorization required"}

    to_alice = Subscriber(endpoint, path=alices, source="127.0.6.1")
    to_carol = Subscriber(endpoint, path=carols, source="127.0.6.2")
    try:
        started = time.monotonic()
        check_json(bob.call({"command": "follow", "IdUser": alice_id}), "follow alice")
        check_json(alice.call({"command": "follow", "IdUser": carol_id}), "follow carol")
        got = to_alice.next_row(started + 5)
        assert (got["type"], got["IdUser"], got["username"]) == ("follow", bob_id, bob_name), got
        assert got == rows(alice.call({"command": "notifications"}))[0], "the message is the row `notifications` shows"
        # Carol's first message is her own: alice's was never sent her way.
        got = to_carol.next_row(started + 5)
        assert (got["type"], got["IdUser"]) == ("follow", alice_id), got
        assert time.monotonic() - started < 5
    finally:
        to_alice.close()
        to_carol.close()

    # A name not of that form is no channel at all; the publisher takes only the server's key.
    origin = base_url.split("/iReporter/")[0]
    with pytest.raises(urllib.error.HTTPError) as refused:
        request = urllib.request.Request(origin + "/ireporter-publish/" + alices.rsplit("/", 1)[1],
                                         data=json.dumps({"result": [{"type": "follow"}]}).encode(),
                                         headers={"Content-Type": "application/json", "X-IReporter-Publish-Key": "guess"})
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    with AppClient(endpoint) as stranger:
        answer = stranger.get(path="/iReporter/live/notifications-" + "0" * 31)
        assert b"text/event-stream" not in (answer.header("Content-Type") or "").encode(), answer
