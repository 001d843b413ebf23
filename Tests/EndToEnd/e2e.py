"""e2e.py - shared helpers of the end-to-end suite: environment, database
reset, filesystem snapshots, and the response checks (our headers and
cookies, or the PHP original's when IREPORTER_FLAVOUR=php).

IREPORTER_FLAVOUR (default "ours") chooses which behaviour the tests expect:
  ours - the Swift server, with the deliberate differences of
         docs/COMPATIBILITY.md (each one marked "OURS:" at its expectation);
  php  - the 2012 PHP original exactly as GOLDEN.md records it; lets the
         suite be checked against /work/shared/reference itself.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from appclient import Response, jpeg_size

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent

FLAVOUR = os.environ.get("IREPORTER_FLAVOUR", "ours").strip().lower()
if FLAVOUR not in ("ours", "php"):
    raise RuntimeError(f"IREPORTER_FLAVOUR must be 'ours' or 'php', not {FLAVOUR!r}")
OURS = FLAVOUR == "ours"
PHP = not OURS


def expect(ours, php):
    """The expected value for the flavour under test."""
    return ours if OURS else php


# The app salts and SHA1s the password on the phone (LoginScreen.m).
SALT = "adlfu3489tyh2jnkLIUGI&%EV(&0982cbgrykxjnk8855"


def app_password(clear: str) -> str:
    return hashlib.sha1((clear + SALT).encode()).hexdigest()


ALICE_PASS = app_password("secret")  # 18c69224371c58c547b68bfa6d28dc8aeff006e4

# ---------------------------------------------------------------- expected bodies
R_ALICE = b'{"result":[{"IdUser":"1","username":"alice"}]}'
R_BOB = b'{"result":[{"IdUser":"2","username":"bob"}]}'
SUCCESS = b'{"successful":1}'
AUTH_REQUIRED = b'{"error":"Authorization required"}'
AUTH_FAILED = b'{"error":"Authorization failed"}'
USER_EXISTS = b'{"error":"Username already exists"}'
REG_FAILED = b'{"error":"Registration failed"}'
UPLOAD_MALFUNCTION = b'{"error":"Upload malfunction"}'
NOT_JPEG = b'{"error":"The photo is not a valid JPEG image"}'
TOO_LARGE = b'{"error":"Photo is too large (the limit is 20 MB)"}'
EMPTY_STREAM = b'{"result":[]}'

# ----------------------------------------------------------------- our headers
EXPIRES = "Thu, 19 Nov 1981 08:52:00 GMT"
CACHE_CONTROL = "no-store, no-cache, must-revalidate"
OUR_NEW_COOKIE = re.compile(r"PHPSESSID=([0-9a-v]{32}); path=/; HttpOnly; SameSite=Lax")
OUR_DELETE_COOKIE = "PHPSESSID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly; SameSite=Lax"
PHP_NEW_COOKIE = re.compile(r"PHPSESSID=([0-9a-v]{26}); path=/")
OUR_SESSION_FILE = re.compile(r"sess_[0-9a-v]{32}")
# a user's index of live sessions (session_max_per_user)
OUR_SESSION_INDEX = re.compile(r"ireporter-sessions-[0-9]+")


def check_api_headers(r: Response):
    """Status and headers of every answer of the API itself (not nginx's)."""
    assert r.status == 200, f"status {r.status_line!r}, body {r.body[:300]!r}"
    assert r.header("Content-Type") == "application/json", r.headers
    assert r.header("Expires") == EXPIRES, r.headers
    assert r.header("Cache-Control") == CACHE_CONTROL, r.headers
    assert r.header("Pragma") == "no-cache", r.headers
    if OURS:
        # OURS: a Content-Length on every answer, so nginx does not chunk.
        cl = r.headers_all("Content-Length")
        assert len(cl) == 1 and int(cl[0]) == len(r.raw_body), f"Content-Length {cl} for {len(r.raw_body)} bytes"
        assert r.header("Transfer-Encoding") is None, r.headers
        assert r.header("Content-Encoding") is None, r.headers
    else:
        assert r.header("Transfer-Encoding") == "chunked", r.headers
        assert r.header("Content-Length") is None, r.headers


def check_cookie(r: Response, ours: str, sent_cookie: Optional[str] = None) -> Optional[str]:
    """Set-Cookie of an API answer. ours: 'none', 'new' or 'deleted' (our rule:
    a NEW id on every successful login/register, the deletion cookie on
    logout, nothing otherwise). The PHP original instead sets a cookie exactly
    when the request carried no PHPSESSID. Returns the new id, if any."""
    sc = r.set_cookies
    sent_cookie = sent_cookie or r.sent_cookie
    if ours == "any":
        return None
    if OURS:
        if ours == "none":
            assert sc == [], f"unexpected Set-Cookie {sc}"
            return None
        if ours == "deleted":
            assert sc == [OUR_DELETE_COOKIE], sc
            return None
        assert ours == "new"
        assert len(sc) == 1, f"expected exactly one new session cookie, got {sc}"
        m = OUR_NEW_COOKIE.fullmatch(sc[0])
        assert m, f"session cookie {sc[0]!r} is not {OUR_NEW_COOKIE.pattern}"
        if sent_cookie:
            assert m.group(1) not in sent_cookie, "login/register must issue a NEW session id"
        return m.group(1)
    if sent_cookie and "PHPSESSID=" in sent_cookie:
        assert sc == [], f"unexpected Set-Cookie {sc}"
        return None
    assert len(sc) == 1 and PHP_NEW_COOKIE.fullmatch(sc[0]), sc
    return PHP_NEW_COOKIE.fullmatch(sc[0]).group(1)


def check_api(r: Response, body: bytes, cookie: str = "none", sent_cookie: Optional[str] = None,
              ) -> Optional[str]:
    """Headers + byte-exact body + cookie rule; returns a new session id."""
    check_api_headers(r)
    assert r.body == body, f"body {r.body!r}\n  != {body!r}"
    return check_cookie(r, cookie, sent_cookie)


# ------------------------------------------------------------------ environment

class Env:
    def __init__(self):
        self.base_url = os.environ["IREPORTER_BASE_URL"]
        self.upload_dir = _opt_path("IREPORTER_UPLOAD_DIR")
        self.session_dir = _opt_path("IREPORTER_SESSION_DIR")
        self.run_dir = _opt_path("IREPORTER_RUN_DIR")
        self.mysql_root = os.environ.get("IREPORTER_MYSQL_ROOT") or None
        self.reference_dir = _opt_path("IREPORTER_REFERENCE_DIR")

    def schema_sql(self) -> Path:
        p = REPO_ROOT / "sql" / "schema.sql"
        if p.is_file():
            return p
        if self.reference_dir and (self.reference_dir / "sql" / "schema.sql").is_file():
            return self.reference_dir / "sql" / "schema.sql"
        raise RuntimeError(f"no schema: {p} does not exist (and no IREPORTER_REFERENCE_DIR/sql/schema.sql)")


def _opt_path(name: str) -> Optional[Path]:
    v = os.environ.get(name)
    return Path(v) if v else None


class DB:
    """SQL as root on the server's database, through IREPORTER_MYSQL_ROOT."""

    def __init__(self, prefix: Optional[str]):
        self.prefix = prefix

    def run(self, sql: str) -> list[list[str]]:
        if not self.prefix:
            raise RuntimeError("IREPORTER_MYSQL_ROOT is not set: cannot reset or inspect the database")
        p = subprocess.run(self.prefix + " -N -B", shell=True, input=sql.encode(), capture_output=True,
                           timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"SQL failed ({p.returncode}): {sql[:200]!r}: {p.stderr.decode(errors='replace')}")
        return [line.split("\t") for line in p.stdout.decode("latin-1").splitlines()]

    def scalar(self, sql: str) -> str:
        rows = self.run(sql)
        return rows[0][0] if rows else None

    def count(self, table: str) -> int:
        return int(self.scalar(f"SELECT COUNT(*) FROM `{table}`"))

    def photo_titles_hex(self) -> dict[int, bytes]:
        return {int(i): bytes.fromhex(h) for i, h in self.run("SELECT IdPhoto, HEX(title) FROM photos")}

    def reset(self, schema: Path):
        """Every table of ours dropped, then `schema` as installed, all empty:
        the search index must not keep old photos' words."""
        self.run(DROP_ALL_TABLES + schema_as_installed(schema))


# Every table of ours: the original two, repair's rows set aside, the migrations' tables.
DROP_ALL_TABLES = ("DROP TABLE IF EXISTS `login`, `photos`, `photos_removed`, `photo_details`, `photo_counts`, "
                   "`votes`, `comments`, `photo_words`, `photo_words_backfill`, `photo_secrets`, `follows`, "
                   "`notifications`, `media_attachments`, `photo_descriptions`, `oauth_apps`, `oauth_tokens`, `oauth_codes`, "
                   "`status_idempotency`, `read_markers`, `login_registered`;\n")
# The migrations that add tables and indexes (001 and 002 change the
# original's: the tests that need them apply them).
NEW_TABLE_MIGRATIONS = ("003-photo-details-comments-votes.sql", "004-index-photos-user.sql", "005-photo-words.sql",
                        "006-photo-secrets.sql", "008-index-photo-upload-time.sql", "009-follows-notifications.sql",
                        "010-oauth.sql", "011-media-attachments.sql", "012-status-idempotency.sql",
                        "013-index-user-votes-comments.sql", "014-index-oauth-sweep.sql", "015-read-markers.sql",
                        "016-account-registered.sql")


def schema_as_installed(schema: Path) -> str:
    """`schema` and the migrations of new tables beside it (its
    sql/migrations; a schema elsewhere has none)."""
    migrations = [schema.parent / "migrations" / name for name in NEW_TABLE_MIGRATIONS]
    return schema.read_text() + "".join(m.read_text() for m in migrations if m.is_file())


def clear_dir(d: Optional[Path], pattern: Optional[str] = None):
    if not d or not d.is_dir():
        return
    for p in d.iterdir():
        if p.name == ".gitignore":
            continue
        if pattern and not re.fullmatch(pattern, p.name):
            continue
        if p.is_file() or p.is_symlink():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)


