"""Prepared statements through nginx: lists of photos a crawler can page
through in any size (the stream with extras, Flickr's list pages) leave
the server-wide count of prepared statements bounded, and with MariaDB's
`max_prepared_stmt_count` lowered to just above what the server holds,
every answer is still valid (issue 24)."""
from __future__ import annotations

import json
import os
import re
import urllib.parse
import urllib.request

import pytest

from appclient import AppClient
from e2e import ALICE_PASS, OURS, R_ALICE, check_api

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the original prepares nothing")]

PHOTOS = 300
# DatabaseConnection.defaultStatementCacheCapacity: statements one connection holds at most.
CACHE_CAPACITY = 64


@pytest.fixture(scope="module")
def photo_ids(fresh_db, endpoint, db) -> list[int]:
    with AppClient(endpoint) as phone:
        check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")
    db.run("INSERT INTO photos (IdUser, title) VALUES "
           + ", ".join(f"(1, 'photo {n}')" for n in range(PHOTOS)) + ";")
    return [int(row[0]) for row in db.run("SELECT IdPhoto FROM photos ORDER BY IdPhoto;")]


def connections(db) -> int:
    """The server's connections to MariaDB, each with its own statement
    cache: its workers' and its answer refresher's (a process of its own)."""
    text = open(os.environ["IREPORTER_CONFIG"]).read()
    user = re.search(r"^db_url\s*=\s*mysql://([^:@/]+)", text, re.M).group(1)
    return int(db.scalar(f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '{user}';"))


def held(db) -> int:
    return int(db.run("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count';")[0][1])


def distinct_lists(endpoint, base_url: str, ids: list[int], rounds: range):
    """Stream pages with extras and Flickr list pages, a list of photos
    never asked for before in each round; every answer must be a list."""
    rest = base_url + "services/rest/"
    with AppClient(endpoint) as phone:
        for n in rounds:
            count = n % 100 + 1
            before = ids[(n * 37) % len(ids)] + 1
            body = phone.call({"command": "stream", "count": str(count), "before": str(before),
                               "extras": "secret,created,likes"}).body
            assert body.startswith(b'{"result":['), body[:200]
            query = urllib.parse.urlencode({"method": "flickr.photos.getRecent", "per_page": str(count),
                                            "page": str(n % 3 + 1), "extras": "date_upload,o_dims",
                                            "format": "json", "nojsoncallback": "1"})
            with urllib.request.urlopen(rest + "?" + query, timeout=10) as r:
                answer = json.loads(r.read())
            assert answer["stat"] == "ok", answer


def test_distinct_lists_leave_the_count_bounded(endpoint, base_url, db, photo_ids):
    distinct_lists(endpoint, base_url, photo_ids, range(0, 300))
    count = held(db)
    bound = connections(db) * CACHE_CAPACITY  # counted after: a connection made meanwhile raises the bound too
    assert count <= bound, f"{count} prepared statements held after 600 distinct lists (at most {bound})"


def test_the_servers_limit_reached_every_answer_is_valid(endpoint, base_url, db, photo_ids):
    original = db.scalar("SELECT @@GLOBAL.max_prepared_stmt_count;")
    db.run(f"SET GLOBAL max_prepared_stmt_count = {held(db) + 2};")
    try:
        distinct_lists(endpoint, base_url, photo_ids, range(1000, 1200))
    finally:
        db.run(f"SET GLOBAL max_prepared_stmt_count = {original};")
