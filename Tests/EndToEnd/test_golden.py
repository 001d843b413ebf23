"""Every numbered case of /work/shared/reference/GOLDEN.md's transcript, in
order, against a fresh database (the cases depend on each other: ids, cookies),
then the cases GOLDEN.md marks *by hand* and the limits of our own.

Bodies are compared byte for byte. Where we deliberately differ from the PHP
original (docs/COMPATIBILITY.md) the expectation says `expect(ours=..., php=...)`
with an "OURS:" comment; IREPORTER_FLAVOUR=php checks the PHP behaviour instead.
Cookie rule, ours: a NEW session cookie only on a successful login/register,
the deletion cookie on logout, nothing for anonymous requests (and no
session file for them); PHP: a cookie whenever the request carried none.
"""
from __future__ import annotations

import urllib.parse

import pytest

import e2e
from appclient import FilePart, jpeg_size, php_json
from e2e import (AUTH_FAILED, AUTH_REQUIRED, EMPTY_STREAM, NOT_JPEG, OURS, R_ALICE, R_BOB, REG_FAILED, SUCCESS,
                 TOO_LARGE, UPLOAD_MALFUNCTION, USER_EXISTS, check_api, expect)
from golden import MiB, Runner

pytestmark = pytest.mark.usefixtures("fresh_db")

S1 = b'{"result":[{"IdPhoto":"2","title":"Sunset at the pier","IdUser":"1","username":"alice"}]}'


@pytest.fixture(scope="module")
def g(fresh_db, endpoint, images):
    r = Runner(endpoint, images)
    yield r
    r.close()


def sent(g):
    return g.last_client.last_cookie


def sid(g, jar):
    return g.clients[jar].jar.last_value.get("PHPSESSID")


class Anon:
    """OURS: an anonymous request writes no session file."""

    def __init__(self, env):
        self.env = env

    def __enter__(self):
        self.before = e2e.listing(self.env.session_dir)
        return self

    def __exit__(self, *exc):
        if exc[0] is None and OURS and self.env.session_dir:
            after = e2e.listing(self.env.session_dir)
            assert after == self.before, f"session files appeared/vanished: {after ^ self.before}"


class NothingStored:
    """OURS: a rejected upload leaves no row and no file."""

    def __init__(self, env, db):
        self.env, self.db = env, db

    def __enter__(self):
        self.files = e2e.listing(self.env.upload_dir)
        self.rows = self.db.count("photos")
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            assert e2e.listing(self.env.upload_dir) == self.files, "files were left in the upload dir"
            assert self.db.count("photos") == self.rows, "a photos row was inserted"


def check_session_file(env, session_id, exists=True):
    if OURS and env.session_dir and session_id:
        p = e2e.session_file(env, session_id)
        assert p.exists() == exists, f"{p} exists={p.exists()}, expected {exists}"


# ------------------------------------------------------------------ main flow

def test_01_register_new_user(g, env):
    r = g.run(1)
    new = check_api(r, R_ALICE, "new", sent(g))
    check_session_file(env, new)


def test_02_login_fresh_client(g, env):
    r = g.run(2)
    new = check_api(r, R_ALICE, "new", sent(g))
    check_session_file(env, new)


def test_03_upload_logged_in(g, env, images):
    r = g.run(3)
    check_api(r, SUCCESS, "none", sent(g))
    e2e.check_stored_photo(env, 2, images.photo)


def test_04_stream_no_cookie_urlencoded(g, env):
    with Anon(env):
        r = g.run(4)
    # OURS: no cookie for an anonymous stream (PHP: a new session + Set-Cookie).
    check_api(r, S1, "none", sent(g))


def test_05_stream_with_idphoto(g):
    check_api(g.run(5), S1, "none", sent(g))


def test_06_fetch_thumbnail(g):
    r = g.run(6)
    assert r.status == 200, r
    assert r.header("Content-Type") == "image/jpeg"
    assert int(r.header("Content-Length")) == len(r.body)
    # OURS: a 180x180 centre crop, PHP: the whole photo squashed; both 180x180 JPEGs.
    assert jpeg_size(r.body) == (180, 180)


def test_07_logout(g, env):
    b_session = sid(g, "B")
    r = g.run(7)
    # OURS: the session file is deleted and the cookie is cleared (PHP: no Set-Cookie).
    check_api(r, b"", "deleted", sent(g))
    check_session_file(env, b_session, exists=False)
    if OURS:
        assert g.clients["B"].jar.get() is None


