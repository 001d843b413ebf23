"""OAuth 2.0 and the instance of the Mastodon-compatible API (issue 28)
through the stack's nginx, with real clients unchanged: PyPI's Mastodon.py
(apps, the password grant, the authorization code, registration), `toot
login_cli`, and the authorization page driven in Chromium (login, consent,
state and PKCE). The password is the one a person types in every client."""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import subprocess
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonIllegalArgumentError, MastodonUnauthorizedError

import browser
from appclient import AppClient
from e2e import ALICE_PASS, OURS, R_ALICE, app_password, check_api

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the Mastodon-compatible API is ours: the 2012 original has none")]

CALLBACK_PATH = "/oauth-e2e/callback"


@pytest.fixture(scope="module")
def site(web_site):
    return web_site.rstrip("/")


@pytest.fixture(scope="module")
def host(site):
    parts = urlsplit(site)
    return parts.hostname, parts.port or 80


@pytest.fixture(scope="module")
def alice(fresh_db, endpoint):
    """alice (IdUser 1), registered by the 2012 app with the typed password "secret"."""
    with AppClient(endpoint) as phone:
        check_api(phone.register("alice", ALICE_PASS), R_ALICE, "new")


def request(host, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(*host, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def form(host, path, fields, headers=None):
    return request(host, "POST", path, urlencode(fields).encode(),
                   {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})


def new_app(site, redirect_uris="urn:ietf:wg:oauth:2.0:oob", scopes=("read", "write", "follow")):
    return Mastodon.create_app("iReporter E2E", scopes=list(scopes), redirect_uris=redirect_uris, api_base_url=site)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class Forms(HTMLParser):
    """The page's forms: each one's hidden fields, and its button's text."""

    def __init__(self, page: str):
        super().__init__()
        self.forms: list[dict] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"fields": {}, "buttons": []})
        elif tag == "input" and attrs.get("type") == "hidden":
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value", "")

    def handle_data(self, data):
        if self.lasttag == "button" and data.strip():
            self.forms[-1]["buttons"].append(data.strip())

    def fields(self, button: str) -> dict:
        return next(f["fields"] for f in self.forms if button in f["buttons"])


def test_an_app_registers_and_proves_itself_with_its_own_token(site, host, alice):
    client_id, client_secret = new_app(site, redirect_uris=["https://client.example/cb", "myapp://oauth"])
    status, _, body = form(host, "/oauth/token", {"grant_type": "client_credentials", "client_id": client_id,
                                                 "client_secret": client_secret, "scope": "read"})
    assert status == 200, body
    token = json.loads(body)
    assert token["token_type"] == "Bearer" and token["scope"] == "read" and isinstance(token["created_at"], int)
    status, _, body = request(host, "GET", "/api/v1/apps/verify_credentials",
                              headers={"Authorization": f"Bearer {token['access_token']}"})
    app = json.loads(body)
    assert status == 200 and app["name"] == "iReporter E2E" and "client_secret" not in app
    assert app["redirect_uris"] == ["https://client.example/cb", "myapp://oauth"]
    # The secret is checked; HTTP Basic is the other way to send it.
    status, _, body = form(host, "/oauth/token", {"grant_type": "client_credentials", "client_id": client_id,
                                                 "client_secret": client_secret + "x"})
    assert status == 401 and json.loads(body)["error"] == "invalid_client"
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    status, _, body = form(host, "/oauth/token", {"grant_type": "client_credentials"},
                           headers={"Authorization": f"Basic {basic}"})
    assert status == 200, body


