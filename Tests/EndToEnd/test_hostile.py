"""Hostile input through nginx: cookies, malformed multipart bodies,
injection strings in every field, one session used concurrently, forged
session files, a login loop, text that hides or impersonates, progressive
JPEG memory bombs, the upload folder's other files.

Always: HTTP 200 from the API (never 5xx), an answer within 10 s, a clean
JSON body (or the no-command empty answer), no file outside the session dir,
nothing left in the upload dir by a refused request.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import e2e
from appclient import (BOUNDARY, FilePart, multipart_body, multipart_content_type, php_json, php_urldecode,
                       send_raw)
from e2e import (ALICE_PASS, AUTH_FAILED, AUTH_REQUIRED, EMPTY_STREAM, OURS, R_ALICE, SUCCESS, check_api,
                 check_api_headers, expect)

pytestmark = pytest.mark.usefixtures("fresh_db")

S1 = b'{"result":[{"IdPhoto":"2","title":"Sunset at the pier","IdUser":"1","username":"alice"}]}'


def _fingerprint(p: Path):
    st = p.stat()
    return hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


@pytest.fixture(scope="module")
def world(fresh_db, endpoint, images, env):
    """alice, one photo (IdPhoto 2), a logged-in phone, and fingerprints of
    what must never change."""
    from appclient import AppClient
    phone = AppClient(endpoint)
    check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
    check_api(phone.upload(images.photo, "Sunset at the pier"), SUCCESS)
    sd = env.session_dir
    w = {
        "phone": phone,
        "passwd": _fingerprint(Path("/etc/passwd")),
        "session_parent": e2e.listing(sd.parent) if sd else set(),
    }
    yield w
    phone.close()
    # after the whole module: nothing escaped the session dir
    assert _fingerprint(Path("/etc/passwd")) == w["passwd"], "/etc/passwd changed"
    assert not Path("/tmp/pwned").exists()
    if sd:
        # (the stack's own files live next to the session dir too: look for session-like names only)
        appeared = e2e.listing(sd.parent) - w["session_parent"]
        suspicious = [n for n in appeared if n.startswith("sess") or "passwd" in n or n.startswith(".")]
        assert not suspicious, f"files appeared next to the session dir: {suspicious}"
        if OURS:
            # Session files and indexes, and the installation's shared state (shared_state_file's default place).
            bad = [n for n in e2e.listing(sd) if not e2e.OUR_SESSION_FILE.fullmatch(n)
                   and not e2e.OUR_SESSION_INDEX.fullmatch(n) and n != "ireporter-shared-state"]
            assert not bad, f"unexpected files in the session dir: {bad}"


# ---------------------------------------------------------------- cookies

HOSTILE_COOKIES = {
    "dotdot": "PHPSESSID=../../etc/passwd",
    "dotdot-deep": "PHPSESSID=../../../../../../../../etc/passwd",
    "dotdot-encoded": "PHPSESSID=..%2F..%2F..%2Fetc%2Fpasswd",
    "nul": "PHPSESSID=%00",
    "nul-inside": "PHPSESSID=abcdefabcdefabcdefabcdefabcdef12%00../../etc/passwd",
    "long-7k": "PHPSESSID=" + "a" * 7000,
    "dollar": "PHPSESSID=abc$def",
    "dot": "PHPSESSID=abc.def",
    "slash": "PHPSESSID=a/b/c",
    "quoted-space": 'PHPSESSID="a b"',
    "utf8": "PHPSESSID=ümlaut",
    "empty": "PHPSESSID=",
    "shell": "PHPSESSID=$(touch /tmp/pwned)",
    "sql": "PHPSESSID=' OR '1'='1",
    "never-issued-32": "PHPSESSID=" + "0123456789abcdefghijklmnopqrstuv",
    "never-issued-26": "PHPSESSID=" + "0123456789abcdefghijklmnop",
    "upper-case": "PHPSESSID=" + "A" * 32,
    "several": "PHPSESSID=aaaa; PHPSESSID=bbbb; PHPSESSID=../x",
}


@pytest.mark.parametrize("name", list(HOSTILE_COOKIES))
def test_hostile_cookie_is_no_session(world, client, env, images, name):
    cookie = HOSTILE_COOKIES[name]
    c = client()
    sd = env.session_dir
    before = e2e.listing(sd)
    uploads = e2e.listing(env.upload_dir)

    # (IdPhoto 2: the full stream grows as these tests upload)
    r = c.call({"command": "stream", "IdPhoto": "2"}, cookie=cookie)
    if not OURS:
        # PHP: an id with illegal characters makes session_start() fail, and then even the
        # Expires/Cache-Control/Pragma headers are missing: check status and body only.
        assert (r.status, r.body) == (200, S1), r
        r = c.call({"command": "upload", "title": "hostile"}, file=images.photo, cookie=cookie)
        assert (r.status, r.body) == (200, AUTH_REQUIRED), r
        return
    check_api(r, S1, "none")  # clean JSON, and OURS: no cookie, no session for it
    r = c.call({"command": "upload", "title": "hostile"}, file=images.photo, cookie=cookie)
    check_api(r, AUTH_REQUIRED, "none")
    assert e2e.listing(env.upload_dir) == uploads
    assert e2e.listing(sd) == before, f"session files changed: {e2e.listing(sd) ^ before}"

    # a login carrying the hostile cookie gets a fresh, well-formed id
    r = c.call({"command": "login", "username": "alice", "password": ALICE_PASS}, cookie=cookie)
    new = check_api(r, R_ALICE, "new")
    if sd:
        assert e2e.listing(sd) - before == {f"sess_{new}"}
    # and that id works
    r = c.upload(images.photo, f"after hostile cookie {name}")
    check_api(r, SUCCESS)
    # (alice keeps at most 20 live sessions: the world's phone must stay one of them)
    c.logout()


def test_hostile_cookie_10k(world, client):
    """10 KB is over nginx's default 8k header buffer: nginx's own 400 is
    acceptable; if it gets through, it must be treated as no session."""
    c = client()
    r = c.call({"command": "stream", "IdPhoto": "2"}, cookie="PHPSESSID=" + "b" * 10240)
    if r.status == 400:
        assert b"Request Header Or Cookie Too Large" in r.body
    elif OURS:
        check_api(r, S1, "none")
    else:
        assert (r.status, r.body) == (200, S1)


def test_several_session_cookies(world, client, images, env):
    phone = client()
    check_api(phone.login("alice", ALICE_PASS), R_ALICE, "new")
    good = phone.session_id
    c = client()
    # an unknown id first: PHP reads the first one; ours treats several as no session
    r = c.call({"command": "upload", "title": "x"}, file=images.photo,
               cookie=f"PHPSESSID=unknownunknownunknown; PHPSESSID={good}")
    check_api(r, AUTH_REQUIRED, "none")
    # the valid id first
    uploads = e2e.listing(env.upload_dir)
    r = c.call({"command": "upload", "title": "two cookies"}, file=images.photo,
               cookie=f"PHPSESSID={good}; PHPSESSID=junkjunkjunk")
    # OURS: several PHPSESSID cookies = no session (PHP: the first one wins)
    check_api(r, expect(AUTH_REQUIRED, SUCCESS), "none")
    if OURS:
        assert e2e.listing(env.upload_dir) == uploads
    phone.logout()  # (see above: alice's live sessions are capped)


# ------------------------------------------------------- malformed multipart

def _af_upload_body(photo: bytes) -> bytes:
    return multipart_body([("command", "upload"), ("title", "malformed")], [FilePart(photo)])


def _malformed_cases(photo: bytes) -> dict[str, tuple[str, bytes]]:
    good = _af_upload_body(photo)
    b = BOUNDARY.encode()
    ct = multipart_content_type()
    final = b"\r\n--" + b + b"--\r\n"
    return {
        "no-boundary-param": ("multipart/form-data", good),
        "empty-boundary-param": ("multipart/form-data; boundary=", good),
        "wrong-boundary": ("multipart/form-data; boundary=SomethingElse0123", good),
        "truncated-mid-part": (ct, good[: len(good) - len(photo) // 2]),
        "missing-final-boundary": (ct, good[: -len(final)]),
        "missing-final-boundary-with-crlf": (ct, good[: -len(final)] + b"\r\n"),
        "part-header-without-crlfcrlf": (ct, b"--" + b + b'\r\nContent-Disposition: form-data; name="command"\r\n'
                                            b"Content-Type: text/plain"),
        "part-header-never-ends": (ct, b"--" + b + b'\r\nContent-Disposition: form-data; name="command"'),
        "enormous-part-header-line": (ct, b"--" + b + b'\r\nContent-Disposition: form-data; name="'
                                      + b"a" * (1024 * 1024) + b'"\r\n\r\nupload' + final),
        "enormous-part-header-no-newline": (ct, b"--" + b + b"\r\n" + b"X" * (2 * 1024 * 1024)),
        "many-parts": (ct, multipart_body([("f%d" % i, "v") for i in range(5000)]
                                          + [("command", "upload")], [FilePart(photo)])),
        "only-final-boundary": (ct, b"--" + b + b"--\r\n"),
        "garbage": (ct, os.urandom(65536)),
        "empty-body": (ct, b""),
        "file-part-truncated-before-data": (ct, good[: good.index(b"image/jpeg\r\n") + 12]),
        "no-disposition": (ct, b"--" + b + b"\r\nContent-Type: text/plain\r\n\r\nupload" + final),
    }


CASE_NAMES = list(_malformed_cases(b"\xff\xd8\xff\xd9").keys())


@pytest.mark.parametrize("name", CASE_NAMES)
def test_malformed_multipart(world, endpoint, images, env, db, name):
    ctype, body = _malformed_cases(images.photo)[name]
    sid = world["phone"].session_id
    uploads = e2e.listing(env.upload_dir)
    rows = db.count("photos")
    head = (f"POST {endpoint.prefix} HTTP/1.1\r\nHost: {endpoint.host_header}\r\nAccept: application/json\r\n"
            f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            + (f"Cookie: PHPSESSID={sid}\r\n" if sid else "") + "Connection: close\r\n\r\n")
    r = send_raw(endpoint.host, endpoint.port, head.encode() + body, timeout=10)
    assert r.status < 500, f"{r.status_line}: {r.body[:300]!r}"
    if not OURS:
        return  # the PHP original: only "no 5xx, no hang"
    check_api_headers(r)
    if name == "many-parts" and r.body == SUCCESS:
        return  # 5000 extra fields are not malformed: storing the photo is fine too (PHP: max_input_vars)
    if r.body != b"":
        obj = json.loads(r.body)
        assert isinstance(obj, dict) and list(obj) == ["error"] and isinstance(obj["error"], str), r.body
    assert e2e.listing(env.upload_dir) == uploads, "a malformed request left files in the upload dir"
    assert db.count("photos") == rows, "a malformed request inserted a row"
    assert not r.set_cookies


def test_still_healthy_after_malformed(world, images):
    """The session and the server survive all of the above."""
    phone = world["phone"]
    check_api(phone.stream("2"), S1)
    check_api(phone.upload(images.photo, "after the malformed ones"), SUCCESS)


# ------------------------------------------------------------- injections

INJECTIONS = [
    "' OR '1'='1",
    "\"; DROP TABLE login; --",
    "Robert'); DROP TABLE photos;--",
    "<script>alert(1)</script>",
    "\\' OR 1=1 #",
    "a\\b\\\\c\\",
    "${jndi:ldap://x/a}",
    "{{7*7}}<%= 7*7 %>",
    "../../etc/passwd",
    "tab\there\nnewline\rcr",
    "😀 ünïcödé ✓",
    "%27 OR 1=1 %2D%2D",
    "a+b%41%zz%",
    "\u2028\u2029\x7f",
    "0x414243",
    "NULL",
]


@pytest.mark.parametrize("i", range(len(INJECTIONS)))
def test_injection_in_title(world, i, images, db):
    title = INJECTIONS[i]
    phone = world["phone"]
    if OURS and any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in title):
        # OURS: control characters in a title are refused, nothing is stored
        before = phone.stream().body
        check_api(phone.upload(images.photo, title), b'{"error":"Titles cannot contain control characters"}')
        assert phone.stream().body == before
        return
    check_api(phone.upload(images.photo, title), SUCCESS)
    newest = phone.stream().json()["result"][0]["IdPhoto"]
    # OURS: stored exactly as sent (PHP decodes it a second time)
    stored = title.encode() if OURS else php_urldecode(title)
    r = phone.stream(newest)
    expected_title = stored.decode("utf-8", errors="strict")
    check_api(r, php_json({"result": [{"IdPhoto": newest, "title": expected_title, "IdUser": "1",
                                       "username": "alice"}]}))
    assert db.photo_titles_hex()[int(newest)] == stored


USERNAME_INJECTIONS = [
    "o'brien\"--",
    "x' OR 'x'='x",
    "<b>bold</b>",
    "back\\slash",
    "semi;colon&amp",
    "ünï 😀",
    "a%2Bb+c",  # decoded a second time, as PHP did: 'a+b c'
    "Robert'); DROP TABLE login;--",
]


# The failed logins below come from an address of their own: each is another
# account failing from one network, and twenty of those from 127.0.0.1, where
# the other modules' phones log in, would throttle them (LoginThrottle).
INJECTING_PHONE = "127.0.60.1"


@pytest.mark.parametrize("i", range(len(USERNAME_INJECTIONS)))
def test_injection_in_username_and_password(world, client, i):
    user = USERNAME_INJECTIONS[i]
    password = "p' OR ''='" + user
    stored = php_urldecode(user).decode()  # usernames ARE decoded a second time (both flavours)
    c = client(source=INJECTING_PHONE)
    r = c.register(user, password)
    body = b'{"result":[{"IdUser":"%s","username":%s}]}'
    id_user = r.json()["result"][0]["IdUser"] if r.body.startswith(b'{"result"') else "?"
    check_api(r, body % (id_user.encode(), php_json(stored)), "new")
    r = client(source=INJECTING_PHONE).login(user, password)
    check_api(r, body % (id_user.encode(), php_json(stored)), "new")
    r = client(source=INJECTING_PHONE).login(user, "wrong' OR '1'='1")
    check_api(r, AUTH_FAILED)


@pytest.mark.parametrize("user,password", [("x' OR 'x'='x", "x' OR 'x'='x"), ("alice' -- ", "x"),
                                           ("alice'#", "x"), ("' UNION SELECT 1,2 -- ", "x")])
def test_login_injection_fails(world, client, user, password):
    # ("x' OR 'x'='x" exists as a user from the test above, but with another password)
    check_api(client(source=INJECTING_PHONE).login(user, password), AUTH_FAILED)


STREAM_ALL = object()


@pytest.mark.parametrize("value,result", [
    ("2 OR 1=1", "2"), ("2'; DROP TABLE photos; --", "2"), ("0 OR 1=1", STREAM_ALL),
    ("-1 UNION SELECT 1,2,3,4", None), ("2abc", "2"), (" 2", "2"), ("+2", "2"), ("002", "2"), ("2.9", "2"),
    ("-0", STREAM_ALL), ("", STREAM_ALL), ("99999999999999999999", None),
])
def test_injection_in_idphoto(world, value, result):
    """IdPhoto is (int)-cast as PHP did."""
    phone = world["phone"]
    r = phone.stream(value)
    check_api_headers(r)
    if result is STREAM_ALL:
        assert r.body == phone.stream().body
    elif result is None:
        assert r.body == EMPTY_STREAM
    else:
        assert r.body == S1


@pytest.mark.parametrize("command", ["stream' OR '1'='1", "STREAM", "stream ", "login;upload", "../upload",
                                     "register\x00", ""])
def test_injection_in_command(world, client, command):
    r = client().call([("command", command), ("username", "alice"), ("password", ALICE_PASS)])
    check_api(r, b"", "none")  # anything but the five commands: the empty answer


def test_injection_in_field_names(world, client, images, env):
    c = client()
    fields = [("command", "stream"), ("IdPhoto\"; filename=\"x.php", "2"), ("../../x", "y"), ("a[b][c]", "d")]
    r = c.call(fields)
    check_api_headers(r)
    assert r.json()["result"]
    uploads = e2e.listing(env.upload_dir)
    r = world["phone"].call([("command", "upload"), ("title", "odd filename")],
                            files=[FilePart(images.photo, filename="../../../../tmp/evil.php")])
    check_api_headers(r)
    assert r.body in (SUCCESS, b'{"error":"Upload malfunction"}')
    assert not Path("/tmp/evil.php").exists()
    new = e2e.listing(env.upload_dir) - uploads
    if env.upload_dir:
        assert all(n.endswith(".jpg") and n.split("-")[0].split(".")[0].isdigit() for n in new), new


# ------------------------------------------------------------- concurrency

def test_concurrent_requests_of_one_session(world, endpoint, images, env):
    """16 requests at once with the same cookie: all answered correctly."""
    from appclient import AppClient
    sid = world["phone"].session_id
    titles = [f"concurrent {i}" for i in range(8)]
    errors = []

    def upload(t):
        with AppClient(endpoint) as c:
            return c.call({"command": "upload", "title": t}, file=images.photo, cookie=f"PHPSESSID={sid}")

    def stream(_):
        with AppClient(endpoint) as c:
            return c.call({"command": "stream"}, cookie=f"PHPSESSID={sid}")

    with ThreadPoolExecutor(16) as ex:
        ups = [ex.submit(upload, t) for t in titles]
        sts = [ex.submit(stream, i) for i in range(8)]
        for f in ups:
            r = f.result(timeout=30)
            check_api(r, SUCCESS, "none")
        for f in sts:
            r = f.result(timeout=30)
            check_api_headers(r)
            assert r.json()["result"]
    rows = world["phone"].stream().json()["result"]
    got = [x["title"] for x in rows if x["title"].startswith("concurrent ")]
    assert sorted(got) == sorted(titles)
    ids = [int(x["IdPhoto"]) for x in rows if x["title"].startswith("concurrent ")]
    assert len(set(ids)) == 8
    for i in ids:
        e2e.check_stored_photo(env, i, images.photo)
    # the session is still logged in
    check_api(world["phone"].upload(images.photo, "after concurrency"), SUCCESS)


def test_concurrent_registrations(endpoint, env):
    """8 phones register at once: 8 users, 8 distinct session ids."""
    from appclient import AppClient
    barrier = threading.Barrier(8)

    def reg(i):
        with AppClient(endpoint) as c:
            barrier.wait(timeout=10)
            r = c.register(f"racer{i}", "pw")
            return r, c.session_id

    with ThreadPoolExecutor(8) as ex:
        res = list(ex.map(reg, range(8)))
    ids, sids = set(), set()
    for i, (r, s) in enumerate(res):
        check_api_headers(r)
        row = r.json()["result"][0]
        assert row["username"] == f"racer{i}"
        ids.add(row["IdUser"])
        sids.add(s)
    assert len(ids) == 8 and len(sids) == 8
    if OURS and env.session_dir:
        for s in sids:
            assert e2e.session_file(env, s).is_file()


# ------------------------------------------------- forged and piled-up sessions

def test_a_session_file_someone_else_wrote_is_no_session(world, client, env, images):
    """Debian's /var/lib/php/sessions is 1733: a local user can create
    sess_<id> there, and must not become user 1 by it."""
    if not OURS or not env.session_dir:
        pytest.skip("needs our server and its session dir")
    sid = "forgedforgedforgedforgedforged12"
    forged = env.session_dir / f"sess_{sid}"
    forged.write_text('IdUser|s:1:"1";')
    try:
        for uid, mode in ((65534, 0o600), (os.stat(env.session_dir).st_uid, 0o666)):
            os.chown(forged, uid, uid)
            forged.chmod(mode)
            r = client().call({"command": "upload", "title": "forged"}, file=images.photo, cookie=f"PHPSESSID={sid}")
            check_api(r, AUTH_REQUIRED, "none")
    finally:
        forged.unlink()


def test_a_login_loop_keeps_at_most_20_sessions(world, client, env):
    """session_max_per_user (20): every login makes a session, the oldest go."""
    if not OURS or not env.session_dir:
        pytest.skip("needs our server and its session dir")
    r = client().register("looper", "pw")
    assert r.json()["result"][0]["username"] == "looper", r.body
    ids = []
    for _ in range(25):
        r = client().login("looper", "pw")
        ids.append(check_api(r, r.body, "new"))
    live = [i for i in ids if e2e.session_file(env, i).exists()]
    assert live == ids[-20:], f"{len(live)} of the loop's sessions live"


# -------------------------------------------------------- text that hides

# (text, how a title answers it: refused as control or invisible, or stored:
# a Braille blank between words is a space to a title, and no name)
CONTROL = b'{"error":"Titles cannot contain control characters"}'
INVISIBLE = b'{"error":"Titles cannot contain invisible characters"}'
HIDDEN = {"nel": ("a\u0085b", CONTROL), "csi": ("a\u009bb", CONTROL), "line-separator": ("a\u2028b", CONTROL),
          "rlo": ("evil\u202egnp.jpg", CONTROL), "zero-width": ("ad\u200bmin", INVISIBLE), "tab": ("a\tb", CONTROL),
          "bom": ("a\ufeffb", INVISIBLE), "tag": ("a\U000e0041b", INVISIBLE), "braille-blank": ("ad\u2800min", SUCCESS)}


@pytest.mark.parametrize("name", list(HIDDEN))
def test_hidden_characters_in_usernames_and_titles(world, client, db, images, name):
    text, title_answer = HIDDEN[name]
    if not OURS:
        return  # the PHP original stores them
    users = db.count("login")
    check_api(client().register(text, "pw"), b'{"error":"Usernames cannot contain control or invisible characters"}')
    assert db.count("login") == users
    phone = world["phone"]
    before = phone.stream().body
    check_api(phone.upload(images.photo, text), title_answer)
    if title_answer != SUCCESS:
        assert phone.stream().body == before


def test_invalid_utf8_is_refused(world, client, db, images):
    if not OURS:
        return  # the PHP original stores it and shows everyone null
    users = db.count("login")
    # urldecoded once more, as PHP did: the name would be the byte 0xFF + "evil"
    check_api(client().register("%FFevil", "pw"), b'{"error":"Usernames must be UTF-8 text"}')
    assert db.count("login") == users
    phone = world["phone"]
    before = phone.stream().body
    check_api(phone.upload(images.photo, b"\xffevil"), b'{"error":"Titles must be UTF-8 text"}')
    assert phone.stream().body == before


@pytest.mark.parametrize("name,error", [
    ("\uff41\uff44\uff4d\uff49\uff4e", "Username is too similar to an existing one"),  # full-width
    ("\u0430dmin", "Username is too similar to an existing one"),                          # Cyrillic a
    ("admin\u00a0", "Usernames cannot begin or end with a space"),                          # no-break space
    (" admin", "Usernames cannot begin or end with a space"),
    ("ADMIN", "Username already exists"),
])
def test_look_alikes_of_an_existing_name(world, client, db, name, error):
    if not OURS:
        return  # the PHP original registers them all
    r = client().register("admin", "pw")
    assert r.status == 200 and (b'"username":"admin"' in r.body or r.body == b'{"error":"Username already exists"}')
    users = db.count("login")
    check_api(client().register(name, "pw"), php_json({"error": error}))
    assert db.count("login") == users


def test_names_are_stored_in_nfc(world, client, db):
    if not OURS:
        return
    r = client().register("jose\u0301", "pw")  # e + combining acute
    assert r.json()["result"][0]["username"] == "jos\u00e9"
    check_api(client().login("jos\u00e9", "pw"), r.body, "new")


# ------------------------------------------------- the upload folder, served

def test_only_published_photos_are_served(world, env, client, images):
    """A spool file holds the original (EXIF, GPS) while an upload is
    checked: nginx serves nothing of the folder but <id>.jpg, <id>-thumb.jpg."""
    if not OURS or not env.upload_dir:
        pytest.skip("our deploy/nginx/ireporter.conf, and the upload dir")
    c = client()
    spool = env.upload_dir / ".spool-hostile"
    spool.write_bytes(images.photo)
    try:
        for name in (spool.name, "2.jpg.bak", "2-thumb.jpeg", "2.JPG"):
            r = c.get("upload/" + name)
            assert r.status == 404 and r.body[:2] != b"\xff\xd8", (name, r.status)
    finally:
        spool.unlink()
    for name in ("2.jpg", "2-thumb.jpg"):
        r = c.get("upload/" + name)
        assert r.status == 200 and r.body[:2] == b"\xff\xd8", (name, r.status)
        assert r.header("X-Content-Type-Options") == "nosniff"
        assert r.header("Content-Security-Policy") == "default-src 'none'; sandbox"

