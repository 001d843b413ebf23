"""Photos in every size (issue 16) through the stack's nginx: a missing size
is rendered by the server once (the size route behind `try_files`), written
into the photos' tree, and served by nginx from then on; the 2012 URLs keep
serving the same file; a bad name is a 404 with nothing written."""
from __future__ import annotations

import http.client
import os
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from appclient import AppClient, jpeg_size
from e2e import ALICE_PASS, OURS, R_ALICE, SUCCESS, UPLOAD_FOLDER_MARKER, check_api

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the sizes are ours: the 2012 original has none")]

# Flickr's letters, each with the size of a 2448x3264 (portrait) photo.
CAMERA_SIZES = {"s": (75, 75), "q": (150, 150), "t": (75, 100), "m": (180, 240), "n": (240, 320), "w": (300, 400),
                "": (375, 500), "z": (480, 640), "c": (600, 800), "b": (768, 1024), "o": (2448, 3264)}


@pytest.fixture(scope="module")
def photos(fresh_db, endpoint, images):
    """alice's camera photo (IdPhoto 2) and a 640x640 one (3), with their secrets and servers."""
    with AppClient(endpoint) as phone:
        check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
        check_api(phone.upload(images.camera, "camera"), SUCCESS)
        check_api(phone.upload(images.photo, "small"), SUCCESS)
        listed = phone.call({"command": "stream", "extras": "secret,server"}).json()["result"]
    return {int(p["IdPhoto"]): (p["secret"], p["server"]) for p in listed}


def request(base_url: str, path: str, method="GET") -> tuple[int, dict[str, str], bytes]:
    """A request with `path` sent exactly as written (no normalisation)."""
    url = urllib.parse.urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        connection.endheaders()
        r = connection.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        connection.close()


def raw_headers(base_url: str, path: str) -> list[tuple[str, str]]:
    """Every header line of the answer, repeated ones included, by lower-case name."""
    url = urllib.parse.urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", path)
        r = connection.getresponse()
        r.read()
        return [(k.lower(), v) for k, v in r.getheaders()]
    finally:
        connection.close()


def size_path(id_photo: int, secret: str, server: str, letter: str) -> str:
    return f"/iReporter/photos/{server}/{id_photo}_{secret}{'_' + letter if letter else ''}.jpg"


def tree(env) -> set[str]:
    """Every file under the upload folder, by its path there."""
    return {str(p.relative_to(env.upload_dir)) for p in env.upload_dir.rglob("*")
            if p.is_file() and p.name != UPLOAD_FOLDER_MARKER}


def test_stream_extras_name_the_sizes(photos):
    assert sorted(photos) == [2, 3]
    for secret, server in photos.values():
        assert len(secret) == 10 and all(c in "0123456789abcdef" for c in secret) and server == "000000"
    assert photos[2][0] != photos[3][0]


def test_every_size_is_made_once_then_served_by_nginx(photos, base_url, env):
    secret, server = photos[2]
    for letter, dimensions in CAMERA_SIZES.items():
        path = size_path(2, secret, server, letter)
        status, headers, first = request(base_url, path)
        assert status == 200 and headers["content-type"] == "image/jpeg", (letter, status, first[:200])
        assert jpeg_size(first) == dimensions, letter
        assert "immutable" in headers["cache-control"] and "max-age=31536000" in headers["cache-control"]
        status, headers, again = request(base_url, path)
        assert status == 200 and again == first, letter
        # nginx's static file answer: a validator, and the cache headers of its location.
        assert "last-modified" in headers and "immutable" in headers["cache-control"], headers
        assert headers["x-content-type-options"] == "nosniff"
        if env.upload_dir:
            on_disk = env.upload_dir / "photos/000/000" / path.rsplit("/", 1)[1]
            assert on_disk.read_bytes() == first
    if env.upload_dir:
        assert not [n for n in os.listdir(env.upload_dir) if n.startswith(".spool-")], "no temporary file left"


def test_the_2012_urls_serve_the_same_file(photos, base_url, env):
    secret, server = photos[3]
    status, _, original = request(base_url, size_path(3, secret, server, "o"))
    assert status == 200 and jpeg_size(original) == (640, 640)
    assert request(base_url, "/iReporter/upload/3.jpg")[2] == original
    status, _, thumbnail = request(base_url, "/iReporter/upload/3-thumb.jpg")
    assert status == 200 and jpeg_size(thumbnail) == (180, 180)
    if env.upload_dir:
        legacy, in_tree = env.upload_dir / "3.jpg", env.upload_dir / f"photos/000/000/3_{secret}_o.jpg"
        assert os.stat(legacy).st_ino == os.stat(in_tree).st_ino, "one file under two names"


def test_a_size_larger_than_the_photo_is_the_photo_s_own_size(photos, base_url):
    secret, server = photos[3]
    status, _, body = request(base_url, size_path(3, secret, server, "b"))
    assert status == 200 and jpeg_size(body) == (640, 640), "never enlarged"


