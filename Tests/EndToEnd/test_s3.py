"""Photos in an S3-compatible bucket (issue 18), end to end: our server with
`photo_store = s3` on a private moto server that checks every signature
(scripts/s3-server.py), behind a private nginx with deploy/nginx/ireporter-s3.conf
included before ireporter.conf, all started here.

  - the app's flow (register, upload, stream, the 2012 URLs upload/<id>.jpg
    and <id>-thumb.jpg, logout): the photo, its tree name and thumbnail are
    objects of the bucket, nothing stays in upload_dir;
  - a size URL: rendered once from the bucket's original and kept there,
    then answered from nginx's cache; a wrong secret or name is a 404;
  - delete removes every object of the photo, its sizes too;
  - the bucket frozen (SIGSTOP): an upload answers "temporarily unavailable"
    with no row and no spool, the stream and login go on, cached photos are
    still served; unfrozen, uploads work again;
  - `ireporter repair` sets an object without a row aside under .removed/;
  - `ireporter copy-photos-to-s3` copies a folder's photo into the bucket, once.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_s3.py
"""
from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

import servers
from appclient import AppClient, Endpoint, jpeg_size
from e2e import UPLOAD_FOLDER_MARKER

PORT = servers.http_port(0)
S3_PORT = 9471
BASE_URL = f"http://127.0.0.1:{PORT}/iReporter/"
READY_URL = f"http://127.0.0.1:{PORT}/ireporter-ready"
UNAVAILABLE = {"error": "The service is temporarily unavailable, please try again"}


@pytest.fixture(scope="module")
def site():
    with servers.workspace("s3-store", database=False) as space:
        s3 = space.start(servers.S3Server(space.base, S3_PORT))
        # 3 s: a PUT to moto on a busy machine may be slow, and none is retried (a frozen
        # bucket's upload and readiness probe wait that long, well within the tests' bounds).
        with servers.server_behind_nginx("s3", PORT, workers=2, photo_store="s3", s3_url=s3.url,
                                         s3_timeout_ms=3000) as server:
            yield server, s3


def signed_in(tag: str) -> AppClient:
    phone = AppClient(Endpoint(BASE_URL), timeout=30)
    assert phone.register(servers.unique_name(tag), servers.app_password("s3")).status == 200
    return phone


def newest(phone: AppClient) -> dict:
    return phone.call({"command": "stream", "extras": "secret,server"}).json()["result"][0]


def ready_once_the_bucket_answers():
    """After a freeze moto first works off what it took meanwhile: waited for,
    bounded, through the readiness page (the server's own HEAD to the bucket)."""
    servers.wait_for(lambda: servers.http_get(READY_URL) == (200, "ready\n"), 30, what="ready once the bucket answers")


def jpegs_in(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != UPLOAD_FOLDER_MARKER)


def test_the_apps_flow_with_photos_in_the_bucket(site):
    server, s3 = site
    id_photo = servers.app_flow(BASE_URL, None, tag="s3", logs=lambda: servers.tail(server.log_path))
    keys = s3.keys()
    assert f"upload/{id_photo}.jpg" in keys and f"upload/{id_photo}-thumb.jpg" in keys, keys
    assert any(k.startswith("photos/000/000/") and k.endswith("_o.jpg") and f"/{id_photo}_" in k for k in keys), keys
    assert jpegs_in(server.upload_dir) == [], "spool files consumed, photos in the bucket alone"


def test_a_size_is_made_once_kept_in_the_bucket_and_cached_by_nginx(site):
    server, s3 = site
    with signed_in("s3size") as phone:
        assert phone.upload(servers.photo(), "sized").json() == {"successful": 1}
        photo = newest(phone)
        id_photo, secret, server_name = photo["IdPhoto"], photo["secret"], photo["server"]
        path = f"photos/{server_name}/{id_photo}_{secret}_q.jpg"
        first = phone.get(path)
        assert first.status == 200 and jpeg_size(first.body) == (150, 150), (first.status, first.body[:200])
        assert first.header("X-Cache") == "MISS" and first.header("X-Content-Type-Options") == "nosniff"
        assert f"photos/000/000/{id_photo}_{secret}_q.jpg" in s3.keys()
        again = phone.get(path)
        assert again.status == 200 and again.body == first.body and again.header("X-Cache") == "HIT"
        # A query string made up for the request is the same entry, not a GET of the bucket.
        queried = phone.get(path + "?n=12345")
        assert queried.status == 200 and queried.body == first.body and queried.header("X-Cache") == "HIT"
        wrong = phone.get(f"photos/{server_name}/{id_photo}_{'0' * 10}_q.jpg")
        assert wrong.status == 404 and wrong.json() == {"error": "No such photo size"}
        assert phone.get(f"upload/{id_photo}.jpg.bak").status == 404
        assert phone.get("upload/notes.txt").status == 404


def test_flickr_lists_give_a_php_era_photos_size_read_from_the_bucket(site):
    """A photo without details (the PHP version's, or stored before
    migration 003): its size read from the first bytes of its object (a
    ranged GET), so that every size's URL in a Flickr list has its width and
    height (flickr_api fails a whole page on one missing), and getSizes too."""
    server, s3 = site
    with signed_in("s3flickr") as phone:
        assert phone.upload(servers.photo(), "measured from the bucket").json() == {"successful": 1}
        photo = newest(phone)
    server.db.sql(f"DELETE FROM photo_details WHERE IdPhoto = {int(photo['IdPhoto'])}")
    rest = BASE_URL + "services/rest/"
    plain = {"format": "json", "nojsoncallback": "1"}
    listed = get_json(rest, method="flickr.photos.search", user_id=photo["IdUser"], extras="url_s,url_o,o_dims", **plain)
    found = listed["photos"]["photo"][0]
    assert found["id"] == photo["IdPhoto"], listed
    assert (found["width_o"], found["height_o"], found["o_width"]) == (1000, 750, "1000"), found
    assert (found["width_s"], found["height_s"]) == (240, 180), found
    sizes = get_json(rest, method="flickr.photos.getSizes", photo_id=photo["IdPhoto"], **plain)["sizes"]["size"]
    assert all("width" in size and "height" in size for size in sizes), sizes