def test_the_password_grant_with_the_typed_password_and_scopes_enforced(site, host, alice):
    client_id, client_secret = new_app(site)
    reader = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    reader.log_in("alice", "secret", scopes=["read"], allow_http=True)
    assert reader.account_verify_credentials()["username"] == "alice"
    with pytest.raises(MastodonAPIError) as refused:
        reader.status_post("a read token cannot post")
    assert refused.value.args[1] == 403 and "outside the authorized scopes" in str(refused.value)
    with pytest.raises(MastodonIllegalArgumentError):
        Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site,
                 version_check_mode="none").log_in("alice", "wrong", scopes=["read"], allow_http=True)
    status, _, body = form(host, "/oauth/token", {"grant_type": "password", "client_id": client_id,
                                                 "client_secret": client_secret, "username": "alice", "password": "wrong"})
    assert status == 400 and json.loads(body) == {"error": "invalid_grant", "error_description": "Authorization failed"}
    status, _, body = form(host, "/oauth/token", {"grant_type": "password", "client_id": client_id,
                                                 "client_secret": client_secret, "username": "alice", "password": "secret",
                                                 "scope": "admin:read"})
    assert status == 400 and json.loads(body)["error"] == "invalid_scope"


def test_a_wrong_or_revoked_token_is_mastodons_401(site, host, alice):
    client_id, client_secret = new_app(site)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    token = client.log_in("alice", "secret", scopes=["read"], allow_http=True)
    status, _, body = request(host, "GET", "/api/v1/accounts/verify_credentials",
                              headers={"Authorization": "Bearer " + token[:-1] + ("A" if token[-1] != "A" else "B")})
    assert (status, json.loads(body)) == (401, {"error": "The access token is invalid"})
    client.revoke_access_token(allow_http=True)
    with pytest.raises(MastodonUnauthorizedError):
        client.account_verify_credentials()
    # RFC 7009: revoking an unknown token is no error either.
    status, _, body = form(host, "/oauth/revoke", {"client_id": client_id, "client_secret": client_secret, "token": "nope"})
    assert (status, body) == (200, b"{}")


def test_a_client_whose_token_was_revoked_signs_in_again(site, host, alice):
    """Mastodon.py sends its last token with every request, /oauth/token
    included. Mastodon does not look at it there, nor at the instance's
    description; each answered 401 here, so a bot whose token was revoked
    could not sign in again."""
    client_id, client_secret = new_app(site)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    stale = client.log_in("alice", "secret", scopes=["read"], allow_http=True)
    status, _, _ = form(host, "/oauth/revoke", {"client_id": client_id, "client_secret": client_secret, "token": stale})
    assert status == 200
    with pytest.raises(MastodonUnauthorizedError):
        client.account_verify_credentials()
    assert client.instance(), "read with the revoked token sent"
    assert client.log_in("alice", "secret", scopes=["read"], allow_http=True) != stale
    assert client.account_verify_credentials()["username"] == "alice"


def test_the_authorization_code_flow_of_mastodon_py_over_plain_http(site, host, alice):
    """Mastodon.py's authorization URL, the page's two forms as a browser
    posts them (its cookie, its origin), the code exchanged by log_in."""
    callback = site + CALLBACK_PATH
    client_id, client_secret = new_app(site, redirect_uris=callback)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    url = client.auth_request_url(redirect_uris=callback, scopes=["read", "write"], state="s t&a", allow_http=True)
    parts = urlsplit(url)
    status, headers, page = request(host, "GET", f"{parts.path}?{parts.query}")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    login = Forms(page.decode()).fields("Log in")
    origin = {"Origin": site}
    status, headers, page = form(host, "/oauth/authorize", {**login, "username": "alice", "password": "secret"}, origin)
    assert status == 200 and "Signed in as <strong>alice</strong>" in page.decode()
    cookie = headers["Set-Cookie"].split(";")[0]
    consent = Forms(page.decode()).fields("Authorize")
    status, headers, _ = form(host, "/oauth/authorize", consent, {**origin, "Cookie": cookie})
    assert status == 302
    location = urlsplit(headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == callback
    query = parse_qs(location.query)
    assert query["state"] == ["s t&a"]
    token = client.log_in(code=query["code"][0], redirect_uri=callback, scopes=["read", "write"], allow_http=True)
    assert token and client.account_verify_credentials()["username"] == "alice"
    with pytest.raises(MastodonIllegalArgumentError):
        client.log_in(code=query["code"][0], redirect_uri=callback, scopes=["read", "write"], allow_http=True)  # once
    # Another site's page cannot make the signed-in browser authorize.
    status, _, page = form(host, "/oauth/authorize", consent, {"Origin": "http://evil.example", "Cookie": cookie})
    assert status == 403 and b"Location" not in page


def test_a_redirect_uri_not_registered_is_refused_on_our_page(site, host, alice):
    client_id, _ = new_app(site, redirect_uris="https://client.example/cb")
    status, headers, page = request(host, "GET", "/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": "https://evil.example/cb", "scope": "read"}))
    assert status == 400 and "Location" not in headers
    assert b"not one this application registered" in page
    # The app's own mistake: told here, with a link back the person may follow, never a redirect by
    # itself (anyone may register an app: this site's links would go anywhere).
    status, headers, page = request(host, "GET", "/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": "https://client.example/cb", "scope": "push"}))
    assert status == 400 and "Location" not in headers
    assert b'<a href="https://client.example/cb?error=invalid_scope' in page


