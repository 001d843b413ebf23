"""Headless Chromium (Debian's chromium + chromedriver) driven by Selenium,
for the web client's tests: no browser is downloaded."""
from __future__ import annotations

import shutil
import time
from typing import Callable

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PHONE = (390, 844)
DESKTOP = (1280, 800)


def start(width: int = DESKTOP[0], height: int = DESKTOP[1], phone: bool = False,
          reduced_motion: bool = False) -> webdriver.Chrome:
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(argument)
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
