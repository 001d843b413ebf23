"""The Flickr-compatible REST endpoint (/iReporter/services/rest/) through
nginx, driven by two real Flickr client libraries from PyPI (`flickrapi` and
`flickr_api`, installed by scripts/deps.sh), unchanged, given our REST URL,
in XML (etree) and JSON; JSONP, the hostile callbacks and a hostile Host
header by hand."""
from __future__ import annotations

import functools
import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from appclient import jpeg_size
from e2e import ALICE_PASS, OURS, R_ALICE, SUCCESS, check_api

flickrapi = pytest.importorskip("flickrapi", reason="scripts/deps.sh installs flickrapi")

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the Flickr endpoint is ours: the 2012 original has none")]

TITLES = ["Zoë à la plage", "東京タワー <b>&", "sunset over the pier"]


@pytest.fixture(scope="module")
def rest_url(fresh_db, endpoint, images, base_url):
    from appclient import AppClient
    with AppClient(endpoint) as phone:
        check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
        for title in TITLES:  # IdPhoto 2, 3, 4
            check_api(phone.upload(images.photo, title), SUCCESS)
        assert b'"result"' in phone.call({"command": "comment", "IdPhoto": "3", "text": "très <b>beau</b>"}).body
    return base_url + "services/rest/"


def client(rest_url: str, format: str):
    """A Flickr client as its documentation makes one, pointed at us."""
    flickr = flickrapi.FlickrAPI("any-key", "any-secret", format=format, store_token=False)
    flickr.REST_URL = rest_url
    return flickr