def test_the_authorization_code_flow_in_chromium_with_pkce(site, host, alice):
    callback = site + CALLBACK_PATH
    client_id, client_secret = new_app(site, redirect_uris=callback)
    verifier, challenge = pkce()
    driver = browser.start()
    try:
        driver.get(site + "/oauth/authorize?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": callback, "scope": "read write",
            "state": "xyz", "code_challenge": challenge, "code_challenge_method": "S256"}))
        browser.by_label(driver, "Username").send_keys("alice")
        browser.by_label(driver, "Password").send_keys("secret")
        browser.button(driver, "Log in").click()
        browser.wait_for(lambda: "Signed in as" in driver.page_source, what="the consent page")
        browser.button(driver, "Authorize").click()
        browser.wait_for(lambda: CALLBACK_PATH in driver.current_url, what="the redirect to the app")
        query = parse_qs(urlsplit(driver.current_url).query)
        violations = [entry for entry in driver.get_log("browser") if "Content Security Policy" in entry["message"]]
    finally:
        driver.quit()
    assert query["state"] == ["xyz"] and not violations
    exchange = {"grant_type": "authorization_code", "client_id": client_id, "client_secret": client_secret,
                "code": query["code"][0], "redirect_uri": callback}
    status, _, body = form(host, "/oauth/token", {**exchange, "code_verifier": pkce()[0]})  # another verifier
    assert status == 400 and json.loads(body)["error"] == "invalid_grant"
    status, _, body = form(host, "/oauth/token", {**exchange, "code_verifier": verifier})
    assert status == 200, body
    token = json.loads(body)
    assert token["scope"] == "read write"
    status, _, body = request(host, "GET", "/api/v1/accounts/verify_credentials",
                              headers={"Authorization": f"Bearer {token['access_token']}"})
    assert status == 200 and json.loads(body)["username"] == "alice"


def test_toot_logs_in_from_the_console(site, alice, tmp_path):
    environment = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)}
    login = subprocess.run(["toot", "login_cli", "--instance", site, "--email", "alice"], input="secret\n",
                           capture_output=True, text=True, timeout=60, env=environment)
    assert login.returncode == 0, login.stdout + login.stderr
    assert "Successfully logged in" in login.stdout
    whoami = subprocess.run(["toot", "whoami"], capture_output=True, text=True, timeout=60, env=environment)
    assert whoami.returncode == 0 and "@alice" in whoami.stdout, whoami.stdout + whoami.stderr


def test_an_app_registers_a_person(site, alice, endpoint):
    client_id, client_secret = new_app(site)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    token = client.create_account("carol", "carolsecret", "carol@example.com", agreement=True, scopes=["read", "write"])
    assert token and client.account_verify_credentials()["username"] == "carol"
    # The same account in the 2012 app, with the same typed password.
    with AppClient(endpoint) as phone:
        assert b'"username":"carol"' in phone.login("carol", app_password("carolsecret")).body


