"""Headless Chromium (Debian's chromium + chromedriver) driven by Selenium,
for the web client's tests: no browser is downloaded. The steps a person
takes work with any driver that has Selenium's calls (firefox.py's too);
the headers every test of the client checks, whoever serves it (nginx,
Apache)."""
from __future__ import annotations

import gzip
import json
import re
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Callable

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PHONE = (390, 844)
DESKTOP = (1280, 800)


def start(width: int = DESKTOP[0], height: int = DESKTOP[1], phone: bool = False,
          reduced_motion: bool = False, host_names: tuple[str, ...] = ()) -> webdriver.Chrome:
    """`host_names`: names the browser finds at 127.0.0.1 (no resolver asked),
    for a site that is not `localhost` (to which Chromium gives privileges
    such as `Sec-Fetch-*` over plain HTTP)."""
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(argument)
    if host_names:
        options.add_argument("--host-resolver-rules=" + ", ".join(f"MAP {name} 127.0.0.1" for name in host_names))
    if phone:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 3.0, "touch": True}})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    if not phone:  # the page's own size, whatever the window's decorations take
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    if reduced_motion:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    return driver


def wait_for(predicate: Callable[[], object], timeout: float = 10.0, what: str = "condition"):
    """Polls until `predicate()` is truthy (bounded); returns its value."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # an element not there yet
            last_error = error
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}" + (f" ({last_error})" if last_error else ""))


# What the page hears, held back by the test (window.held): the answers to
# the commands in `held.commands` ("stream", or "stream?count=50": only
# those sent with these fields) until `held.release(command)`; the next
# `failing[command]` questions of a command, failed as a network would; the
# next `refuseChannels` notification channels (a 404 for a stream: closed
# for good); and, while `quickTimers`, its timers of 10 s or more (the
# test's clock) run in 0.3 s.
HOLD_SCRIPT = """
(() => {
  const held = window.held = Object.assign({ commands: [], answers: [], answering: {}, answered: {},
                                             failing: {}, refuseChannels: 0, quickTimers: false }, %s);
  held.commands = new Set(held.commands);
  const holding = (command, form) => [...held.commands].some((entry) => {
    const [name, fields] = entry.split('?');
    return name === command && [...new URLSearchParams(fields)].every(([field, value]) => form.get(field) === value);
  });
  const plainFetch = window.fetch.bind(window);
  window.fetch = async (url, init) => {
    const command = init && init.body instanceof FormData ? init.body.get('command') : null;
    if (command === null) return plainFetch(url, init);
    if (held.failing[command] > 0) {
      held.failing[command] -= 1;
      throw new TypeError('Failed to fetch');
    }
    held.answering[command] = (held.answering[command] || 0) + 1;
    // Answered once the page has read the answer and done what it does
    // with it at once (its awaits on the text; the test's next look is a
    // task after them).
    const done = () => setTimeout(() => {
      held.answering[command] -= 1;
      held.answered[command] = (held.answered[command] || 0) + 1;
    }, 0);
    let response;
    try {
      response = await plainFetch(url, init);
      if (holding(command, init.body)) await new Promise((release) => held.answers.push({ command, release }));
    } catch (failure) {
      done();
      throw failure;
    }
    const text = response.text.bind(response);
    response.text = () => text().finally(done);
    return response;
  };
  held.release = (command) => {
    const chosen = held.answers.filter((answer) => answer.command === command);
    held.answers = held.answers.filter((answer) => answer.command !== command);
    chosen.forEach((answer) => answer.release());
  };
  const PlainEventSource = window.EventSource;
  window.EventSource = class extends PlainEventSource {
    constructor(url, options) {
      const refused = held.refuseChannels > 0 && String(url).includes('/live/notifications-');
      if (refused) held.refuseChannels -= 1;
      super(refused ? '/no-such-event-stream' : url, options);
    }
  };
  const plainSetTimeout = window.setTimeout.bind(window);
  window.setTimeout = (handler, ms, ...rest) => plainSetTimeout(handler, held.quickTimers && ms >= 10000 ? 300 : ms, ...rest);
})();
"""


class Held:
    """HOLD_SCRIPT in every page the driver's current tab opens while the `with` lasts
    (`settings`: window.held's first values, e.g. quickTimers=True,
    commands=["notifications"]); everything held is let go at its end."""

    def __init__(self, driver, **settings):
        self.driver = driver
        self.settings = settings

    def __enter__(self) -> "Held":
        script = HOLD_SCRIPT % json.dumps(self.settings)
        self.script = self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})["identifier"]
        return self

    def __exit__(self, *_):
        self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self.script})
        self.driver.execute_script("""if (window.held) {
            held.quickTimers = false; held.commands.clear();
            [...new Set(held.answers.map((answer) => answer.command))].forEach(held.release);
        }""")

    def run(self, script: str):
        return self.driver.execute_script(script)

    def hold(self, command: str):
        self.run(f"held.commands.add({command!r})")

    def release(self, command: str):
        """The answers held so far; the next are held still, until `stop`."""
        self.run(f"held.release({command!r})")

    def stop(self, command: str):
        self.run(f"held.commands.delete({command!r})")

    def held(self, command: str) -> int:
        return self.run(f"return held.answers.filter((answer) => answer.command === {command!r}).length")

    def answered(self, command: str) -> int:
        """Answers returned to the page (let go, if they were held)."""
        return self.run(f"return held.answered[{command!r}] || 0")

    def answering(self, command: str) -> int:
        return self.run(f"return held.answering[{command!r}] || 0")


def close_other_tabs(driver, keep: str):
    """Closes every tab of the browser but `keep`, and goes back to it."""
    for handle in driver.window_handles:
        if handle != keep:
            driver.switch_to.window(handle)
            driver.close()
    driver.switch_to.window(keep)


def open_live_tabs(driver, site: str, count: int, scripts: tuple[str, ...] = ()) -> list[str]:
    """Opens `count` new tabs on `site`, each running `scripts` before the
    page's own, and waits until each gets new photos live: their handles."""
    handles = []
    for _ in range(count):
        driver.switch_to.new_window("tab")
        for script in scripts:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
        driver.get(site)
        # (A lease a closed tab left, had it not given it up, ends within 10 s.)
        wait_for(lambda: updates(driver) == "live", timeout=20, what="live in the new tab")
        handles.append(driver.current_window_handle)
    return handles