def test_08_upload_after_logout_same_cookie(g, env):
    with Anon(env):  # OURS: the dead id is not adopted: no file, no cookie
        r = g.run(8)
    assert sent(g) and "PHPSESSID=" in sent(g)
    check_api(r, AUTH_REQUIRED, "none", sent(g))


def test_09_upload_no_session(g, env):
    with Anon(env):
        r = g.run(9)
    check_api(r, AUTH_REQUIRED, "none", sent(g))


# ------------------------------------------------------------------ edge cases

def test_10_register_existing_username(g, env):
    with Anon(env):
        r = g.run(10)
    check_api(r, USER_EXISTS, "none", sent(g))


def test_11_register_upper_case(g):
    check_api(g.run(11), USER_EXISTS, "none", sent(g))


def test_12_login_wrong_password(g):
    check_api(g.run(12), AUTH_FAILED, "none", sent(g))


def test_13_login_other_case_trailing_space(g, env):
    r = g.run(13)
    # OURS: every successful login issues a new session id.
    new = check_api(r, R_ALICE, "new", sent(g))
    check_session_file(env, new)


def test_14_login_without_password_field(g):
    check_api(g.run(14), AUTH_FAILED, "none", sent(g))


def test_15_register_without_password_field(g):
    check_api(g.run(15), R_BOB, "new", sent(g))


def test_16_login_empty_password(g, env):
    r = g.run(16)
    new = check_api(r, R_BOB, "new", sent(g))  # OURS: new id although a cookie was sent
    check_session_file(env, new)


def test_17_register_plus_and_percent_decoded_again(g):
    # Usernames and passwords ARE still decoded a second time, as PHP did.
    check_api(g.run(17), b'{"result":[{"IdUser":"3","username":"c d!"}]}', "new", sent(g))


def test_18_register_50_char_username(g, env, db):
    users = db.count("login")
    with Anon(env):
        r = g.run(18)
    # OURS: over 45 bytes is refused and nothing inserted (PHP: a truncated row, then Authorization failed).
    check_api(r, expect(REG_FAILED, AUTH_FAILED), "none", sent(g))
    assert db.count("login") == expect(users, users + 1)


def test_19_register_50_char_username_again(g, db):
    users = db.count("login")
    r = g.run(19)
    check_api(r, expect(REG_FAILED, AUTH_FAILED), "none", sent(g))  # OURS: as case 18
    assert db.count("login") == expect(users, users + 1)


def test_20_login_truncated_45_char_name(g):
    r = g.run(20)
    # OURS: the 50-character name was never stored, so there is no 45-character user.
    check_api(r, expect(AUTH_FAILED, b'{"result":[{"IdUser":"4","username":"' + b"u" * 45 + b'"}]}'),
              "none", sent(g))


def test_21_unknown_command(g, env):
    with Anon(env):
        r = g.run(21)
    # OURS: the golden's unknown command is `delete`, a command now (docs/API.md).
    check_api(r, expect(AUTH_REQUIRED, b""), "none", sent(g))


def test_22_post_without_command(g, env):
    with Anon(env):
        r = g.run(22)
    check_api(r, b"", "none", sent(g))


def test_23_get_prefix(g, env):
    with Anon(env):
        r = g.run(23)
    check_api(r, b"", "none", sent(g))


def test_24_get_without_slash_redirects(g, endpoint):
    r = g.run(24)
    assert r.status == 301, r
    assert urllib.parse.urlsplit(r.header("Location")).path == endpoint.prefix, r.header("Location")


def test_25_stream_unknown_idphoto(g):
    check_api(g.run(25), EMPTY_STREAM, "none", sent(g))


def test_26_stream_idphoto_abc(g):
    check_api(g.run(26), S1, "none", sent(g))


def test_27_login_for_upload_edge_cases(g):
    check_api(g.run(27), R_ALICE, "new", sent(g))


def test_28_upload_png(g, env, db):
    with NothingStored(env, db) if OURS else _null():
        r = g.run(28)
    # OURS: uploads are checked; PHP: success, the PNG stored as 3.jpg with a black thumbnail.
    check_api(r, expect(NOT_JPEG, SUCCESS), "none", sent(g))


