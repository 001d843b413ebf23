"""The web client against the 2012 PHP original (the reference's up.sh, as
test_differential.py brings it up), in a real headless Chromium: the page
finds out that the server has none of the later commands (no extras, photo
sizes, effects, search, person API) and is still a working stream, photo
view, login, posting page and person's page, without a console error.

A private nginx serves web/ (deploy/nginx/ireporter-web.conf, as a site
would) and passes /iReporter/ to the reference's own nginx: one origin,
the page in front of the original."""
from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

import browser
import servers
from appclient import AppClient
from browser import console_errors, log_in, log_out, tiles, wait_for
from test_differential import reference, reset_reference  # noqa: F401 (the fixture, shared)

PORT = servers.http_port(3)


class PageBeforeThePHP(servers.Nginx):
    """The test stack's nginx as scripts/stack.sh renders it (the web client's
    snippet and its copy of web/), its server block replaced: the snippet at /
    and the reference behind /iReporter/."""

    def __init__(self, run_dir: Path, port: int, reference_url: str):
        super().__init__(run_dir, port, socket_path=run_dir / "no-server.sock", upload_dir=run_dir / "upload")
        origin = reference_url.split("/iReporter/")[0]
        (self.dir / "nginx.conf").write_text(f"""
user www-data;
worker_processes 1;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path {self.dir}/tmp/client_body;
    fastcgi_temp_path {self.dir}/tmp/fastcgi;
    proxy_temp_path {self.dir}/tmp/proxy;
    uwsgi_temp_path {self.dir}/tmp/uwsgi;
    scgi_temp_path {self.dir}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 20m;
        include {self.dir}/ireporter-web.conf;
        location /iReporter/ {{ proxy_pass {origin}; }}
    }}
}}
""")


@pytest.fixture(scope="module")
def site(reference):  # noqa: F811 (the imported fixture)
    reset_reference(reference)
    work = servers.make_workdir("web-php")
    nginx = PageBeforeThePHP(work, PORT, reference["endpoint"].base_url)
    nginx.start()
    yield {"url": f"http://127.0.0.1:{PORT}/", "api": reference["endpoint"]}
    nginx.stop()
    servers.remove_workdir(work)


@pytest.fixture(scope="module")
def driver():
    started = browser.start(*browser.DESKTOP)
    yield started
    started.quit()


def test_the_page_works_with_the_2012_server(site, driver, images, tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(images.photo)
    phone = AppClient(site["api"])
    try:
        assert "result" in phone.register("phpposter", "pw").json()
        assert phone.upload(images.photo, title="From the 2012 app").json() == {"successful": 1}
    finally:
        phone.close()

    driver.get(site["url"])
    wait_for(lambda: tiles(driver) == ["From the 2012 app"], what="the original's stream")
    # Nothing the original lacks is offered: no search, no votes, no comments.
    assert not driver.find_element(By.ID, "search-form").is_displayed()
    thumbnail = driver.find_element(By.CSS_SELECTOR, "#grid .tile img")
    wait_for(lambda: browser.loaded(driver, thumbnail), what="the thumbnail")  # currentSrc is empty until then
    src = driver.execute_script("return arguments[0].currentSrc", thumbnail)
    assert src.endswith("-thumb.jpg"), ("the 2012 thumbnail URL", src)
    browser.open_newest(driver)
    wait_for(lambda: driver.find_element(By.ID, "viewer-title").text == "From the 2012 app", what="the photo view")
    image = driver.find_element(By.ID, "viewer-image")
    wait_for(lambda: browser.loaded(driver, image), what="the photo itself")
    assert not driver.find_element(By.ID, "votes").is_displayed()
    assert not driver.find_element(By.ID, "comments").is_displayed()
    driver.find_element(By.ID, "viewer-close").click()

    # Log in (register), post without an effects row, see it in the grid.
    log_in(driver, site["url"], "phpweb", "s3cret-pass", register=True)
    browser.choose_photo(driver, photo)
    assert not driver.find_element(By.ID, "post-effects").is_displayed(), "no effects on the original"
    browser.upload_photo(driver, "From the browser")
    assert tiles(driver) == ["From the browser", "From the 2012 app"]

    # A person's page: theirs among the newest (the original has no IdUser), no count it cannot know.
    user_id = driver.execute_script("return JSON.parse(localStorage.getItem('ireporter.user')).IdUser")
    driver.get(f"{site['url']}#/user/{user_id}")
    wait_for(lambda: tiles(driver) == ["From the browser"], what="the person's photos")
    wait_for(lambda: driver.find_element(By.ID, "heading").text == "phpweb", what="the person's name")
    assert not driver.find_element(By.ID, "stats").is_displayed()

    log_out(driver)
    assert console_errors(driver) == []