def test_bad_names_are_404_with_nothing_done(photos, base_url, env):
    secret, server = photos[2]
    other_secret = photos[3][0]
    before = tree(env) if env.upload_dir else set()
    bad = [
        size_path(2, other_secret, server, "z"),                       # another photo's secret
        size_path(2, "0000000000" if secret != "0000000000" else "0000000001", server, "z"),
        size_path(2, secret, server, "x"),                             # no such size letter
        size_path(2, secret, server, "zz"),
        # Upper case (a secret of digits alone has none: one letter then).
        size_path(2, secret.upper() if secret != secret.upper() else "A" + secret[1:], server, "z"),
        size_path(9, secret, server, "z"),                             # no such photo
        f"/iReporter/photos/{server}/abc_{secret}_z.jpg",              # not a number
        f"/iReporter/photos/{server}/02_{secret}_z.jpg",
        f"/iReporter/photos/000001/2_{secret}_z.jpg",                  # not the photo's server
        f"/iReporter/photos/{server}/../../upload/2_{secret}_z.jpg",   # path tricks
        f"/iReporter/photos/{server}/%2e%2e/2_{secret}_z.jpg",
        f"/iReporter/photos/%2e%2e%2f%2e%2e%2fupload/2_{secret}_z.jpg",
        f"/iReporter/photos/{server}/2_{secret}_z.jpg%00.php",
        f"/iReporter/photos/{server}/2_{secret}_z.jpg/",
        f"/iReporter/photos/{server}/" + "9" * 5000 + f"_{secret}_z.jpg",  # very long
        f"/iReporter/photos/{server}/2_{secret}_z.jpg" + "/x" * 2000,
    ]
    for path in bad:
        status, headers, body = request(base_url, path)
        assert status in (400, 404, 414), (path[:120], status, body[:200])
        assert b"\xff\xd8" not in body[:2], path[:120]
    if env.upload_dir:
        assert tree(env) == before, "nothing written, nothing removed"