def by_label(driver, label: str):
    """The form control whose <label> says `label` (how a person finds it)."""
    for element in driver.find_elements(By.XPATH, f"//label[normalize-space()='{label}']"):
        if element.is_displayed():
            return driver.find_element(By.ID, element.get_attribute("for"))
    raise AssertionError(f"no visible control labelled {label!r}")


def button(driver, name: str):
    """The visible button whose accessible name (text or aria-label) starts with `name`;
    inside the open modal dialog if there is one (what a person can reach)."""
    scope = driver.find_elements(By.CSS_SELECTOR, "dialog[open]") or [driver]
    for element in scope[0].find_elements(By.TAG_NAME, "button"):
        accessible = (element.get_attribute("aria-label") or element.text or "").strip()
        if element.is_displayed() and (accessible == name or accessible.startswith(name + " ")):
            return element
    raise AssertionError(f"no visible button named {name!r}")


def accessible_name(element) -> str:
    """The name the browser's accessibility tree gives `element` (what a
    screen reader says): Selenium's in Chromium, Marionette's in Firefox."""
    name = element.accessible_name if hasattr(element, "accessible_name") else element.computed_label
    return (name or "").strip()


def named(driver, name: str):
    """The visible button whose accessible name is exactly `name` (a count
    beside it is no part of it)."""
    for element in driver.find_elements(By.TAG_NAME, "button"):
        if element.is_displayed() and accessible_name(element) == name:
            return element
    raise AssertionError(f"no visible button whose accessible name is {name!r}")


def link(driver, name: str):
    """The visible link whose accessible name is exactly `name`."""
    for element in driver.find_elements(By.TAG_NAME, "a"):
        if element.is_displayed() and accessible_name(element) == name:
            return element
    raise AssertionError(f"no visible link whose accessible name is {name!r}")


