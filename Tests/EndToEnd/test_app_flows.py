"""The iPhone app's flows, through nginx, against a fresh database, with the
requests built as AFNetworking 1.x built them (appclient.AppClient): one
phone, its cookie jar and its keep-alive connection.

register -> (new cookie) -> upload -> stream -> stream IdPhoto -> GET the photo
and its thumbnail -> logout -> upload refused -> login again -> upload works.
"""
from __future__ import annotations

import pytest

import e2e
from appclient import jpeg_size
from e2e import (ALICE_PASS, AUTH_REQUIRED, OURS, R_ALICE, SUCCESS, check_api, check_api_headers, expect)

pytestmark = pytest.mark.usefixtures("fresh_db")


def stream_body(*rows):
    return b'{"result":[' + b",".join(
        b'{"IdPhoto":"%d","title":"%s","IdUser":"1","username":"alice"}' % (i, t.encode()) for i, t in rows) + b"]}"


def test_full_app_session(client, env, images, endpoint):
    phone = client()

    # --- register: the app's RegisterScreen (register = insert + login)
    r = phone.register("alice", ALICE_PASS)
    sid1 = check_api(r, R_ALICE, "new")
    assert phone.session_id == sid1
    if OURS and env.session_dir:
        assert e2e.session_file(env, sid1).is_file()

    # --- the app logs in again from its login screen: a new cookie (ours: always a new id)
    r = phone.login("alice", ALICE_PASS)
    sid2 = check_api(r, R_ALICE, expect("new", "none"))
    if OURS:
        assert sid2 != sid1 and phone.session_id == sid2

    # --- upload from the PhotoScreen
    r = phone.upload(images.photo, "Sunset at the pier")
    check_api(r, SUCCESS)
    e2e.check_stored_photo(env, 2, images.photo)

    # --- StreamScreen: the whole stream, then one photo
    r = phone.stream()
    check_api(r, stream_body((2, "Sunset at the pier")))
    r = phone.stream("2")
    check_api(r, stream_body((2, "Sunset at the pier")))

    # --- PhotoView: the photo and its thumbnail, GET upload/<IdPhoto>[-thumb].jpg
    for name, size in (("2.jpg", (640, 640)), ("2-thumb.jpg", (180, 180))):
        r = phone.get("upload/" + name)
        assert r.status == 200, r
        assert r.header("Content-Type") == "image/jpeg", r.headers
        assert jpeg_size(r.body) == size, (name, jpeg_size(r.body))
        if not OURS and name == "2.jpg":
            assert r.body == images.photo

    # --- logout: ours deletes the session file and the cookie
    r = phone.logout()
    check_api(r, b"", expect("deleted", "none"))
    if OURS:
        assert phone.session_id is None
        if env.session_dir:
            assert not e2e.session_file(env, sid2).exists()

    # --- upload after logout: the app shows the login screen on exactly this answer
    r = phone.upload(images.photo, "again")
    check_api(r, AUTH_REQUIRED)
    assert r.json() == {"error": "Authorization required"}

    # --- login again, upload works
    r = phone.login("alice", ALICE_PASS)
    sid3 = check_api(r, R_ALICE, expect("new", "none"))
    if OURS:
        assert sid3 not in (sid1, sid2)
    r = phone.upload(images.photo, "Second photo")
    check_api(r, SUCCESS)
    e2e.check_stored_photo(env, 3, images.photo)
    r = phone.stream()
    check_api(r, stream_body((3, "Second photo"), (2, "Sunset at the pier")))


def test_other_phone_sees_the_stream_anonymously(client, env):
    other = client()
    before = e2e.listing(env.session_dir)
    r = other.stream()
    check_api(r, stream_body((3, "Second photo"), (2, "Sunset at the pier")))
    if OURS:
        assert other.jar.cookies == {}
        assert e2e.listing(env.session_dir) == before  # no session file for an anonymous stream


def test_one_connection_many_requests(client):
    """The app keeps its connection alive: many answers on one socket, each
    framed correctly (a wrong Content-Length would desynchronise them)."""
    phone = client()
    phone.login("alice", ALICE_PASS)
    sock = phone._sock
    for i in range(20):
        r = phone.stream("2" if i % 2 else None)
        check_api_headers(r)
        assert r.json()["result"]
    if sock is not None:
        assert phone._sock is sock, "the connection was not kept alive"


def _pixel(w, rgb, x, y):
    i = (y * w + x) * 3
    return tuple(rgb[i:i + 3])