def get_json(url: str, **params) -> dict:
    with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(params), timeout=30) as r:
        return json.loads(r.read())


def test_delete_removes_every_object_of_the_photo(site):
    server, s3 = site
    with signed_in("s3del") as phone:
        assert phone.upload(servers.photo(), "to delete").json() == {"successful": 1}
        photo = newest(phone)
        id_photo = photo["IdPhoto"]
        assert phone.get(f"photos/{photo['server']}/{id_photo}_{photo['secret']}_m.jpg").status == 200
        mine = [k for k in s3.keys() if f"/{id_photo}_" in k or k.startswith(f"upload/{id_photo}")]
        assert len(mine) == 4, mine
        assert phone.call({"command": "delete", "IdPhoto": id_photo}).json() == {"successful": 1}
        assert not [k for k in s3.keys() if f"/{id_photo}_" in k or k.startswith(f"upload/{id_photo}")]


def test_the_bucket_down_is_a_clear_answer_and_the_stream_goes_on(site):
    server, s3 = site
    with signed_in("s3down") as phone:
        assert phone.upload(servers.photo(), "before").json() == {"successful": 1}
        before = newest(phone)["IdPhoto"]
        assert phone.get(f"upload/{before}-thumb.jpg").status == 200  # now in nginx's cache
        rows = len(phone.stream().json()["result"])
        s3.freeze(True)
        try:
            started = time.monotonic()
            assert phone.upload(servers.photo(), "while down").json() == UNAVAILABLE
            assert time.monotonic() - started < 10, "bounded by s3_timeout_ms"
            assert len(phone.stream().json()["result"]) == rows, "no row for the photo the bucket did not take"
            cached = phone.get(f"upload/{before}-thumb.jpg")
            assert cached.status == 200 and jpeg_size(cached.body) == (180, 180), "served from nginx's cache"
        finally:
            s3.freeze(False)
        assert jpegs_in(server.upload_dir) == [] and not list(server.upload_dir.glob(".spool-*"))
        ready_once_the_bucket_answers()
        assert phone.upload(servers.photo(), "after").json() == {"successful": 1}
        after = newest(phone)["IdPhoto"]
        assert phone.get(f"upload/{after}.jpg").status == 200


def test_repair_sets_an_object_without_a_row_aside(site):
    server, s3 = site
    bucket = s3.url.rsplit("/", 1)[1]
    s3.client().put_object(Bucket=bucket, Key="upload/987654.jpg", Body=servers.photo())
    s3.client().put_object(Bucket=bucket, Key="upload/987654-thumb.jpg", Body=servers.photo())
    run = lambda *args: subprocess.run([str(server.binary), "repair", *args, "--config", str(server.config_path)],  # noqa: E731
                                       env=servers.clean_env(), capture_output=True, text=True, timeout=120)
    dry = run("--grace", "0", "--dry-run")
    # (With the upload the frozen bucket took late: its objects have no row either.)
    assert dry.returncode == 0 and "would move files without a row" in dry.stdout and "upload/987654.jpg" in dry.stdout, dry
    done = run("--grace", "0", "--yes")
    assert done.returncode == 0, done
    keys = s3.keys()
    assert "upload/987654.jpg" not in keys and ".removed/upload/987654.jpg" in keys, keys
    assert "0 files without a row" in run("--grace", "0", "--dry-run").stdout


def test_copy_photos_to_s3_moves_a_folder_into_the_bucket(site):
    server, s3 = site
    photo = servers.photo()
    (server.upload_dir / "987600.jpg").write_bytes(photo)
    try:
        run = lambda: subprocess.run([str(server.binary), "copy-photos-to-s3", "--config", str(server.config_path)],  # noqa: E731
                                     env=servers.clean_env(), capture_output=True, text=True, timeout=120)
        first = run()
        assert first.returncode == 0 and "1 photo files copied" in first.stdout, first
        assert s3.client().get_object(Bucket=s3.url.rsplit("/", 1)[1], Key="upload/987600.jpg")["Body"].read() == photo
        again = run()
        assert again.returncode == 0 and "0 photo files copied" in again.stdout and "1 there already" in again.stdout, again
    finally:
        (server.upload_dir / "987600.jpg").unlink()


def test_check_and_readiness_name_the_bucket_when_it_is_down(site):
    server, s3 = site
    check = [str(server.binary), "check", "--config", str(server.config_path)]
    s3.freeze(True)
    try:
        # A worker keeps its readiness answer for a second (the one before the freeze, ready, too).
        status, body = servers.wait_for(lambda: (lambda answer: answer if answer[0] != 200 else None)(
            servers.http_get(READY_URL)), 20, what="the readiness page to see the bucket down")
        assert status == 503 and "\ns3: " in body and "database" not in body, (status, body)
        p = subprocess.run(check, env=servers.clean_env(), capture_output=True, text=True, timeout=60)
        assert p.returncode == 1 and "\nFAIL s3: " in p.stdout and "check failed: s3" in p.stderr, p.stdout + p.stderr
    finally:
        s3.freeze(False)
    ready_once_the_bucket_answers()
    p = subprocess.run(check, env=servers.clean_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "\nok   s3: " in p.stdout, p.stdout + p.stderr