def no_dialog(driver) -> bool:
    """True when no JavaScript alert/confirm/prompt is open."""
    try:
        driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def console_errors(driver) -> list[str]:
    """Console messages of level SEVERE (script errors, CSP violations, failed loads)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def tiles(driver) -> list[str]:
    """The titles of the photos in the grid, in order (read in one step: the
    page may draw the grid anew at any moment)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#grid .tile .title')].map(title => title.textContent)")


def updates(driver) -> str | None:
    """How the page gets new photos: 'live' (Nchan's EventSource) or 'polling'."""
    return driver.execute_script("return document.documentElement.dataset.updates || null")


def log_in(driver, site: str, username: str, password: str, register: bool):
    driver.get(site)
    wait_for(lambda: button(driver, "Log in"), what="the Log in button").click()
    by_label(driver, "Username").send_keys(username)
    by_label(driver, "Password").send_keys(password)
    button(driver, "Register" if register else "Log in").click()
    wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "#account a").text == username, what="the account name")


def log_out(driver):
    button(driver, "Log out").click()
    wait_for(lambda: button(driver, "Log in"), what="logged out")


def wait_in_every_tab(driver, handles: list[str], check: Callable[[], object], what: str, timeout: float = 10.0):
    """Goes to each of the tabs `handles` in turn and waits there until `check()` holds."""
    for number, handle in enumerate(handles, 1):
        driver.switch_to.window(handle)
        wait_for(check, timeout, what=f"{what} in tab {number}")


def post_photo(driver, path: Path, title: str, effect: str = ""):
    choose_photo(driver, path, effect)
    upload_photo(driver, title)


def choose_photo(driver, path: Path, effect: str = ""):
    """Post, pick the photo, see its preview; with an effect, chosen in the
    row of the effects, the server's rendering large."""
    button(driver, "Post").click()
    by_label(driver, "Photo").send_keys(str(path))
    preview = driver.find_element(By.ID, "preview-image")
    wait_for(lambda: driver.find_element(By.ID, "preview").is_displayed(), what="the preview")
    if effect:
        wait_for(lambda: effect_choice(driver, effect.capitalize()), what=f"{effect} in the effects").click()
        wait_for(lambda: preview.get_attribute("data-effect") == effect and loaded(driver, preview),
                 what=f"the server's preview of {effect}")
        assert preview.get_attribute("src").startswith("blob:")


def effect_choice(driver, name: str):
    """The effect `name` in the post dialog's row (a radio button labelled by
    its name under the legend Effect); what a person clicks is its label."""
    return driver.find_element(
        By.XPATH, f"//fieldset[legend[normalize-space()='Effect']]//label[normalize-space()='{name}']")


def effect_previews(driver) -> dict:
    """The effects row: each choice's name and whether its picture (the
    server's rendering of the person's photo) is there."""
    pairs = driver.execute_script("""
        return [...document.querySelectorAll('#effect-row .effect')].map(label =>
            [label.textContent, Boolean(label.querySelector('img').complete && label.querySelector('img').naturalWidth)])""")
    return dict(pairs)  # in the row's order (an object's keys would come back sorted)


def upload_photo(driver, title: str):
    by_label(driver, "Title").send_keys(title)
    button(driver, "Upload").click()
    wait_for(lambda: title in tiles(driver), timeout=20, what=f"the photo {title!r} in the grid")


def comment_in_two_lines(driver, first: str, second: str):
    """Comments on the open photo from the keyboard: Shift+Enter breaks the
    line, Enter sends (no click on the button)."""
    field = by_label(driver, "Comment")
    field.send_keys(first)
    field.send_keys(Keys.SHIFT + Keys.ENTER + Keys.NULL)  # NULL lets go of Shift
    field.send_keys(second)
    field.send_keys(Keys.ENTER)


def shown_comment_lines(driver, text: str) -> list[str] | None:
    """The lines the comment list draws the comment whose text is `text` on
    (its text's line boxes, told apart by their tops), or None."""
    return driver.execute_script("""
        const shown = [...document.querySelectorAll('#comment-list li p')].find(p => p.textContent === arguments[0]);
        if (!shown) return null;
        const range = document.createRange();
        range.selectNodeContents(shown);
        return [...new Set([...range.getClientRects()].map(rect => Math.round(rect.top)))].map(String);""", text)