# The server's own bookkeeping, not a stored file: the upload folder's device,
# recorded by the start-up sweep whenever it ends (during the first tests).
UPLOAD_FOLDER_MARKER = ".ireporter-upload-dir"


def listing(d: Optional[Path]) -> set[str]:
    if not d or not d.is_dir():
        return set()
    return {p.name for p in d.iterdir() if p.name not in (".gitignore", UPLOAD_FOLDER_MARKER)}


def session_file(env: Env, sid: str) -> Optional[Path]:
    return env.session_dir / f"sess_{sid}" if env.session_dir else None


def check_stored_photo(env: Env, id_photo: int, sent: bytes, size=None):
    """upload/<id>.jpg and upload/<id>-thumb.jpg on disk (when the dir is known)."""
    if not env.upload_dir:
        return
    big = env.upload_dir / f"{id_photo}.jpg"
    thumb = env.upload_dir / f"{id_photo}-thumb.jpg"
    assert big.is_file(), f"{big} missing"
    assert thumb.is_file(), f"{thumb} missing"
    data = big.read_bytes()
    if OURS:
        # OURS: stored as a valid JPEG of the same pixel size (EXIF may be stripped).
        assert jpeg_size(data) == (size or jpeg_size(sent)), (jpeg_size(data), jpeg_size(sent))
    else:
        assert data == sent, f"{big} differs from what was sent"
    assert jpeg_size(thumb.read_bytes()) == (180, 180), jpeg_size(thumb.read_bytes())
