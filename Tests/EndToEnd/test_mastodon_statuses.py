"""The Mastodon-compatible API's photos, media, timelines and accounts
(issue 28) through the stack's nginx, driven by PyPI's Mastodon.py as an app
drives it: a token from the password grant, media_post + status_post,
timelines paged with fetch_next (the Link header), favourites, replies that
are the form API's comments both ways, delete removing every size."""
from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError

from appclient import AppClient, jpeg_size
from conftest import png_bytes
from e2e import ALICE_PASS, OURS, R_ALICE, SUCCESS, app_password, check_api

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the Mastodon-compatible API is ours: the 2012 original has none")]

SCOPES = ["read", "write", "follow"]


@pytest.fixture(scope="module")
def site(web_site):
    return web_site.rstrip("/")


@pytest.fixture(scope="module")
def people(fresh_db, endpoint):
    """alice (IdUser 1, typed password "secret") and bob (2, "bobsecret"), registered by the 2012 app."""
    with AppClient(endpoint) as phone:
        check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
    with AppClient(endpoint) as phone:
        assert b'"username":"bob"' in phone.register("bob", app_password("bobsecret")).body


def signed_in(site, username, password, scopes=SCOPES) -> Mastodon:
    """A client as an app makes one: its registration, then the password grant
    (over the test stack's plain http, which Mastodon.py allows when told)."""
    client_id, client_secret = Mastodon.create_app("iReporter E2E", scopes=scopes, api_base_url=site)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    client.log_in(username, password, scopes=scopes, allow_http=True)
    return client


@pytest.fixture(scope="module")
def alice(site, people) -> Mastodon:
    return signed_in(site, "alice", "secret")


@pytest.fixture(scope="module")
def bob(site, people) -> Mastodon:
    return signed_in(site, "bob", "bobsecret")


@pytest.fixture
def phone(endpoint):
    """alice's 2012 app, logged in."""
    with AppClient(endpoint) as client:
        client.login("alice", ALICE_PASS)
        yield client


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def post_photo(client: Mastodon, image: bytes, caption: str, mime_type="image/jpeg", description=None):
    media = client.media_post(image, mime_type=mime_type, description=description)
    return client.status_post(caption, media_ids=[media])


def test_a_photo_posted_from_an_app_is_the_2012_apps_photo_too(alice, phone, images):
    status = post_photo(alice, images.photo, "Fractal & friends", description="A purple fractal")
    assert status.content == "<p>Fractal &amp; friends</p>"
    assert status.account.acct == "alice" and status.visibility == "public"
    [attachment] = status.media_attachments
    assert attachment.type == "image" and attachment.description == "A purple fractal"
    assert (attachment.meta.original.width, attachment.meta.original.height) == (640, 640)
    code, original = fetch(attachment.url)
    assert code == 200 and jpeg_size(original) == (640, 640)
    code, preview = fetch(attachment.preview_url)
    assert code == 200 and jpeg_size(preview) == (640, 640), "640 wide: never enlarged"
    listed = phone.call({"command": "stream", "IdPhoto": str(status.id)}).json()["result"]
    assert listed == [{"IdPhoto": str(status.id), "title": "Fractal & friends", "IdUser": "1", "username": "alice"}]
    assert alice.status(status.id).media_attachments[0].description == "A purple fractal"


def test_a_post_retried_with_its_idempotency_key_is_posted_once(alice, phone, images):
    """Mastodon.py sends the key as the header apps send it; through nginx
    and FastCGI the retry answers the first post's status."""
    media = alice.media_post(images.photo, mime_type="image/jpeg")
    first = alice.status_post("Retried", media_ids=[media], idempotency_key="e2e-retry-1")
    again = alice.status_post("Retried", media_ids=[media], idempotency_key="e2e-retry-1")
    assert again.id == first.id and again.content == "<p>Retried</p>"
    with pytest.raises(MastodonAPIError, match="not waiting for a post"):
        alice.status_post("Retried", media_ids=[media], idempotency_key="e2e-retry-2")
    titles = [p["title"] for p in phone.call({"command": "stream"}).json()["result"]]
    assert titles.count("Retried") == 1


def test_a_png_becomes_a_jpeg_and_text_is_refused(alice):
    status = post_photo(alice, png_bytes(40, 30), "A PNG", mime_type="image/png")
    code, original = fetch(status.media_attachments[0].url)
    assert code == 200 and jpeg_size(original) == (40, 30)
    with pytest.raises(MastodonAPIError) as refused:
        alice.media_post(b"This is not a photo.\n", mime_type="image/jpeg")
    assert refused.value.args[1] == 422
    with pytest.raises(MastodonAPIError) as refused:
        alice.status_post("Just words, no photo")
    assert refused.value.args[1] == 422