def settled(driver) -> bool:
    """No transition running: the photo view slides in for 250 ms, and a
    click meanwhile lands on whatever has moved under its point."""
    return driver.execute_script("return !document.querySelector('.viewer.opening')"
                                 " && document.getAnimations().every(a => a.playState !== 'running')")


def open_newest(driver, keyboard: bool = False):
    """Opens the grid's first tile, found again if the grid is redrawn
    meanwhile (the stream refreshed, a photo arriving by the live stream),
    and waits for the photo view to be in place."""
    def attempt():
        tile = driver.find_element(By.CSS_SELECTOR, "#grid .tile")
        tile.send_keys(Keys.ENTER) if keyboard else tile.click()
        return True
    wait_for(attempt, what="the newest tile, opened")
    # Shown first (the click's hash change comes a moment later), then still.
    wait_for(lambda: driver.find_element(By.ID, "viewer").is_displayed() and settled(driver), what="the photo view in place")


def double_tap(driver, element):
    """Two taps of one finger on the middle of `element` (Chromium's touch
    input: the phone's emulation has a touch screen)."""
    finger = PointerInput(interaction.POINTER_TOUCH, "finger")
    actions = ActionBuilder(driver, mouse=finger, duration=0)
    actions.pointer_action.move_to(element).pointer_down().pointer_up().pointer_down().pointer_up()
    actions.perform()
    actions.clear_actions()  # the finger lifted for good: a later click is a tap of its own


def touch_swipe(driver, element, dx: int):
    """One finger drawn `dx` px across the middle of `element` (left when
    negative) in 200 ms, held still a moment before it is lifted, as a
    person's finger is: lifted while moving it would start a fling, and
    Chromium takes the next tap, on Close say, for stopping the fling
    (no click: a run's Close tap came so)."""
    finger = PointerInput(interaction.POINTER_TOUCH, "finger")
    actions = ActionBuilder(driver, mouse=finger, duration=200)  # each move's
    actions.pointer_action.move_to(element).pointer_down().move_by(dx, 0).pause(0.15).pointer_up()
    actions.perform()
    actions.clear_actions()


def loaded(driver, image) -> bool:
    return driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image)


# The policy of deploy/nginx/ireporter-web.conf and deploy/apache/ireporter-web.conf.
CONTENT_SECURITY_POLICY = ("default-src 'self'; img-src 'self' blob:; script-src 'self'; style-src 'self'; "
                           "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                           "frame-ancestors 'none'")
CONTENT_TYPES = {"js": ("application/javascript", "text/javascript"), "css": ("text/css",),
                 "svg": ("image/svg+xml",)}


def _get(url: str):
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip"}), timeout=10) as r:
        body = r.read()
        return r.headers, gzip.decompress(body) if r.headers.get("Content-Encoding") == "gzip" else body


def check_headers(site: str):
    """The page: the strict policy, nosniff, same-origin referrers, never
    cached, compressed; each asset it names: cached a year, compressed, its
    own type, nosniff."""
    headers, html = _get(site)
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, headers
    assert headers["X-Content-Type-Options"] == "nosniff", headers
    assert headers["Referrer-Policy"] == "same-origin", headers
    assert headers["Cache-Control"] == "no-cache", headers
    assert headers["Content-Encoding"] == "gzip", headers
    assert b"<script type=\"module\" src=\"assets/" in html and b"<script>" not in html and b"style=" not in html
    assets = re.findall(rb'"(assets/[0-9]+/[a-z0-9-]+\.(js|css|svg))"', html)
    assert len(assets) == 3, assets
    for path, kind in assets:
        headers, _ = _get(site + path.decode())
        assert "immutable" in headers["Cache-Control"] and "max-age=31536000" in headers["Cache-Control"], headers
        assert headers["Content-Encoding"] == "gzip", (path, headers)
        assert headers["Content-Type"].split(";")[0] in CONTENT_TYPES[kind.decode()], (path, headers)
        assert headers["X-Content-Type-Options"] == "nosniff", (path, headers)