def test_29_upload_without_file_field(g, env, db):
    rows = db.count("photos")
    r = g.run(29)
    # OURS: no orphan row (PHP: the row is inserted, then "Upload on server problem").
    check_api(r, expect(UPLOAD_MALFUNCTION, b'{"error":"Upload on server problem"}'), "none", sent(g))
    assert db.count("photos") == expect(rows, rows + 1)


def test_30_upload_empty_file(g, env, db):
    with NothingStored(env, db) if OURS else _null():
        r = g.run(30)
    check_api(r, expect(NOT_JPEG, SUCCESS), "none", sent(g))  # OURS: not a JPEG


# ids of the successful uploads 31..35: ours 3..7 (nothing stored for 28-30), PHP 6..10
FIRST = expect(3, 6)


@pytest.mark.parametrize("n", [31, 32, 33, 34, 35])
def test_31_to_35_uploads_with_odd_titles(g, env, images, n):
    r = g.run(n)
    check_api(r, SUCCESS, "none", sent(g))
    e2e.check_stored_photo(env, FIRST + n - 31, images.photo)


STREAM_36_OURS = (
    b'{"result":['
    # OURS: a title over 100 bytes is cut at a UTF-8 character boundary, never null
    b'{"IdPhoto":"7","title":"' + b"x" * 99 + b'","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"6","title":"' + b"T" * 100 + b'","IdUser":"1","username":"alice"},'
    # OURS: titles are stored as sent, no second urldecode
    b'{"IdPhoto":"5","title":"a+b%41","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"4","title":"It\'s \\"cheese\\" \\\\o\\/ \'); DROP TABLE photos;--","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"3","title":"Caf\\u00e9 \\u2615 \\ud83c\\udf05","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"2","title":"Sunset at the pier","IdUser":"1","username":"alice"}]}')

STREAM_36_PHP = (  # GOLDEN.md, verbatim
    b'{"result":[{"IdPhoto":"10","title":null,"IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"9","title":"' + b"T" * 100 + b'","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"8","title":"a bA","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"7","title":"It\'s \\"cheese\\" \\\\o\\/ \'); DROP TABLE photos;--","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"6","title":"Caf\\u00e9 \\u2615 \\ud83c\\udf05","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"5","title":"empty","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"4","title":"no file","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"3","title":"not a jpeg","IdUser":"1","username":"alice"},'
    b'{"IdPhoto":"2","title":"Sunset at the pier","IdUser":"1","username":"alice"}]}')


def test_36_stream_after_edge_cases(g):
    check_api(g.run(36), expect(STREAM_36_OURS, STREAM_36_PHP), "none", sent(g))


@pytest.mark.slow
def test_37_upload_21_mib(g, env, db):
    with NothingStored(env, db):
        r = g.run(37)
    if OURS:
        # OURS: JSON instead of nginx's 413 page (nginx error_page or our server).
        assert r.status == 200, r
        assert r.body == TOO_LARGE, r.body[:300]
        # the app's AFJSONRequestOperation rejects any other content type
        assert r.header("Content-Type") == "application/json", r.headers
    else:
        assert r.status == 413, r


# ------------------------------------------------------------- by-hand cases

@pytest.fixture(scope="module")
def extra(g, images):
    """Continues with the 'U' phone (alice, logged in at case 27)."""
    return {"c": g.clients["U"], "next": expect(8, 11), "photo": images.photo}


def _upload(extra, fields, files):
    c = extra["c"]
    return c.call(fields, files=files)


def test_by_hand_upload_without_title(extra, env, images):
    r = _upload(extra, [("command", "upload")], [FilePart(images.photo)])
    check_api(r, SUCCESS, "none", extra["c"].last_cookie)  # GOLDEN: "upload without title stores ''"
    n = extra["next"]
    e2e.check_stored_photo(env, n, images.photo)
    r = extra["c"].stream(str(n))
    check_api(r, b'{"result":[{"IdPhoto":"%d","title":"","IdUser":"1","username":"alice"}]}' % n)


def test_by_hand_two_file_parts_last_wins(extra, env, images):
    r = _upload(extra, [("command", "upload"), ("title", "two files")],
                [FilePart(images.stripes), FilePart(images.photo)])
    check_api(r, SUCCESS, "none", extra["c"].last_cookie)
    e2e.check_stored_photo(env, expect(9, 12), images.photo)  # GOLDEN: PHP keeps the last one


