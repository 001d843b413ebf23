"""One typed password for every client (issue 24, 2), in a real headless
Chromium through nginx, our server and MariaDB: the web client sends the
app's value (SHA-1 of the typed password and the app's salt), so an account
made by the app logs in on the web with the typed password and one made on
the web logs in from the app; an account the web client made before (its
hash is of the typed password) logs in through the web client once with
the typed password beside the app's value and is upgraded. What the page
sends is read from the page's own FormData."""
from __future__ import annotations


import pytest
from selenium.webdriver.common.by import By

import browser
from browser import button, by_label, console_errors, wait_for
from e2e import app_password

pytestmark = pytest.mark.usefixtures("fresh_db")

SIGNED_IN = b'{"result":[{"IdUser":"%d","username":"%s"}]}'

# Every field the page puts in a FormData, in order (run after the page loaded).
RECORD_FIELDS = """
window.sentFields = [];
const append = FormData.prototype.append;
FormData.prototype.append = function (name, value) { window.sentFields.push([name, String(value)]); return append.call(this, name, value); };
"""


@pytest.fixture(scope="module")
def driver():
    started = browser.start(*browser.DESKTOP)
    yield started
    started.quit()


def web_log_in(driver, site: str, username: str, typed: str, register: bool = False) -> list[list[str]]:
    """Logs in (or registers) as a person does; returns the fields the page sent."""
    driver.get(site)
    driver.execute_script("localStorage.clear()")
    driver.delete_all_cookies()
    driver.get(site)
    wait_for(lambda: button(driver, "Log in"), what="the Log in button").click()
    driver.execute_script(RECORD_FIELDS)
    by_label(driver, "Username").send_keys(username)
    by_label(driver, "Password").send_keys(typed)
    button(driver, "Register" if register else "Log in").click()
    wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "#account a").text == username, what="the account name")
    return driver.execute_script("return window.sentFields")


def passwords_sent(fields: list[list[str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in fields if "password" in name]


def stored_pass(db, name: str) -> str:
    return db.scalar(f"SELECT pass FROM login WHERE username = '{name}'")


def test_an_account_made_by_the_app_logs_in_on_the_web_with_the_typed_password(web_site, driver, client):
    phone = client()
    assert phone.register("appmade", app_password("typed on a phone")).body == SIGNED_IN % (1, b"appmade")
    fields = web_log_in(driver, web_site, "appmade", "typed on a phone")
    assert passwords_sent(fields) == [("password", app_password("typed on a phone"))], "one request, never the typed password"
    assert console_errors(driver) == []


def test_an_account_made_on_the_web_logs_in_from_the_app(web_site, driver, client, db):
    fields = web_log_in(driver, web_site, "webmade", "typed in a browser", register=True)
    assert passwords_sent(fields) == [("password", app_password("typed in a browser"))]
    stored = stored_pass(db, "webmade")
    # Stored as the app would have it: its value as sent (the stack's 2012 column) or that value's hash.
    assert stored == app_password("typed in a browser") or stored.startswith("$argon2id$"), stored
    user_id = int(db.scalar("SELECT IdUser FROM login WHERE username = 'webmade'"))
    assert client().login("webmade", app_password("typed in a browser")).body == SIGNED_IN % (user_id, b"webmade")


def test_an_account_the_web_client_made_before_is_upgraded_at_its_login(web_site, driver, client, db):
    # The request the web client sent before issue 24: the typed password itself.
    old_web = client()
    assert old_web.register("oldweb", "typed long ago").body.startswith(b'{"result":')
    user_id = int(db.scalar("SELECT IdUser FROM login WHERE username = 'oldweb'"))
    before = stored_pass(db, "oldweb")
    phone = client()
    assert phone.login("oldweb", app_password("typed long ago")).body == b'{"error":"Authorization failed"}', \
        "the app cannot log in yet"
    fields = web_log_in(driver, web_site, "oldweb", "typed long ago")
    assert passwords_sent(fields) == [("password", app_password("typed long ago")),
                                      ("password", app_password("typed long ago")),
                                      ("legacy_password", "typed long ago")], "refused once, then the typed password beside"
    assert stored_pass(db, "oldweb") != before, "re-stored"
    assert phone.login("oldweb", app_password("typed long ago")).body == SIGNED_IN % (user_id, b"oldweb"), "upgraded"
    # From now on the web client's first request is enough.
    assert passwords_sent(web_log_in(driver, web_site, "oldweb", "typed long ago")) == \
        [("password", app_password("typed long ago"))]
    assert console_errors(driver) == []


def test_the_page_computes_sha1_as_python_does(web_site, driver):
    """web/assets/password.js against hashlib, on lengths around the padding's edges and non-ASCII text."""
    import hashlib
    driver.get(web_site)
    texts = ["", "abc", "secret", "pässwörd 🔑"] + ["x" * n for n in (55, 56, 63, 64, 119, 120, 1000)]
    ours = driver.execute_async_script("""
        const [texts, done] = arguments;
        import(document.querySelector('script[type=module]').src.replace('app.js', 'password.js')).then((module) =>
            done(texts.map((text) => [module.sha1Hex(new TextEncoder().encode(text)), module.appPassword(text)])));
    """, texts)
    assert ours == [[hashlib.sha1(t.encode()).hexdigest(), app_password(t)] for t in texts]
    assert app_password("secret") == "18c69224371c58c547b68bfa6d28dc8aeff006e4"