def get(rest_url: str, headers: dict[str, str] | None = None, **params) -> tuple[str, bytes]:
    request = urllib.request.Request(rest_url + "?" + urllib.parse.urlencode(params), headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.headers["Content-Type"], r.read()


def web_page(base_url: str) -> str:
    """The site's address in the answers: the stack's nginx names itself
    `server_name localhost` (deploy/nginx/nginx-private.conf.in), on the port
    the tests reach it at."""
    return f"http://localhost:{urllib.parse.urlsplit(base_url).port}/"


@pytest.fixture
def flickr_api_at(rest_url, monkeypatch):
    """PyPI's `flickr_api` as its README sets it up (keys), its calls sent to
    our REST URL: the library binds Flickr's URL as call_api's default, so
    the one call every method goes through is given ours."""
    flickr_api = pytest.importorskip("flickr_api", reason="scripts/deps.sh installs flickr_api")
    flickr_api.set_keys(api_key="any-key", api_secret="any-secret")
    monkeypatch.setattr(flickr_api.method_call, "call_api",
                        functools.partial(flickr_api.method_call.call_api, request_url=rest_url))
    return flickr_api


def test_parsed_json_search_with_extras(rest_url):
    rsp = client(rest_url, "parsed-json").photos.search(text="zoe", extras="owner_name,url_t,url_q,url_o")
    assert rsp["stat"] == "ok"
    photos = rsp["photos"]
    assert (photos["page"], photos["pages"], photos["perpage"], photos["total"]) == (1, 1, 100, 1)
    photo = photos["photo"][0]
    assert photo["id"] == "2" and photo["owner"] == "1" and photo["farm"] == 0 and photo["ispublic"] == 1
    assert photo["title"] == "Zoë à la plage" and photo["ownername"] == "alice"
    secret = photo["secret"]
    assert len(secret) == 10 and photo["server"] == "000000"
    assert photo["url_t"].endswith(f"/iReporter/photos/000000/2_{secret}_t.jpg")
    assert (photo["width_t"], photo["height_t"]) == (100, 100) and (photo["width_o"], photo["height_o"]) == (640, 640)
    with urllib.request.urlopen(photo["url_o"], timeout=10) as r:
        assert r.read()[:2] == b"\xff\xd8", "the URL serves the photo"
    with urllib.request.urlopen(photo["url_q"], timeout=10) as r:
        assert jpeg_size(r.read()) == (150, 150), "the Large Square, made for this request"


def test_the_tutorials_client_builds_photo_urls_that_are_answered(rest_url, base_url):
    """The 2012 companion tutorial's Flickr search client: a search in plain
    JSON, then each photo at farm{farm}.staticflickr.com/{server}/{id}_{secret}_m.jpg,
    its `server` read with intValue (the zeros gone) and this host's name in
    place of Flickr's (deploy/nginx/flickr-host.conf): the size its `url_s`
    extra names, byte for byte; another photo's server or secret, a 404."""
    _, body = get(rest_url, method="flickr.photos.search", api_key="any-key", text="zoe", per_page="20",
                  format="json", nojsoncallback="1", extras="url_s,url_q")
    photos = json.loads(body)["photos"]["photo"]
    assert [p["id"] for p in photos] == ["2"]
    host = base_url[:-len("iReporter/")]

    def fetch(url: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.headers["Content-Type"], r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["Content-Type"], e.read()

    for p in photos:
        tutorial = f"{host}{int(p['server'])}/{int(p['id'])}_{p['secret']}"
        for suffix, extra in (("_m", "url_s"), ("_q", "url_q")):
            status, content_type, jpeg = fetch(tutorial + suffix + ".jpg")
            assert (status, content_type) == (200, "image/jpeg"), tutorial + suffix
            assert jpeg == fetch(p[extra])[2]
        assert fetch(f"{host}{p['server']}/{p['id']}_{p['secret']}_m.jpg")[0] == 200, "the server as sent, zeros kept"
        assert fetch(f"{host}{int(p['server']) + 1}/{p['id']}_{p['secret']}_m.jpg")[0] == 404
        assert fetch(f"{host}0/{p['id']}_{'0' * 10}_m.jpg")[0] == 404


def test_every_method_listed_is_described(rest_url):
    flickr = client(rest_url, "parsed-json")
    names = [m["_content"] for m in flickr.reflection.getMethods()["methods"]["method"]]
    assert "flickr.reflection.getMethodInfo" in names
    for name in names:
        info = flickr.reflection.getMethodInfo(method_name=name)
        assert info["stat"] == "ok" and info["method"]["name"] == name, info
    search = {a["name"]: a["optional"] for a in flickr.reflection.getMethodInfo(method_name="flickr.photos.search")["arguments"]["argument"]}
    assert search["text"] == "1" and search["tag_mode"] == "1" and search["api_key"] == 0


def test_tags_find_the_photos_of_any_tag_unless_all_are_asked(rest_url):
    flickr = client(rest_url, "parsed-json")
    anyone = flickr.photos.search(tags="sunset,東京")["photos"]
    assert (anyone["total"], [p["id"] for p in anyone["photo"]]) == (2, ["4", "3"]), "Flickr's default: any"
    assert flickr.photos.search(tags="sunset,東京", tag_mode="all")["photos"]["total"] == 0
    assert [p["id"] for p in flickr.photos.search(tags="sunset,pier", tag_mode="all")["photos"]["photo"]] == ["4"]


def test_date_upload_and_original_dimensions(rest_url):
    before = int(time.time())
    flickr = client(rest_url, "parsed-json")
    photo = flickr.photos.search(text="zoe", extras="date_upload,o_dims")["photos"]["photo"][0]
    assert isinstance(photo["dateupload"], str) and before - 600 <= int(photo["dateupload"]) <= before
    assert (photo["o_width"], photo["o_height"]) == ("640", "640"), "strings, as Flickr's; the upload's size"
    element = client(rest_url, "etree").photos.search(text="zoe", extras="o_dims,date_upload").find("photos/photo")
    assert element.get("dateupload") == photo["dateupload"] and element.get("o_width") == "640"


def test_upload_dates_narrow_a_search(rest_url):
    flickr = client(rest_url, "parsed-json")
    uploaded = int(flickr.photos.search(text="zoe", extras="date_upload")["photos"]["photo"][0]["dateupload"])
    day = time.strftime("%Y-%m-%d", time.gmtime(uploaded))

    def ids(**dates) -> list[str]:
        return [p["id"] for p in flickr.photos.search(user_id="1", **dates)["photos"]["photo"]]

    assert ids(min_upload_date=str(uploaded - 600), max_upload_date=str(uploaded + 600)) == ["4", "3", "2"]
    assert ids(min_upload_date=str(uploaded + 3600)) == []
    assert ids(max_upload_date=str(uploaded - 3600)) == []
    # MySQL datetimes, as Flickr takes them; the day's start and end hold the photos.
    assert ids(min_upload_date=f"{day} 00:00:00", max_upload_date=f"{day} 23:59:59") == ["4", "3", "2"]
    assert ids(min_upload_date=day, text="zoe") == ["2"]
    # A date alone limits a search as Flickr's do; one that is no date is ignored, as Flickr ignores it.
    assert flickr.photos.search(min_upload_date=str(uploaded - 600))["photos"]["total"] == 3
    assert ids(min_upload_date="next tuesday") == ["4", "3", "2"]


def test_a_sync_tool_walks_oldest_first_from_its_checkpoint(rest_url, flickr_api_at):
    """flickr_api's Walker pages photos.search as a sync tool does: the
    account's photos uploaded since its checkpoint, oldest first. (flickrapi's
    walk() needs lxml on Python 3.9 and later: ElementTree lost getchildren.)"""
    flickr = client(rest_url, "parsed-json")
    uploaded = int(flickr.photos.search(text="zoe", extras="date_upload")["photos"]["photo"][0]["dateupload"])

    def walked(**params) -> list[str]:
        return [photo.id for photo in flickr_api_at.Walker(flickr_api_at.Photo.search, per_page=2, **params)]

    assert walked(user_id="1", min_upload_date=str(uploaded - 600), sort="date-posted-asc") == ["2", "3", "4"]
    assert walked(user_id="1", sort="date-taken-asc") == ["2", "3", "4"]
    assert walked(user_id="1") == ["4", "3", "2"]
    # A backup tool walks an account's whole list, a photo a page.
    pages = [flickr.people.getPhotos(user_id="1", per_page="1", page=str(n))["photos"] for n in (1, 2, 3)]
    assert [(p["pages"], p["total"], [photo["id"] for photo in p["photo"]]) for p in pages] == [(3, 3, ["4"]), (3, 3, ["3"]), (3, 3, ["2"])]
    assert [p["id"] for p in flickr.photos.search(tags="zoe,pier", sort="date-posted-asc")["photos"]["photo"]] == ["2", "4"]
    assert [p["id"] for p in flickr.photos.search(user_id="1", sort="interestingness-desc")["photos"]["photo"]] == ["4", "3", "2"]


def test_etree_methods(rest_url):
    flickr = client(rest_url, "etree")
    recent = flickr.photos.getRecent(per_page="2")
    assert [p.get("id") for p in recent.find("photos")] == ["4", "3"]
    assert recent.find("photos").get("total") == "3"
    info = flickr.photos.getInfo(photo_id="3")
    assert info.find("photo/title").text == "東京タワー <b>&"
    assert info.find("photo/owner").get("username") == "alice"
    sizes = flickr.photos.getSizes(photo_id="4")
    assert [s.get("label") for s in sizes.find("sizes")] == ["Square", "Large Square", "Thumbnail", "Small", "Small 320",
                                                            "Small 400", "Medium", "Original"], "those below 640x640"
    for size in sizes.find("sizes"):
        with urllib.request.urlopen(size.get("source"), timeout=10) as r:
            assert jpeg_size(r.read()) == (int(size.get("width")), int(size.get("height"))), size.get("label")
    assert info.find("photo").get("originalsecret") == info.find("photo").get("secret")
    assert [p.get("id") for p in flickr.people.getPublicPhotos(user_id="1").find("photos")] == ["4", "3", "2"]
    assert flickr.photos.comments.getList(photo_id="2").find("comments").get("photo_id") == "2"
    comments = flickr.photos.comments.getList(photo_id="3").find("comments")
    # HTML as Flickr's: the plain text typed, escaped (a web client shows the words, not markup).
    assert [(c.get("author"), c.get("authorname"), c.text) for c in comments] == [("1", "alice", "très &lt;b&gt;beau&lt;/b&gt;")]
    methods = [m.text for m in flickr.reflection.getMethods().find("methods")]
    assert "flickr.photos.search" in methods and "flickr.test.echo" in methods
    assert flickr.test.echo(foo="bar").find("foo").text == "bar"


def test_flickr_errors_reach_the_client(rest_url):
    for format in ("etree", "parsed-json"):
        flickr = client(rest_url, format)
        with pytest.raises(flickrapi.FlickrError) as failure:
            flickr.photos.getInfo(photo_id="999")
        assert failure.value.code == 1
        with pytest.raises(flickrapi.FlickrError) as failure:
            flickr.photos.delete(photo_id="2")
        assert failure.value.code == 112
        with pytest.raises(flickrapi.FlickrError) as failure:
            flickr.photos.search()
        assert failure.value.code == 3


def test_jsonp_and_plain_json(rest_url):
    content_type, body = get(rest_url, method="flickr.photos.search", text="タワー", format="json")
    assert content_type == "text/javascript; charset=utf-8"
    assert body.startswith(b"jsonFlickrApi({") and body.endswith(b"})")
    assert json.loads(body[len(b"jsonFlickrApi("):-1])["photos"]["photo"][0]["id"] == "3"
    assert b"<" not in body, "nothing in a title can close a <script>"
    content_type, body = get(rest_url, method="flickr.test.echo", format="json", jsoncallback="my.cb")
    assert body.startswith(b"my.cb({")
    content_type, body = get(rest_url, method="flickr.photos.getRecent", format="json", nojsoncallback="1")
    assert content_type == "application/json; charset=utf-8"
    assert json.loads(body)["photos"]["total"] == 3


def test_a_web_page_anywhere_may_read_the_answers(rest_url):
    """Browser clients (flickr-sdk, a page's fetch) on their own origin, as
    Flickr's answers allow: public data, no cookie read on this route."""
    query = urllib.parse.urlencode({"method": "flickr.photos.getRecent", "format": "json", "nojsoncallback": "true"})
    request = urllib.request.Request(f"{rest_url}?{query}", headers={"Origin": "https://elsewhere.example"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Access-Control-Allow-Origin"] == "*"
        assert json.loads(answer.read())["photos"]["total"] == 3
    preflight = urllib.request.Request(rest_url, method="OPTIONS", headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization"})
    with urllib.request.urlopen(preflight, timeout=10) as answer:
        assert answer.status == 204 and answer.headers["Access-Control-Allow-Origin"] == "*"
        assert "Authorization" in answer.headers["Access-Control-Allow-Headers"]


def test_flickr_api_photo_info_and_its_owner(flickr_api_at, base_url):
    photo = flickr_api_at.Photo(id="3")
    info = photo.getInfo()  # Flickr's whole answer: usage, visibility, dates, tags, notes...
    assert info["title"] == "東京タワー <b>&" and info["comments"] == "1" and info["tags"] == [] and info["notes"] == []
    assert (info["candownload"], info["ispublic"], info["takenunknown"]) == (1, 1, "1")
    assert int(info["posted"]) <= int(info["lastupdate"]) <= int(time.time())
    assert info["urls"]["url"][0]["text"] == web_page(base_url) + "#/photo/3", "the photo in the web client"
    assert photo.title == "東京タワー <b>&" and photo.comments == 1, "the lazy load: getInfo, its fields converted"
    owner = photo.owner
    assert owner.id == "1" and owner.username == "alice"
    person = flickr_api_at.Person(id="1")
    assert person.photos_info["count"] == 3, "people.getInfo, loaded lazily"
    found = flickr_api_at.Person.findByUserName("Alice")  # people.findByUsername: a typed name to its user_id
    assert found.id == "1" and [p.id for p in found.getPhotos()] == ["4", "3", "2"], "people.getPhotos"
    assert int(person.photos_info["firstdate"]) <= int(info["posted"]), "photo 2, uploaded before photo 3"
    assert time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(person.photos_info["firstdate"]))) == person.photos_info["firstdatetaken"]
    assert person.username == "alice" and person.ispro is False
    with pytest.raises(flickr_api_at.flickrerrors.FlickrAPIError) as failure:
        flickr_api_at.Person(id="99").getInfo()
    assert failure.value.code == 1


def test_flickr_api_downloads_a_photo_whose_size_was_never_kept(flickr_api_at, db, tmp_path):
    """A PHP-era photo has no photo_details row: getSizes reads its size from
    the file's header (flickr_api takes every size's width and height to
    choose the largest, and failed with KeyError: 'height')."""
    kept = db.run("SELECT created, width, height FROM photo_details WHERE IdPhoto = 4")[0]
    db.run("DELETE FROM photo_details WHERE IdPhoto = 4")
    try:
        photo = flickr_api_at.Photo(id="4")
        sizes = photo.getSizes()
        assert (sizes["Original"]["width"], sizes["Original"]["height"]) == (640, 640), sizes["Original"]
        # As a photo whose size was kept: only the sizes smaller than it.
        assert "Large" not in sizes and "Medium 640" not in sizes and "Medium" in sizes, sorted(sizes)
        # A list asked for the sizes' URLs gives their dimensions too (the
        # library read width_s beside url_s and failed the whole page).
        listed = {p.id: p for p in flickr_api_at.Photo.getRecent(extras="url_s,url_q,url_o,o_dims")}
        assert (listed["4"].width_s, listed["4"].height_s, listed["4"].o_width) == (240, 240, "640"), vars(listed["4"])
        saved = tmp_path / "legacy"
        photo.save(str(saved))
        assert jpeg_size((tmp_path / "legacy.jpg").read_bytes()) == (640, 640)
    finally:
        db.run(f"INSERT INTO photo_details (IdPhoto, created, width, height) VALUES (4, {', '.join(kept)})")


def test_flickr_api_search_with_extras_and_a_download(flickr_api_at, tmp_path):
    photos = flickr_api_at.Photo.search(text="zoe", extras="owner_name,date_taken,license,views,tags,date_upload,o_dims")
    assert [p.id for p in photos] == ["2"]
    photo = photos[0]
    assert (photo.ownername, photo.license, photo.views, photo.tags, photo.datetakenunknown) == ("alice", "0", 0, "", "1")
    assert photo.owner.username == "alice", "the owner, a Person(id) loaded through people.getInfo"
    assert photo.sizes["Large Square"]["width"] == 150 and photo.sizes["Original"]["width"] == 640
    photo.save(str(tmp_path / "zoe"))  # the largest size's URL, as the library fetches it
    assert (tmp_path / "zoe.jpg").read_bytes()[:2] == b"\xff\xd8"


def test_flickrapi_get_info_and_people_get_info(rest_url, base_url):
    flickr = client(rest_url, "parsed-json")
    photo = flickr.photos.getInfo(photo_id="3")["photo"]
    assert photo["comments"] == {"_content": "1"} and photo["usage"]["candownload"] == 1
    assert photo["dates"]["takenunknown"] == "1" and photo["tags"] == {"tag": []}
    assert photo["owner"] == {"nsid": "1", "username": "alice", "realname": "", "location": "", "iconserver": "0",
                              "iconfarm": 0, "path_alias": None}
    person = flickr.people.getInfo(user_id="1")["person"]
    assert person["username"]["_content"] == "alice" and person["photos"]["count"]["_content"] == 3
    assert person["photosurl"]["_content"] == web_page(base_url) + "#/user/1"
    xml = client(rest_url, "etree").people.getInfo(user_id="1")
    assert xml.find("person/username").text == "alice" and xml.find("person/photos/count").text == "3"


def test_a_hostile_host_header_is_not_in_any_url(rest_url, base_url):
    """The answers' URLs come from the configured address (here the stack's
    nginx `server_name localhost` and its port), not from the Host header:
    a cache in front could hand a poisoned answer to everyone."""
    for params in [dict(method="flickr.photos.getInfo", photo_id="2"), dict(method="flickr.photos.getSizes", photo_id="2"),
                   dict(method="flickr.people.getInfo", user_id="1"),
                   dict(method="flickr.photos.search", text="zoe", extras="url_o,url_q"),
                   dict(method="flickr.photos.getRecent", extras="url_t")]:
        for format in [{}, {"format": "json", "nojsoncallback": "1"}]:
            _, body = get(rest_url, headers={"Host": "evil.example"}, **params, **format)
            assert b"evil.example" not in body, params
            assert web_page(base_url).encode() in body, params


@pytest.mark.parametrize("callback", ["alert(document.cookie)//", "</script><script>x", "a b", "1x", "x" * 100,
                                      "eval", "document.write", "x.constructor.constructor", "Function", "setTimeout",
                                      "window.location.assign", "a.__proto__"])
def test_a_callback_with_script_in_it_is_refused(rest_url, callback):
    content_type, body = get(rest_url, method="flickr.test.echo", format="json", jsoncallback=callback)
    assert content_type == "application/json; charset=utf-8"
    answer = json.loads(body)
    assert (answer["stat"], answer["code"]) == ("fail", 111)
    assert not body.startswith(callback.encode()) and b"<" not in body
    if not callback.replace(".", "").replace("_", "").isalnum():
        assert callback.encode() not in body


def test_hostile_paging_and_queries(rest_url):
    flickr = client(rest_url, "parsed-json")
    photos = flickr.photos.getRecent(per_page="100000", page="-1")["photos"]
    assert (photos["page"], photos["perpage"]) == (1, 500), "brought into range, as Flickr does"
    for text in ["' OR 1=1 --", "+sun* -pier", '"sunset"', "@@version", "x" * 150]:
        assert flickr.photos.search(text=text)["stat"] == "ok"
    with pytest.raises(flickrapi.FlickrError) as failure:
        flickr.photos.search(text="x " * 150)
    assert failure.value.code == 3
