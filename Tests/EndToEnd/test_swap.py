"""The swap-in: our server on the PHP original's own database, upload folder
and session directory (what `make up DB_URL=… UPLOAD_DIR=… SESSION_DIR=…`
does). Accounts, photos and logged-in phones made by the PHP version keep
working with ours, and the other way round. Needs the PHP reference
(IREPORTER_REFERENCE_DIR); starts a second stack of ours on port 8087."""
import os
import subprocess
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint
from test_differential import reference, reset_reference  # noqa: F401  (reference: the session fixture that runs it)

REPO = Path(__file__).resolve().parents[2]
OURS_PORT = int(os.environ.get("IREPORTER_SWAP_PORT", "8087"))
RUN_DIR = f"/tmp/ireporter-swap-{OURS_PORT}" if OURS_PORT != 8087 else "/tmp/ireporter-swap"
REF_UPLOAD = "/tmp/ref-php/app/upload"
REF_SESSIONS = "/tmp/ref-php/sessions"
REF_DB_URL = "mysql://ireport:ireport@localhost/iReport?socket=/tmp/ref-mariadb/mysqld.sock"
PASSWORD = "18c69224371c58c547b68bfa6d28dc8aeff006e4"  # what the app sends: SHA-1(password + salt)
SUCCESS = b'{"successful":1}'


@pytest.fixture(scope="module")
def swapped(reference, images):  # noqa: F811
    binary = os.environ.get("IREPORTER_BINARY")
    if not binary:
        pytest.fail("IREPORTER_BINARY is not set")
    reset_reference(reference)
    env = dict(os.environ, RUN_DIR=RUN_DIR, PORT=str(OURS_PORT), DB_URL=REF_DB_URL, UPLOAD_DIR=REF_UPLOAD,
               SESSION_DIR=REF_SESSIONS, SKIP_BUILD="1", BINARY=binary, WORKERS="2")
    env = {k: v for k, v in env.items() if not k.startswith("IREPORTER_")}
    up = subprocess.run([str(REPO / "scripts" / "stack.sh"), "up"], env=env, capture_output=True, text=True, timeout=300)
    if up.returncode != 0:
        pytest.fail(f"stack.sh up failed:\n{up.stdout[-3000:]}\n{up.stderr[-3000:]}")
    yield reference["endpoint"], Endpoint(f"http://127.0.0.1:{OURS_PORT}/iReporter/")
    subprocess.run([str(REPO / "scripts" / "stack.sh"), "down"], env=env, capture_output=True, timeout=300)
    reset_reference(reference)


def test_php_accounts_photos_and_sessions_keep_working(swapped, images):
    php, ours = swapped
    # Life under PHP: an account, a photo, a phone that stays logged in.
    phone = AppClient(php)
    assert phone.register("alice", PASSWORD).json()["result"][0]["username"] == "alice"
    assert phone.upload(images.photo, "taken under PHP").body == SUCCESS
    php_cookie = phone.jar.get()
    assert php_cookie and os.path.exists(f"{REF_SESSIONS}/sess_{php_cookie}")

    # The same phone, unchanged, now talks to ours (same cookie jar).
    phone.ep = ours
    phone.close()
    assert phone.upload(images.photo, "taken under Swift").body == SUCCESS, "the PHP session is still logged in"
    stream = phone.stream().json()["result"]
    assert [p["title"] for p in stream] == ["taken under Swift", "taken under PHP"]
    for photo in stream:
        for name in (f"{photo['IdPhoto']}.jpg", f"{photo['IdPhoto']}-thumb.jpg"):
            r = phone.get(f"upload/{name}")
            assert r.status == 200 and r.header("Content-Type") == "image/jpeg" and r.body[:2] == b"\xff\xd8", name

    # A fresh phone logs in to the PHP-made account through ours...
    other = AppClient(ours)
    assert other.login("alice", PASSWORD).json() == {"result": [{"IdUser": "1", "username": "alice"}]}
    ours_cookie = other.jar.get()
    assert os.path.exists(f"{REF_SESSIONS}/sess_{ours_cookie}")
    # ... and the session we wrote is one PHP can use (swapping back works too).
    other.ep = php
    other.close()
    assert other.upload(images.photo, "back under PHP").body == SUCCESS
    # A photo added behind our server's back shows once its stream cache
    # (stream_cache_ms, 1 s by default) has aged.
    def newest_title() -> str:
        with AppClient(ours) as fresh:
            return fresh.stream().json()["result"][0]["title"]
    servers.wait_for(lambda: newest_title() == "back under PHP", 5, what="PHP's upload in our stream")


def test_sizes_of_photos_from_either_side(swapped, images):
    """With migrations 003 (the stream's extras) and 006 (the secrets) on the
    shared database: a photo PHP stores and one
    ours stores both get their sizes from ours (PHP's given its secret when
    first named), and PHP's site still serves ours under its 2012 name."""
    from appclient import jpeg_size
    php, ours = swapped
    sql = ["mariadb", "--socket=/tmp/ref-mariadb/mysqld.sock", "-u", "ireport", "-pireport", "iReport"]
    migrations = "".join((REPO / "sql" / "migrations" / name).read_text()
                         for name in ("003-photo-details-comments-votes.sql", "006-photo-secrets.sql"))
    subprocess.run(sql, input=migrations, text=True, check=True, capture_output=True, timeout=60)
    try:
        phone = AppClient(php)
        assert phone.login("alice", PASSWORD).status == 200
        assert phone.upload(images.photo, "sized under PHP").body == SUCCESS
        phone.ep = ours
        phone.close()
        # Within a second of the migration our worker may still take
        # photo_secrets as missing (README, "Migrations"): the photo is then
        # given its secret when first named, as PHP's is.
        assert phone.upload(images.photo, "sized under Swift").body == SUCCESS
        # PHP's upload shows once our stream cache has aged.
        def listed_by_title() -> dict:
            return {p["title"]: p for p in phone.call({"command": "stream", "extras": "secret,server"}).json()["result"]}
        listed = servers.wait_for(lambda: (listed := listed_by_title()) and "sized under PHP" in listed and listed, 5,
                                  what="PHP's upload in our stream")
        for title in ("sized under PHP", "sized under Swift"):
            p = listed[title]
            assert p["secret"] and p["server"] == "000000", p
            r = phone.get(f"photos/{p['server']}/{p['IdPhoto']}_{p['secret']}_q.jpg")
            assert r.status == 200 and jpeg_size(r.body) == (150, 150), (title, r.status, r.body[:200])
        ours_id = listed["sized under Swift"]["IdPhoto"]
        back = AppClient(php)
        r = back.get(f"upload/{ours_id}.jpg")
        assert r.status == 200 and jpeg_size(r.body) == (640, 640), "PHP's site serves our upload under its 2012 name"
        assert Path(f"{REF_UPLOAD}/{ours_id}-thumb.jpg").is_file()
    finally:
        subprocess.run(sql, input="DROP TABLE IF EXISTS photo_secrets, photo_details, photo_counts, votes, comments;",
                       text=True, capture_output=True, timeout=60)