def test_two_requests_for_one_missing_size_both_get_it_whole(photos, base_url, env):
    secret, server = photos[2]
    # `c` again would be a static file: a size of photo 3 nobody asked for yet.
    secret3, _ = photos[3]
    path = size_path(3, secret3, server, "n")
    answers: list = []

    def fetch():
        answers.append(request(base_url, path))
    threads = [threading.Thread(target=fetch) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(answers) == 6 and {a[0] for a in answers} == {200}
    assert len({a[2] for a in answers}) >= 1 and all(jpeg_size(a[2]) == (320, 320) for a in answers)
    if env.upload_dir:
        assert (env.upload_dir / f"photos/000/000/3_{secret3}_n.jpg").read_bytes() in {a[2] for a in answers}
        assert not [n for n in os.listdir(env.upload_dir) if n.startswith(".spool-")]


def test_delete_removes_every_size(photos, endpoint, base_url, env, images):
    with AppClient(endpoint) as phone:
        assert phone.login("alice", ALICE_PASS).body == R_ALICE
        check_api(phone.upload(images.stripes, "to delete"), SUCCESS)
        listed = phone.call({"command": "stream", "IdPhoto": "4", "extras": "secret,server"}).json()["result"]
        secret, server = listed[0]["secret"], listed[0]["server"]
        for letter in ("q", "z", ""):
            assert request(base_url, size_path(4, secret, server, letter))[0] == 200
        assert phone.call({"command": "delete", "IdPhoto": "4"}).body == SUCCESS
    for letter in ("q", "z", "", "o"):
        assert request(base_url, size_path(4, secret, server, letter))[0] == 404
    assert request(base_url, "/iReporter/upload/4.jpg")[0] == 404
    if env.upload_dir:
        assert not [p for p in tree(env) if Path(p).name.startswith("4_") or Path(p).name.startswith("4.")
                    or Path(p).name.startswith("4-")]


# The headers that make a photo only ever a picture, and how long it is kept.
PHOTO_HEADERS = ("content-type", "cache-control", "x-content-type-options", "content-security-policy")


def test_a_size_s_first_answer_has_the_headers_of_every_later_one(photos, base_url):
    """The first answer is the server's (it renders the size), the next ones
    nginx's from disk: the same policy either way, each header once."""
    secret, server = photos[3]
    path = size_path(3, secret, server, "w")  # asked for by no other test
    first, again = raw_headers(base_url, path), raw_headers(base_url, path)
    assert "last-modified" not in dict(first) and "last-modified" in dict(again), "the server's answer, then nginx's file"
    for name in PHOTO_HEADERS:
        assert [v for k, v in first if k == name] == [v for k, v in again if k == name], (name, first, again)
    assert dict(first)["content-security-policy"] == "default-src 'none'; sandbox"
    assert [k for k, _ in first].count("content-security-policy") == 1


def upload_as_alice(endpoint, jpeg: bytes, title: str) -> tuple[int, str, str]:
    """IdPhoto, secret and server of a new photo of alice's."""
    with AppClient(endpoint, timeout=60) as phone:
        assert phone.login("alice", ALICE_PASS).body == R_ALICE
        check_api(phone.upload(jpeg, title), SUCCESS)
        listed = phone.call({"command": "stream", "extras": "secret,server"}).json()["result"]
    mine = max((p for p in listed if p["title"] == title), key=lambda p: int(p["IdPhoto"]))
    return int(mine["IdPhoto"]), mine["secret"], mine["server"]


def files_of(env, id_photo: int) -> list[str]:
    """The photo's files: its 2012 names and its sizes in the tree."""
    return sorted(p for p in tree(env) if Path(p).name.startswith((f"{id_photo}_", f"{id_photo}.", f"{id_photo}-")))


def test_a_photo_whose_original_is_gone_is_a_404_logged_once_and_repair_lists_it(photos, endpoint, base_url, env, images):
    if not env.upload_dir or not env.run_dir:
        pytest.skip("needs the stack's upload folder and run directory")
    id_photo, secret, server = upload_as_alice(endpoint, images.photo, "original lost")
    assert request(base_url, size_path(id_photo, secret, server, "z"))[0] == 200
    (env.upload_dir / f"photos/000/000/{id_photo}_{secret}_o.jpg").unlink()
    (env.upload_dir / f"{id_photo}.jpg").unlink()
    for _ in range(6):
        for letter in ("q", "b", "o"):
            status, headers, body = request(base_url, size_path(id_photo, secret, server, letter))
            assert status == 404 and headers["content-type"] == "application/json", (letter, status, body[:200])
    assert request(base_url, size_path(id_photo, secret, server, "z"))[0] == 200, "what is left is still served"
    said = [line for line in (env.run_dir / "ireporter.log").read_text(errors="replace").splitlines()
            if f"photo {id_photo} has a row but no original file" in line]
    # Once per worker at most (the stack runs 4), not once per request (18).
    assert 1 <= len(said) <= 4, said

    def repair(*flags: str) -> str:
        p = subprocess.run([str(env.run_dir / "bin/ireporter"), "repair", *flags, "--grace", "0",
                            "--config", str(env.run_dir / "ireporter.conf")], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout + p.stderr
    for flags in (("--dry-run",), ("--yes",)):
        out = repair(*flags)
        assert "1 photos whose original is gone (kept: only a backup restores them)" in out, out
        assert f"cannot repair photos whose original is gone" in out and f"IdPhoto: {id_photo}" in out, out
        assert "0 rows without a photo file" in out, out
    with AppClient(endpoint) as phone:
        listed = phone.call({"command": "stream", "IdPhoto": str(id_photo)}).json()["result"]
    assert [int(p["IdPhoto"]) for p in listed] == [id_photo], "repair --yes kept the row"
    assert files_of(env, id_photo) == [f"{id_photo}-thumb.jpg", f"photos/000/000/{id_photo}_{secret}_z.jpg"]


def test_a_delete_wins_over_every_size_being_made(photos, endpoint, base_url, env, images):
    """All ten sizes of a 12 MP photo asked for at once while its owner
    deletes it: each answer is the size or a 404, and nothing of the photo
    is left on disk (issue 26: two sizes were, in every trial)."""
    if not env.upload_dir:
        pytest.skip("needs the stack's upload folder")
    twelve = images._make("twelve-mp.jpg", ["-size", "4000x3000", "gradient:#3060c0-#f0a040",
                                            "-sampling-factor", "4:2:0", "-quality", "85"])
    letters = ["s", "q", "t", "m", "n", "w", "", "z", "c", "b"]
    deadline = time.monotonic() + 240
    trials, statuses = 0, []
    with AppClient(endpoint, timeout=60) as phone:
        assert phone.login("alice", ALICE_PASS).body == R_ALICE
        while trials < 6 and time.monotonic() < deadline:
            trials += 1
            check_api(phone.upload(twelve, f"raced {trials}"), SUCCESS)
            listed = phone.call({"command": "stream", "extras": "secret,server"}).json()["result"]
            mine = next(p for p in listed if p["title"] == f"raced {trials}")
            id_photo, secret, server = int(mine["IdPhoto"]), mine["secret"], mine["server"]
            answers: list[tuple[str, int]] = []

            def fetch(letter: str):
                answers.append((letter, request(base_url, size_path(id_photo, secret, server, letter))[0]))
            threads = [threading.Thread(target=fetch, args=(letter,)) for letter in letters]
            for t in threads:
                t.start()
            assert phone.call({"command": "delete", "IdPhoto": str(id_photo)}).body == SUCCESS
            for t in threads:
                t.join(timeout=90)
            assert len(answers) == len(letters), f"trial {trials}: {answers}"
            assert {status for _, status in answers} <= {200, 404}, f"trial {trials}: {answers}"
            assert files_of(env, id_photo) == [], f"trial {trials}: left after the delete"
            statuses += [status for _, status in answers]
    assert trials >= 3, "too slow to try the race three times"
    print(f"{trials} trials: {statuses.count(200)} sizes made before the delete, {statuses.count(404)} 404s")
