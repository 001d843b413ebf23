"""Cross-site request forgery from another port of the same host name
(issue 26, 1), in a real headless Chromium: the victim signed in to the web
client at http://site.test:PORT opens a page at http://site.test:OTHER,
which sends like, comment, delete, logout (and a JSON-RPC delete) to the
API with forms and with fetch. The two are the same *site* (the session
cookie, SameSite=Lax, goes along) but different *origins*, and over plain
HTTP to a name that is not localhost Chromium sends no `Sec-Fetch-Site`:
only `Origin` tells them apart, scheme, host and port. Every write must be
refused: the photo still there, no like, no comment, still signed in."""
from __future__ import annotations

import http.server
import socket
import threading
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By

import browser
from appclient import AppClient
from browser import log_in, post_photo, wait_for
from servers import check_json

pytestmark = pytest.mark.usefixtures("fresh_db")

NAME = "site.test"

# Each form posts into its own frame (the page stays to run the next);
# fetch() goes with the cookie, without CORS (an opaque answer is enough to
# do harm). Logout comes last, so that the others meet a signed-in session.
ATTACK = """<!doctype html><html><head><title>win a prize</title></head><body>
<iframe name="f1"></iframe><iframe name="f2"></iframe><iframe name="f3"></iframe><iframe name="f4"></iframe>
<form id="like" method="post" action="{api}" target="f1">
  <input name="command" value="like"><input name="IdPhoto" value="{photo}"></form>
<form id="comment" method="post" action="{api}" target="f2" enctype="multipart/form-data">
  <input name="command" value="comment"><input name="IdPhoto" value="{photo}"><input name="text" value="form was here"></form>
<form id="delete" method="post" action="{api}" target="f3" enctype="multipart/form-data">
  <input name="command" value="delete"><input name="IdPhoto" value="{photo}"></form>
<form id="logout" method="post" action="{api}" target="f4">
  <input name="command" value="logout"></form>
<script>
const api = "{api}";
const send = (fields) => {{
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return fetch(api, {{method: "POST", mode: "no-cors", credentials: "include", body}}).catch(() => null);
}};
const frameLoaded = (name) => new Promise(done => document.querySelector(`iframe[name=${{name}}]`).onload = done);
(async () => {{
  await send({{command: "like", IdPhoto: "{photo}"}});
  await send({{command: "comment", IdPhoto: "{photo}", text: "fetch was here"}});
  await fetch(api + "rpc", {{method: "POST", mode: "no-cors", credentials: "include",
    body: JSON.stringify({{jsonrpc: "2.0", method: "delete", params: {{IdPhoto: {photo}}}, id: 1}}),
    headers: {{"Content-Type": "text/plain"}}}}).catch(() => null);
  await send({{command: "delete", IdPhoto: "{photo}"}});
  for (const form of ["like", "comment", "delete"]) {{
    const loaded = frameLoaded(document.getElementById(form).target);
    document.getElementById(form).submit();
    await loaded;
  }}
  await send({{command: "logout"}});
  const loaded = frameLoaded("f4");
  document.getElementById("logout").submit();
  await loaded;
  document.title = "done";
}})();
</script></body></html>"""


@pytest.fixture(scope="module")
def victim_site(web_site) -> str:
    """The stack's web client under a name that is not localhost."""
    return f"http://{NAME}:{urlsplit(web_site).port}/"


@pytest.fixture(scope="module")
def attacker(tmp_path_factory, victim_site):
    """A page on another port of the same name (a plain Python server);
    yields a function that writes the page for a photo and gives its URL."""
    folder = tmp_path_factory.mktemp("attacker")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            pass

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def page(photo: str) -> str:
        (folder / "prize.html").write_text(ATTACK.format(api=victim_site + "iReporter/", photo=photo))
        return f"http://{NAME}:{port}/prize.html"
    yield page
    server.shutdown()
    server.server_close()


def test_a_page_on_another_port_cannot_write_for_a_signed_in_visitor(victim_site, attacker, endpoint, images, tmp_path,
                                                                      db):
    driver = browser.start(*browser.DESKTOP, host_names=(NAME,))
    try:
        photo = tmp_path / "photo.jpg"
        photo.write_bytes(images.photo)
        log_in(driver, victim_site, "portvictim", "s3cret-pass", register=True)
        post_photo(driver, photo, "Mine to keep")
        with AppClient(endpoint) as anyone:
            rows = check_json(anyone.stream(), "stream")["result"]
        photo_id = next(row["IdPhoto"] for row in rows if row["title"] == "Mine to keep")
        likes, comments = db.count("votes"), db.count("comments")

        driver.get(attacker(photo_id))
        wait_for(lambda: driver.title == "done", timeout=20, what="the attacking page's requests")
        # The forms' answers, shown in their frames: the API's refusal.
        for frame in driver.find_elements(By.TAG_NAME, "iframe"):
            driver.switch_to.frame(frame)
            assert "Requests from other web sites are not allowed" in driver.find_element(By.TAG_NAME, "body").text
            driver.switch_to.default_content()

        assert (db.count("votes"), db.count("comments")) == (likes, comments), "no like, no comment"
        with AppClient(endpoint) as anyone:
            rows = check_json(anyone.stream(), "stream")["result"]
        assert any(row["IdPhoto"] == photo_id for row in rows), "the photo is still there"
        # Still signed in: the page, opened again, shows the account.
        driver.get(victim_site)
        wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "#account a").text == "portvictim",
                 what="the account, still signed in")
        # And the client's own writes from its own origin still work (a like).
        assert driver.execute_script("""
            const body = new FormData(); body.append('command', 'like'); body.append('IdPhoto', arguments[0]);
            return fetch('/iReporter/', {method: 'POST', body}).then(r => r.text());""", photo_id) != \
            '{"error":"Requests from other web sites are not allowed"}'
        assert db.count("votes") == likes + 1
    finally:
        driver.quit()
