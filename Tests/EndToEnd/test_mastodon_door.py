"""The Mastodon-compatible API's door through nginx: its paths at the host's
root reach the server, every answer is Mastodon's shape (JSON errors with
their status, CORS for browser clients), and what we lack answers as
Pixelfed answers it. The endpoints' own tests are test_mastodon_*.py."""
from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest


@pytest.fixture(scope="module")
def site(web_site, fresh_db):
    # fresh_db: the schema as installed (its oauth tables), whichever suite ran before.
    parts = urlsplit(web_site)
    return parts.hostname, parts.port or 80


def request(site, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(*site, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_an_unknown_path_is_mastodons_not_found(site):
    status, headers, body = request(site, "GET", "/api/v1/no-such-thing")
    assert status == 404
    assert json.loads(body) == {"error": "Record not found"}
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert headers["Access-Control-Allow-Origin"] == "*"


def test_a_scoped_endpoint_wants_a_valid_token(site):
    status, _, body = request(site, "GET", "/api/v1/lists")
    assert (status, json.loads(body)) == (401, {"error": "The access token is invalid"})
    status, _, body = request(site, "GET", "/api/v1/lists", headers={"Authorization": "Bearer not-a-token"})
    assert (status, json.loads(body)) == (401, {"error": "The access token is invalid"})


def test_what_we_lack_is_an_empty_list_or_a_clear_refusal(site):
    assert request(site, "GET", "/api/v1/custom_emojis")[::2] == (200, b"[]")
    assert request(site, "GET", "/api/v1/trends/tags")[::2] == (200, b"[]")
    status, _, body = request(site, "GET", "/api/v1/polls/1")
    assert (status, json.loads(body)) == (404, {"error": "Record not found"})


def test_browser_clients_get_cors_preflight(site):
    status, headers, body = request(site, "OPTIONS", "/api/v1/custom_emojis", headers={
        "Origin": "https://elk.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization"})
    assert status == 204 and body == b""
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in headers["Access-Control-Allow-Headers"]
    assert request(site, "OPTIONS", "/api/v1/no-such-thing")[0] == 404


def test_the_authorization_page_is_never_readable_from_other_sites(site):
    """The page answers a signed-in browser's cookie: no CORS header, however
    its path is spelled (the router drops empty segments); the API has them."""
    for path in ("/oauth/authorize", "/oauth//authorize", "//oauth/authorize", "/oauth/authorize/"):
        status, headers, _ = request(site, "GET", path + "?response_type=code&client_id=x&redirect_uri=urn:ietf:wg:oauth:2.0:oob")
        assert "Access-Control-Allow-Origin" not in headers, (path, status, headers)
    assert request(site, "POST", "/oauth/token")[1]["Access-Control-Allow-Origin"] == "*"


def test_a_body_that_is_no_json_is_refused_in_mastodons_shape(site):
    status, _, body = request(site, "POST", "/api/v1/lists", body=b"{nope",
                              headers={"Content-Type": "application/json"})
    assert status == 400
    assert json.loads(body)["error"].startswith("The body is no JSON")


def test_a_body_over_nginxs_limit_is_a_json_413(site):
    status, _, body = request(site, "POST", "/api/v1/media", body=b"x" * (22 * 1024 * 1024),
                              headers={"Content-Type": "application/octet-stream"})
    assert status == 413
    assert json.loads(body) == {"error": "File is too large (the limit is 20 MB)"}


def test_the_2012_api_is_where_it_was(site):
    # The door takes its own paths only: the form API still answers at /iReporter/.
    status, _, body = request(site, "POST", "/iReporter/", body=b"command=stream&count=1",
                              headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and body.startswith(b'{"result":')