def _greenish(p):
    r, g, b = p
    return g > 180 and r < 80 and b < 80


@pytest.mark.parametrize("which", ["stripes", "portrait"])
def test_thumbnail_is_a_centre_crop(client, env, images, which):
    """OURS: 180x180 centre crop. The test photos are red | green | blue with
    the centre square green: a crop is green to the edges, squashing the whole
    photo (the PHP original) keeps red and blue at the sides."""
    phone = client()
    check_api(phone.login("alice", ALICE_PASS), R_ALICE, expect("new", "new"))
    check_api(phone.upload(getattr(images, which), which), SUCCESS)
    r = phone.stream()
    newest = int(r.json()["result"][0]["IdPhoto"])
    r = phone.get(f"upload/{newest}-thumb.jpg")
    assert r.status == 200 and jpeg_size(r.body) == (180, 180)
    w, h, rgb = images.rgb_pixels(r.body)
    probes = [(8, 90), (171, 90)] if which == "stripes" else [(90, 8), (90, 171)]
    probes.append((90, 90))
    got = {pt: _pixel(w, rgb, *pt) for pt in probes}
    if OURS:
        assert all(_greenish(p) for p in got.values()), f"not a centre crop: {got}"
    else:
        assert not _greenish(got[probes[0]]), got  # squashed: red at the edge
    r = phone.get(f"upload/{newest}.jpg")
    assert jpeg_size(r.body) == jpeg_size(getattr(images, which))


def test_register_while_logged_in_gets_a_new_id(client, env, images):
    """OURS: register, like login, always starts a NEW session, even when the
    request carried a valid session cookie."""
    phone = client()
    old = check_api(phone.login("alice", ALICE_PASS), R_ALICE, "new")
    r = phone.register("carol", e2e.app_password("carol's secret"))
    new = check_api(r, b'{"result":[{"IdUser":"2","username":"carol"}]}', expect("new", "none"))
    if OURS:
        assert new != old and phone.session_id == new
        if env.session_dir:
            assert e2e.session_file(env, new).is_file()
    # the phone is now carol: her upload shows up under her name
    check_api(phone.upload(images.photo, "carol's photo"), SUCCESS)
    top = phone.stream().json()["result"][0]
    assert (top["title"], top["IdUser"], top["username"]) == ("carol's photo", "2", "carol")


@pytest.mark.parametrize("variant", ["af-1.x", "af-0.10-final-crlf", "content-type-first", "title-first",
                                     "quoted-boundary"])
def test_app_body_variants(client, images, variant):
    """Layouts the 2012 app may have sent, depending on the AFNetworking
    version it bundled and on NSDictionary ordering: all are ordinary
    multipart/form-data and must upload alike."""
    from appclient import BOUNDARY, FilePart, multipart_body
    phone = client()
    check_api(phone.login("alice", ALICE_PASS), R_ALICE, "new")
    title = f"variant {variant}"
    fields = [("command", "upload"), ("title", title)]
    part = FilePart(images.photo, content_type_first=(variant == "content-type-first"))
    if variant == "title-first":
        fields.reverse()
    body = multipart_body(fields, [part])
    ctype = f"multipart/form-data; boundary={BOUNDARY}"
    if variant == "af-0.10-final-crlf":
        body += b"\r\n"  # AFNetworking 0.9/0.10: final boundary CRLF "--" B "--" CRLF CRLF
    if variant == "quoted-boundary":
        ctype = f'multipart/form-data; boundary="{BOUNDARY}"'
    r = phone.request("POST", phone.ep.path(), body, ctype)
    check_api(r, SUCCESS)
    top = phone.stream().json()["result"][0]
    assert top["title"] == title


def test_camera_sized_photo(client, env, images):
    """A full-size phone photo (2448x3264): stored at its size, 180x180 thumbnail."""
    phone = client()
    check_api(phone.login("alice", ALICE_PASS), R_ALICE, "new")
    check_api(phone.upload(images.camera, "from the camera"), SUCCESS)
    top = phone.stream().json()["result"][0]
    assert top["title"] == "from the camera"
    n = int(top["IdPhoto"])
    e2e.check_stored_photo(env, n, images.camera)
    r = phone.get(f"upload/{n}-thumb.jpg")
    assert r.status == 200 and jpeg_size(r.body) == (180, 180)
    r = phone.get(f"upload/{n}.jpg")
    assert r.status == 200 and jpeg_size(r.body) == (2448, 3264)