def test_a_read_token_cannot_post(site, people, images):
    reader = signed_in(site, "bob", "bobsecret", scopes=["read"])
    assert reader.account_verify_credentials().username == "bob"
    with pytest.raises(MastodonAPIError) as refused:
        reader.media_post(images.photo, mime_type="image/jpeg")
    assert refused.value.args[1] == 403
    with pytest.raises(MastodonAPIError) as refused:
        reader.status_post("x", media_ids=["1000000000000001"])
    assert refused.value.args[1] == 403


def test_timelines_page_with_the_link_header(alice, bob, phone, images):
    for n in range(6):
        check_api(phone.upload(images.stripes, f"stripes {n}"), SUCCESS)
    everything = [int(p["IdPhoto"]) for p in phone.call({"command": "stream", "count": "100"}).json()["result"]]
    seen = []
    page = bob.timeline_public(limit=2)
    while page:
        assert len(page) <= 2
        seen += [int(status.id) for status in page]
        page = bob.fetch_next(page)
    assert seen == everything, "every photo once, newest first"
    mine = alice.account_statuses(alice.me().id, limit=3)
    assert [int(status.id) for status in mine] == everything[:3]
    assert [int(status.id) for status in alice.fetch_next(mine)] == everything[3:6]
    newer = bob.timeline_public(since_id=everything[2])
    assert [int(status.id) for status in newer] == everything[:2]
    assert [int(status.id) for status in alice.timeline_home(limit=40)] == everything, "alice's own photos"
    # min_id (the Link's prev): the page just before, not the newest one.
    deeper = bob.timeline_public(max_id=everything[3], limit=2)
    assert [int(status.id) for status in deeper] == everything[4:6]
    assert [int(status.id) for status in bob.fetch_previous(deeper)] == everything[2:4]
    assert [int(status.id) for status in alice.timeline_home(min_id=everything[4], limit=2)] == everything[2:4]
    assert [int(status.id) for status in alice.account_statuses(alice.me().id, min_id=everything[5], limit=1)] == [everything[4]]


def test_favourites_are_likes(alice, bob, phone, images):
    status = post_photo(alice, images.stripes, "Like me")
    liked = bob.status_favourite(status.id)
    assert liked.favourited is True and liked.favourites_count == 1
    counts = phone.call({"command": "stream", "IdPhoto": str(status.id), "extras": "likes,myvote"}).json()["result"][0]
    assert (counts["likes"], counts["myvote"]) == ("1", "0")
    assert [account.username for account in alice.status_favourited_by(status.id)] == ["bob"]
    unliked = bob.status_unfavourite(status.id)
    assert unliked.favourited is False and unliked.favourites_count == 0


def test_ones_favourites_are_listed_and_paged(site, alice, bob, images):
    """GET /api/v1/favourites: what the apps' Favourites tab shows, each page
    followed through its Link header."""
    posted = [post_photo(alice, images.stripes, f"Fave {n}") for n in range(4)]
    for status in posted[:3]:
        bob.status_favourite(status.id)
    seen = []
    page = bob.favourites(limit=2)
    while page:
        assert len(page) <= 2 and all(status.favourited for status in page)
        seen += [int(status.id) for status in page]
        page = bob.fetch_next(page)
    assert seen == [int(status.id) for status in reversed(posted[:3])], "newest photo first, every favourite once"
    assert alice.favourites() == [], "bob's, not alice's"
    with pytest.raises(MastodonAPIError) as refused:
        Mastodon(api_base_url=site, version_check_mode="none").favourites()
    assert refused.value.args[1] == 401


def test_replies_are_comments_both_ways(alice, bob, phone, images):
    status = post_photo(alice, images.stripes, "Say something")
    reply = bob.status_post("Nice <stripes>", in_reply_to_id=status.id)
    assert reply.in_reply_to_id == status.id and reply.in_reply_to_account_id == alice.me().id
    comments = phone.call({"command": "comments", "IdPhoto": str(status.id)}).json()["result"]
    assert [(c["username"], c["text"]) for c in comments] == [("bob", "Nice <stripes>")]
    phone.call({"command": "comment", "IdPhoto": str(status.id), "text": "Thanks!\nReally."})
    context = alice.status_context(status.id)
    assert context.ancestors == []
    assert [(s.account.username, s.content) for s in context.descendants] == [
        ("bob", "<p>Nice &lt;stripes&gt;</p>"), ("alice", "<p>Thanks!<br />Really.</p>")]
    assert [s.id for s in bob.status_context(reply.id).ancestors] == [status.id]
    assert alice.status(status.id).replies_count == 2
    bob.status_delete(reply.id)
    assert len(phone.call({"command": "comments", "IdPhoto": str(status.id)}).json()["result"]) == 1


def test_delete_removes_the_photo_and_every_size(alice, bob, upload_dir, images):
    status = post_photo(alice, images.photo, "Short-lived")
    original = status.media_attachments[0].url
    for letter in ["s", "q", "z", "b"]:
        assert fetch(original.replace("_o.jpg", f"_{letter}.jpg"))[0] == 200
    files = lambda: sorted(p.name for p in Path(upload_dir).rglob(f"{status.id}[_.-]*"))
    assert len(files()) >= 5, files()
    with pytest.raises(MastodonNotFoundError):  # as Mastodon: not among bob's statuses
        bob.status_delete(status.id)
    alice.status_delete(status.id, delete_media=True)
    assert files() == []
    assert fetch(original)[0] == 404
    with pytest.raises(MastodonNotFoundError):
        alice.status(status.id)