def test_a_person_lists_and_revokes_the_apps_they_authorized(site, host, alice, endpoint):
    client_id, client_secret = new_app(site)
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site, version_check_mode="none")
    client.log_in("alice", "secret", scopes=["read"], allow_http=True)
    app_id = client.app_verify_credentials()["id"]
    with AppClient(endpoint) as phone:
        phone.login("alice", ALICE_PASS)
        listed = json.loads(phone.call({"command": "authorized_apps"}).body)["result"]
        assert any(app["IdApp"] == app_id and app["scopes"] == "read" for app in listed)
        assert json.loads(phone.call({"command": "revoke_app", "IdApp": app_id}).body) == {"successful": 1}
        assert not any(app["IdApp"] == app_id for app in json.loads(phone.call({"command": "authorized_apps"}).body)["result"])
    with pytest.raises(MastodonUnauthorizedError):
        client.account_verify_credentials()


def test_the_server_describes_itself(site, host, alice):
    status, _, body = request(host, "GET", "/.well-known/oauth-authorization-server")
    metadata = json.loads(body)
    # The site's own name (nginx's server_name), never the Host header.
    assert status == 200 and re.match(r"http://[^/]+/$", metadata["issuer"])
    assert metadata["token_endpoint"] == metadata["issuer"] + "oauth/token"
    assert "S256" in metadata["code_challenge_methods_supported"]
    assert {"authorization_code", "password", "client_credentials"} <= set(metadata["grant_types_supported"])
    assert {"read", "write", "follow", "write:statuses"} <= set(metadata["scopes_supported"])

    instance = Mastodon(api_base_url=site, version_check_mode="none").instance()
    assert re.match(r"4\.\d+\.\d+ \(compatible; iReporter .+\)$", instance["version"])
    assert "image/jpeg" in instance["configuration"]["media_attachments"]["supported_mime_types"]
    assert instance["configuration"]["media_attachments"]["image_size_limit"] == 20 * 1024 * 1024
    status, _, body = request(host, "GET", "/api/v1/instance")
    assert status == 200 and json.loads(body)["stats"]["user_count"] >= 1
    # The instance's picture, as the apps show it on their server lists: an
    # image their native loaders read (a PNG, not the page's SVG icon).
    v2 = json.loads(request(host, "GET", "/api/v2/instance")[2])
    assert v2["thumbnail"]["url"] == json.loads(body)["thumbnail"]
    status, headers, picture = request(host, "GET", urlsplit(v2["thumbnail"]["url"]).path)
    assert (status, headers["Content-Type"], picture[:8]) == (200, "image/png", b"\x89PNG\r\n\x1a\n"), v2["thumbnail"]
    status, _, body = request(host, "GET", "/.well-known/nodeinfo")
    href = json.loads(body)["links"][0]["href"]
    status, _, body = request(host, "GET", urlsplit(href).path)
    assert status == 200 and json.loads(body)["usage"]["users"]["total"] >= 1
    assert request(host, "GET", "/api/v1/instance/peers")[::2] == (200, b"[]")
    # No federation: WebFinger and host-meta are the API's JSON 404, not the web server's page.
    for path in ("/.well-known/webfinger?resource=acct:alice@localhost", "/.well-known/host-meta"):
        status, headers, body = request(host, "GET", path)
        assert (status, headers["Content-Type"], json.loads(body)) == (404, "application/json; charset=utf-8",
                                                                       {"error": "Record not found"}), (path, body[:200])


def test_answers_carry_mastodons_rate_limit_headers(host, alice):
    first = request(host, "GET", "/api/v1/instance/peers")[1]
    second = request(host, "GET", "/api/v1/instance/peers")[1]
    limit = int(first["X-RateLimit-Limit"])
    assert int(second["X-RateLimit-Remaining"]) == int(first["X-RateLimit-Remaining"]) - 1 < limit
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$", first["X-RateLimit-Reset"])
