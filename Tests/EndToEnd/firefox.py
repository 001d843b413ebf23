"""Headless Firefox (Debian's firefox-esr) driven through Marionette, its own
remote protocol, by Mozilla's client (PyPI's marionette-driver): Debian
packages no geckodriver, and nothing else may be downloaded. The driver
answers the calls of Selenium's that browser.py's steps use (get,
find_element(s), execute_script, quit), so the same steps drive both."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from marionette_driver.marionette import Marionette

import servers

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")


class Firefox(Marionette):
    """firefox-esr --marionette --headless on a fresh profile of its own."""

    def __init__(self, width: int, height: int):
        if not FIREFOX:
            pytest.fail("firefox-esr is missing (scripts/deps.sh installs it)", pytrace=False)
        self.profile = Path(tempfile.mkdtemp(prefix="ir-firefox-", dir="/tmp"))
        port = servers.unused_port()
        (self.profile / "user.js").write_text(
            f'user_pref("marionette.port", {port});\n'
            'user_pref("browser.shell.checkDefaultBrowser", false);\n'
            'user_pref("datareporting.policy.dataSubmissionEnabled", false);\n')
        self.log = self.profile / "firefox.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [FIREFOX, "--marionette", "--headless", "--no-remote", "-profile", str(self.profile),
                 f"--width={width}", f"--height={height}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        super().__init__(host="127.0.0.1", port=port)
        try:
            self.start_session(timeout=60)
        except Exception:
            self.quit()
            raise

    def get(self, url: str):
        self.navigate(url)

    def execute_script(self, script: str, *args):
        return super().execute_script(script, script_args=args)

    def quit(self):
        try:
            if self.session is not None:
                self.delete_session()
        finally:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            shutil.rmtree(self.profile, ignore_errors=True)