def test_delete_and_redraft_posts_the_photo_again(alice, images):
    """Tusky's and the official apps' "Delete & re-draft": the app posts
    the media of the DELETE's answer again, with the caption it kept."""
    status = post_photo(alice, images.photo, "Typo in the captoin", description="A purple fractal")
    deleted = alice.status_delete(status.id)
    [media] = deleted.media_attachments
    assert int(media.id) > 10 ** 15 and deleted.text == "Typo in the captoin"
    code, waiting = fetch(media.url)
    assert code == 200 and jpeg_size(waiting) == (640, 640)
    again = alice.status_post("Typo in the caption", media_ids=deleted.media_attachments)
    [posted] = again.media_attachments
    assert posted.description == "A purple fractal" and (posted.meta.original.width, posted.meta.original.height) == (640, 640)
    assert fetch(posted.url) == (200, waiting)
    with pytest.raises(MastodonNotFoundError):
        alice.status(status.id)


def test_accounts_have_their_counts(alice, bob):
    me = alice.account_verify_credentials()
    assert me.username == "alice" and me.source.privacy == "public"
    assert me.statuses_count == len(alice.account_statuses(me.id, limit=40))
    assert alice.account_lookup("bob").id == bob.me().id
    assert [a.username for a in alice.account_search("bob")] == ["bob"]
    found = bob.search_v2("Fractal")
    assert [s.content for s in found.statuses] == ["<p>Fractal &amp; friends</p>"]


def test_a_link_to_a_photo_a_comment_or_a_person_opens_in_the_app(alice, bob, images):
    status = post_photo(alice, images.photo, "Harbour lights")
    reply = bob.status_post("Lovely", in_reply_to_id=status.id)
    found = bob.search_v2(status.url, resolve=True)
    assert [s.id for s in found.statuses] == [status.id] and found.accounts == []
    assert [s.id for s in bob.search_v2(reply.uri, resolve=True).statuses] == [reply.id]
    found = bob.search_v2(status.account.url, resolve=True)
    assert [a.id for a in found.accounts] == [status.account.id] and found.statuses == []


def test_an_iphones_heic_becomes_a_jpeg(alice, images, tmp_path):
    heic = tmp_path / "photo.heic"
    subprocess.run([images.convert, "-size", "48x32", "gradient:#3060c0-#f0a040", str(heic)], check=True, timeout=60)
    status = post_photo(alice, heic.read_bytes(), "From an iPhone", mime_type="image/heic")
    code, original = fetch(status.media_attachments[0].url)
    assert code == 200 and jpeg_size(original) == (48, 32)


def test_toot_posts_a_photo_and_shows_it(site, people, bob, images, tmp_path):
    environment = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)}

    def toot(*arguments, typed=None):
        done = subprocess.run(["toot", *arguments], input=typed, capture_output=True, text=True, timeout=60, env=environment)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    toot("login_cli", "--instance", site, "--email", "bob", typed="bobsecret\n")
    photo = tmp_path / "stripes.jpg"
    photo.write_bytes(images.stripes)
    toot("post", "--media", str(photo), "--description", "Three stripes", "Posted from toot")
    assert "Posted from toot" in toot("timeline", "--public", "--once", "--count", "5")
    [latest] = bob.account_statuses(bob.me().id, limit=1)
    assert latest.content == "<p>Posted from toot</p>"
    assert latest.media_attachments[0].description == "Three stripes"


def test_read_markers_follow_the_person_from_app_to_app(site, alice, images):
    """Where one app left the home timeline, another app of the same person
    opens it (Mastodon.py's markers_set/markers_get, a JSON body as toot and
    the web clients send)."""
    status = post_photo(alice, images.stripes, "Read up to here")
    marked = alice.markers_set(["home"], [status.id])
    assert marked.home.last_read_id == str(status.id) and marked.home.version == 1
    tablet = signed_in(site, "alice", "secret")
    read = tablet.markers_get(["home", "notifications"])
    assert read.home.last_read_id == str(status.id) and "notifications" not in read
    request = urllib.request.Request(site + "/api/v1/markers", method="POST",
                                     data=json.dumps({"home": {"last_read_id": "7"}, "notifications": {"last_read_id": "3"}}).encode(),
                                     headers={"Authorization": "Bearer " + tablet.access_token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        set_by_json = json.loads(answer.read())
    assert set_by_json["home"]["version"] == 2 and set_by_json["notifications"]["last_read_id"] == "3"
    again = alice.markers_get(["home", "notifications"])
    assert (again.home.last_read_id, again.notifications.version) == ("7", 1)
