"""`search` through nginx on the test stack's MariaDB (sql/migrations/005
applied by scripts/mariadb.sh): UTF-8 titles in the latin1 columns, paging,
and hostile queries answered with a clear error, quickly, without changing
anything."""
from __future__ import annotations

import json
import time

import pytest

from e2e import ALICE_PASS, OURS, R_ALICE, SUCCESS, check_api, check_api_headers

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="search is ours: the 2012 original has no such command")]

TITLES = ["Zoë à la plage", "ZOE at the beach", "東京タワーの夜", "sunset 🌅 over the pier", "Sunny day"]


@pytest.fixture(scope="module")
def phone(fresh_db, endpoint, images):
    from appclient import AppClient
    phone = AppClient(endpoint)
    check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
    for title in TITLES:  # IdPhoto 2...6
        check_api(phone.upload(images.photo, title), SUCCESS)
    yield phone
    phone.close()


def search(phone, **fields) -> dict:
    r = phone.call({"command": "search", **fields})
    assert r.status == 200, r
    check_api_headers(r)
    return json.loads(r.body)


def ids(phone, **fields) -> list[str]:
    answer = search(phone, **fields)
    assert "result" in answer, answer
    return [photo["IdPhoto"] for photo in answer["result"]]


def test_utf8_titles_in_latin1_columns(phone):
    assert ids(phone, q="zoe") == ["3", "2"]
    assert ids(phone, q="Zoë") == ["3", "2"]
    assert ids(phone, q="ZOE beach") == ["3"]
    assert ids(phone, q="タワー") == ["4"]
    assert ids(phone, q="sun") == ["6", "5"]
    assert ids(phone, q="🌅 pier") == ["5"]
    assert ids(phone, q="alice sun") == ["6", "5"], "the username's words count"
    first = search(phone, q="plage")["result"][0]
    assert first == {"IdPhoto": "2", "title": "Zoë à la plage", "IdUser": "1", "username": "alice"}, "the stream's shape"


def test_paging(phone):
    assert ids(phone, q="alice", count="2") == ["6", "5"]
    assert ids(phone, q="alice", count="2", before="5") == ["4", "3"]
    assert ids(phone, q="alice", sort="relevance", count="2", page="3") == ["2"]


@pytest.mark.parametrize("fields, error", [
    ({"q": "+ - \" * @ ( ) ~ < >"}, "Search needs at least one word (letters or digits)"),
    ({"q": "x" * 60_000}, "Search text is too long (at most 200 bytes)"),
    ({"q": "sun", "count": "100000"}, "count must be a number from 1 to 100"),
    ({"q": "sun", "sort": "relevance", "page": "-1"}, "page must be a number, and relevance pages end at 500 photos"),
    ({"q": "sun", "before": "0x10"}, "before must be a photo id"),
    ({"q": "a b c d e f g"}, "Search takes at most 6 words"),
    ({"q": "sun", "extras": "likes,pass"},
     "Invalid extras: a comma list of likes, dislikes, comments, myvote, created, width, height, secret, server, description is expected"),
])
def test_hostile_queries_get_a_clear_error(phone, fields, error):
    started = time.monotonic()
    assert search(phone, **fields) == {"error": error}
    assert time.monotonic() - started < 5


def test_sql_and_operators_are_only_words(phone, db):
    before = db.count("photos"), db.count("photo_words")
    assert ids(phone, q="' OR 1=1 -- ") == []
    assert ids(phone, q="sun*; DROP TABLE photos") == []
    assert ids(phone, q='+"sunset" -moon') == []
    assert ids(phone, q='+"sunset" pier*') == ["5"]
    assert (db.count("photos"), db.count("photo_words")) == before


def test_broad_and_many_terms_answer_at_once(phone, db):
    """Short terms (on a large table each starts many words) and the most
    terms a query may have: answered, at once."""
    for q in ["s t a b c d", "a", "z sun p", "sun pier over the sunset 🌅"]:
        started = time.monotonic()
        answer = search(phone, q=q)
        assert "result" in answer, (q, answer)
        assert time.monotonic() - started < 5, q
    assert ids(phone, q="s o p t") == ["5"], "sunset over the pier"


def test_extras_as_the_stream_gives_them(phone):
    fields = "likes,dislikes,comments,myvote,created,width,height"
    found = search(phone, q="plage", extras=fields)["result"]
    r = phone.call({"command": "stream", "IdPhoto": "2", "extras": fields})
    assert found == json.loads(r.body)["result"]
    assert set(found[0]) == {"IdPhoto", "title", "IdUser", "username", *fields.split(",")}
    assert found[0]["likes"] == "0" and found[0]["myvote"] == "0" and int(found[0]["width"]) > 0
