"""Issue 29's account settings through nginx, against the real database and
folders: change_password ends the account's other sessions, export is a
real zip download (opened with Python's zipfile), delete_account leaves no
row, file or session of the account behind and nobody else's is touched."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from mastodon import Mastodon, MastodonUnauthorizedError

from conftest import reset_state
from e2e import ALICE_PASS, AUTH_FAILED, AUTH_REQUIRED, OURS, R_ALICE, SUCCESS, app_password, check_api, listing

pytestmark = [pytest.mark.skipif(not OURS, reason="account settings are ours: the 2012 original has none")]

BOB_PASS = app_password("bob's")
NEW_PASS = app_password("a new one")


@pytest.fixture
def people(env, db, client, images):
    """On a fresh database: alice (1) with photos 2 and 3, bob (2) with photo 4;
    each comments on and votes on the other's, and follows the other. Returns (alice, bob), signed in."""
    reset_state(env, db)
    alice, bob = client(), client()
    check_api(alice.register("alice", ALICE_PASS), R_ALICE, "new")
    check_api(alice.upload(images.photo, "Sunset at the pier"), SUCCESS)
    check_api(alice.upload(images.photo, "Été"), SUCCESS)
    assert bob.register("bob", BOB_PASS).status == 200
    check_api(bob.upload(images.photo, "bob's"), SUCCESS)
    for phone, command, photo, text in ((alice, "comment", "4", "alice on bob's"), (alice, "like", "4", None),
                                        (bob, "comment", "2", "bob on alice's"), (bob, "dislike", "3", None)):
        r = phone.call({"command": command, "IdPhoto": photo, **({"text": text} if text else {})})
        assert r.status == 200 and b'"error"' not in r.body, r
    for phone, whom in ((alice, "2"), (bob, "1")):
        r = phone.call({"command": "follow", "IdUser": whom})
        assert r.status == 200 and b'"error"' not in r.body, r
    return alice, bob


def test_a_new_password_ends_the_other_sessions(people, client):
    alice, bob = people
    laptop = client()
    check_api(laptop.login("alice", ALICE_PASS), R_ALICE, "new")
    r = alice.call({"command": "change_password", "password": app_password("wrong"), "new_password": NEW_PASS})
    check_api(r, b'{"error":"Wrong password"}')
    check_api(alice.call({"command": "change_password", "password": ALICE_PASS, "new_password": NEW_PASS}), SUCCESS)
    assert alice.call({"command": "export"}).header("Content-Type") == "application/zip", "the session that asked stays"
    check_api(laptop.upload(b"\xff\xd8", "x"), AUTH_REQUIRED)
    assert bob.call({"command": "export"}).header("Content-Type") == "application/zip", "bob's session stays"
    check_api(client().login("alice", ALICE_PASS), AUTH_FAILED)
    check_api(client().login("alice", NEW_PASS), R_ALICE, "new")


def test_the_export_is_a_zip_download_of_the_originals_and_a_json(people, env, images):
    alice, _ = people
    r = alice.call({"command": "export"})
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/zip", r.headers
    assert r.header("Content-Disposition") == 'attachment; filename="ireporter-1.zip"', r.headers
    assert int(r.header("Content-Length")) == len(r.body)
    archive = zipfile.ZipFile(io.BytesIO(r.body))
    assert archive.testzip() is None
    assert archive.namelist() == ["photos/3.jpg", "photos/2.jpg", "ireporter.json"]
    assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
    if env.upload_dir:
        assert archive.read("photos/2.jpg") == (env.upload_dir / "2.jpg").read_bytes(), "the file as stored"
    data = json.loads(archive.read("ireporter.json"))
    account = dict(data["account"])
    registered = int(account.pop("registered"))
    assert account == {"IdUser": "1", "username": "alice"}
    assert abs(registered - int(data["exported"])) < 600, "registered by this test, minutes before the export"
    assert [(p["IdPhoto"], p["title"], p["file"]) for p in data["photos"]] == [
        ("3", "Été", "photos/3.jpg"), ("2", "Sunset at the pier", "photos/2.jpg")]
    assert [(c["IdPhoto"], c["text"]) for c in data["comments"]] == [("4", "alice on bob's")]
    assert data["votes"] == [{"IdPhoto": "4", "vote": "1"}]
    if env.upload_dir:
        assert not [p for p in env.upload_dir.iterdir() if p.name.startswith(".spool")], "no spool file left"


def test_export_is_a_form_command_only(people):
    alice, _ = people
    r = alice.request("POST", alice.ep.path("rpc"), b'{"jsonrpc":"2.0","method":"export","id":1}', "application/json")
    assert json.loads(r.body)["error"]["code"] == -32602, r.body


def test_deleting_an_account_leaves_nothing_of_it(people, env, db, client, web_site, images):
    alice, bob = people
    # An app of alice's, through the Mastodon-compatible API: its token, and a photo it sent but never posted.
    client_id, client_secret = Mastodon.create_app("Settings E2E", scopes=["read", "write"], api_base_url=web_site.rstrip("/"))
    app = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=web_site.rstrip("/"),
                   version_check_mode="none")
    app.log_in("alice", "secret", scopes=["read", "write"], allow_http=True)
    app.media_post(images.photo, mime_type="image/jpeg", description="never posted")
    app.status_post("From alice's app", in_reply_to_id=4, idempotency_key="settings-e2e")
    assert db.count("media_attachments") == 1 and db.count("oauth_tokens") == 1 and db.count("status_idempotency") == 1
    check_api(alice.call({"command": "delete_account", "password": app_password("wrong")}), b'{"error":"Wrong password"}')
    assert db.count("photos") == 3
    r = alice.call({"command": "delete_account", "password": ALICE_PASS})
    check_api(r, SUCCESS, "deleted")
    assert db.run("SELECT IdUser, username FROM login") == [["2", "bob"]]
    assert db.run("SELECT IdPhoto FROM photos") == [["4"]]
    assert db.run("SELECT IdPhoto, IdUser FROM votes") == []
    assert db.run("SELECT IdPhoto, IdUser FROM comments") == []
    assert db.run("SELECT IdPhoto, likes, dislikes, comments FROM photo_counts") == [["4", "0", "0", "0"]]
    assert db.run("SELECT follower, followee FROM follows") == []
    assert db.run("SELECT recipient, actor FROM notifications") == []
    assert db.count("oauth_tokens") == 0 and db.count("oauth_codes") == 0 and db.count("media_attachments") == 0
    assert db.count("status_idempotency") == 0
    with pytest.raises(MastodonUnauthorizedError):
        app.account_verify_credentials()
    for table in ("photo_details", "photo_secrets"):
        assert db.run(f"SELECT IdPhoto FROM {table}") == [["4"]], table
    if env.upload_dir:
        assert sorted(name for name in listing(env.upload_dir) if (env.upload_dir / name).is_file()) == ["4-thumb.jpg", "4.jpg"]
        tree = [p.name for p in (env.upload_dir / "photos").rglob("*.jpg")]
        assert tree and all(name.startswith("4_") for name in tree), tree
    if env.session_dir:
        sessions = [p.name for p in env.session_dir.iterdir() if p.name.startswith("sess_")]
        assert sessions == ["sess_" + bob.session_id], sessions
    check_api(client().login("alice", ALICE_PASS), AUTH_FAILED)
    check_api(bob.call({"command": "stream", "IdPhoto": "4"}),
              b'{"result":[{"IdPhoto":"4","title":"bob\'s","IdUser":"2","username":"bob"}]}')