def test_title_cut_before_a_3_byte_character(extra):
    # 99 + 3 bytes: OURS cut at the character boundary -> 99 y's; PHP keeps 100 bytes -> invalid -> null
    n = expect(10, 13)
    r = _upload(extra, [("command", "upload"), ("title", "y" * 99 + "€")], [FilePart(extra["photo"])])
    check_api(r, SUCCESS)
    r = extra["c"].stream(str(n))
    title = expect(b'"' + b"y" * 99 + b'"', b"null")
    check_api(r, b'{"result":[{"IdPhoto":"%d","title":%s,"IdUser":"1","username":"alice"}]}' % (n, title))


def test_title_of_exactly_100_bytes_kept(extra):
    n = expect(11, 14)
    r = _upload(extra, [("command", "upload"), ("title", "z" * 97 + "€")], [FilePart(extra["photo"])])
    check_api(r, SUCCESS)
    r = extra["c"].stream(str(n))
    check_api(r, b'{"result":[{"IdPhoto":"%d","title":"%s\\u20ac","IdUser":"1","username":"alice"}]}'
              % (n, b"z" * 97))


@pytest.mark.parametrize("what", ["text", "truncated"])
def test_upload_not_a_jpeg(extra, env, db, images, what):
    data = getattr(images, what)
    with NothingStored(env, db) if OURS else _null():
        r = _upload(extra, [("command", "upload"), ("title", what)], [FilePart(data)])
    # OURS: text and a truncated JPEG are refused (PHP: stored, success).
    check_api(r, expect(NOT_JPEG, SUCCESS))


def test_upload_file_part_with_empty_filename(extra, env, db, images):
    with NothingStored(env, db):
        r = _upload(extra, [("command", "upload"), ("title", "nameless")], [FilePart(images.photo, filename="")])
    check_api(r, UPLOAD_MALFUNCTION)  # what a browser's empty file input sends (PHP: UPLOAD_ERR_NO_FILE)


def test_register_username_over_45_bytes(client, env, db):
    users = db.count("login")
    c = client()
    r = c.register("é" * 23, "pw")  # 23 characters, 46 bytes
    # OURS: refused, nothing inserted; PHP: inserted cut to 45 bytes, then Authorization failed
    check_api(r, expect(REG_FAILED, AUTH_FAILED), "none", c.last_cookie)
    assert db.count("login") == expect(users, users + 1)


def test_register_username_of_45_bytes(client):
    c = client()
    r = c.register("v" * 45, "pw")
    # ours: alice 1, bob 2, "c d!" 3 -> 4; PHP also stored two u*45 rows and the cut é-name -> 7
    check_api(r, b'{"result":[{"IdUser":"%d","username":"%s"}]}' % (expect(4, 7), b"v" * 45), "new",
              c.last_cookie)


@pytest.mark.slow
def test_upload_20_5_mib(extra, env, db, images):
    with NothingStored(env, db):
        r = _upload(extra, [("command", "upload"), ("title", "20.5 MiB")],
                    [FilePart(images.padded_jpeg(20 * MiB + MiB // 2))])
    if OURS:
        # OURS: under nginx's 21m, over our 20 MiB: the JSON error comes from our server.
        check_api(r, TOO_LARGE)
    else:
        assert r.status == 413, r  # PHP's nginx: client_max_body_size 20m


def test_final_stream(extra):
    ours = [(11, "z" * 97 + "€"), (10, "y" * 99), (9, "two files"), (8, ""), (7, "x" * 99), (6, "T" * 100),
            (5, "a+b%41"), (4, "It's \"cheese\" \\o/ '); DROP TABLE photos;--"), (3, "Café ☕ 🌅"),
            (2, "Sunset at the pier")]
    php = [(16, "truncated"), (15, "text"), (14, "z" * 97 + "€"), (13, None), (12, "two files"), (11, ""),
           (10, None), (9, "T" * 100), (8, "a bA"), (7, "It's \"cheese\" \\o/ '); DROP TABLE photos;--"),
           (6, "Café ☕ 🌅"), (5, "empty"), (4, "no file"), (3, "not a jpeg"), (2, "Sunset at the pier")]
    rows = [{"IdPhoto": str(i), "title": t, "IdUser": "1", "username": "alice"} for i, t in expect(ours, php)]
    check_api(extra["c"].stream(), php_json({"result": rows}))


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
