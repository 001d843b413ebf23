"""Apache 2.4 in front of the server, three ways, each with the deploy/ files
an operator installs (rendered with the test's paths), on a private Apache
(its own ServerRoot, only the modules needed, User www-data):

  127.0.0.1:8095  mod_proxy_fcgi -> our own running server on a unix socket
                  deploy/apache/ireporter-proxy-fcgi.conf, deploy/ireporter.conf.example
                  (with the Mastodon-compatible API at the host's root)
  127.0.0.1:8096  mod_fcgid LAMP drop-in: iReporter/index.fcgi (the binary)
                  deploy/apache/lamp/{.htaccess,ireporter.conf.example},
                  deploy/apache/ireporter-fcgid.conf
  127.0.0.1:8097  plain CGI (mod_cgid, mpm_event): iReporter/index.cgi
                  deploy/apache/lamp-cgi/.htaccess, deploy/apache/ireporter-cgi.conf

Each runs the app's flow (register, upload a JPEG larger than mod_fcgid's
default request limit, stream, GET the photo and its thumbnail, logout,
upload refused), plus what each deployment must keep private or limit.
Each also serves the browser client at / (deploy/apache/ireporter-web.conf),
which one test drives in Chromium (no Nchan here: it polls).

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_deploy_apache.py
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

import browser
import servers
from appclient import AppClient, Endpoint, multipart_body, multipart_content_type, read_response
from servers import WWW, app_flow
from reactions import jsonrpc_flow, reactions_flow

PROXY_PORT, FCGID_PORT, CGI_PORT = servers.http_port(0), servers.http_port(1), servers.http_port(2)
# The LAMP sites' flickr_api_keys: a signed Flickr request's key must reach the server.
LAMP_FLICKR_KEY = "lamp0flickr0key"
TOO_LARGE = {"error": "Photo is too large (the limit is 20 MB)"}


class Site:
    """One LAMP folder: DocumentRoot/iReporter with the binary, the
    .htaccess, ireporter.conf and upload/."""

    def __init__(self, base: Path, kind: str, binary: Path, db_url: str, session_dir: Path):
        self.docroot = base / f"{kind}-htdocs"
        self.app = self.docroot / "iReporter"
        self.upload_dir = self.app / "upload"
        self.upload_dir.mkdir(parents=True)
        servers.chown_www(self.upload_dir)
        self.upload_dir.chmod(0o755)
        self.docroot.chmod(0o755)
        self.app.chmod(0o755)
        script = "index.fcgi" if kind == "fcgid" else "index.cgi"
        self.script = servers.install_binary(binary, self.app / script)
        htaccess = servers.DEPLOY / "apache" / ("lamp" if kind == "fcgid" else "lamp-cgi") / ".htaccess"
        servers.render(htaccess, self.app / ".htaccess", {})
        # ireporter.conf beside the binary: the example, with this test's paths.
        text = (servers.DEPLOY / "apache/lamp/ireporter.conf.example").read_text()
        for old in ("/var/www/html/iReporter", "/run/mysqld/mysqld.sock"):
            assert old in text, f"deploy/apache/lamp/ireporter.conf.example no longer contains {old}"
        text = text.replace("/var/www/html/iReporter", str(self.app))
        self.access_log = servers.www_file(base / f"{kind}-access.log")
        text = servers.set_config_keys(text, {"db_url": db_url, "session_dir": session_dir,
                                              "access_log": self.access_log, "flickr_api_keys": LAMP_FLICKR_KEY})
        conf = self.app / "ireporter.conf"
        conf.write_text(text)
        os.chown(conf, 0, servers.grp_id(WWW))
        conf.chmod(0o640)
        # The server-level snippet for this folder.
        self.snippet = base / f"ireporter-{kind}.conf"
        replacements = {"/var/www/html/iReporter": str(self.app)}
        if kind == "fcgid":
            # mod_fcgid makes these as root with mode 0700 unless their
            # parent exists: Apache's children (www-data) must get through.
            ipc = base / "fcgid"
            ipc.mkdir(mode=0o755)
            replacements.update({"/var/lib/apache2/fcgid/sock": str(ipc / "sock"),
                                 "/var/lib/apache2/fcgid/shm": str(ipc / "shm")})
        servers.render(servers.DEPLOY / "apache" / f"ireporter-{kind}.conf", self.snippet, replacements)


@pytest.fixture(scope="module")
def stack():
    binary = servers.binary()
    with servers.workspace("apache") as space:
        db, base = space.db, space.base
        # --- mod_proxy_fcgi: our own server on a unix socket
        proxy_access_log = servers.www_file(base / "proxy-access.log")
        server = space.start(servers.OurServer(base / "proxy", binary, db.url, workers=3,
                                               access_log=proxy_access_log))
        proxy_snippet = servers.Apache.proxy_fcgi_snippet(server, base / "ireporter-proxy-fcgi.conf")
        proxy_docroot = base / "proxy-htdocs"
        proxy_docroot.mkdir()

        # --- the browser client, served by each site
        web = base / "web"
        shutil.copytree(servers.REPO / "web", web)
        web_snippet = base / "ireporter-web.conf"
        servers.render(servers.DEPLOY / "apache/ireporter-web.conf", web_snippet,
                       {"/usr/share/ireporter/web": str(web)})

        # --- the LAMP folders (sessions shared, as PHP's folder would be)
        lamp_sessions = servers.app_dirs(base / "lamp")[1]
        fcgid = Site(base, "fcgid", binary, db.url, lamp_sessions)
        cgi = Site(base, "cgi", binary, db.url, lamp_sessions)

        body = f"""
Include "{web_snippet}"

<VirtualHost 127.0.0.1:{PROXY_PORT}>
    DocumentRoot "{proxy_docroot}"
    Include "{proxy_snippet}"
</VirtualHost>

Include "{fcgid.snippet}"
<VirtualHost 127.0.0.1:{FCGID_PORT}>
    DocumentRoot "{fcgid.docroot}"
</VirtualHost>

Include "{cgi.snippet}"
<VirtualHost 127.0.0.1:{CGI_PORT}>
    DocumentRoot "{cgi.docroot}"
</VirtualHost>
"""
        apache = space.start(servers.Apache(base / "apache", [PROXY_PORT, FCGID_PORT, CGI_PORT],
                                            ["proxy", "proxy_fcgi", "fcgid", "cgid", "rewrite", "filter", "deflate",
                                             "unique_id"], body))

        def logs():
            return "\n".join([apache.log_tail(), servers.tail(server.log_path)])
        yield {"server": server, "apache": apache, "fcgid": fcgid, "cgi": cgi, "logs": logs, "base": base,
               "access_logs": {PROXY_PORT: proxy_access_log, FCGID_PORT: fcgid.access_log}}

        # --- teardown checks: Apache stops its FastCGI and CGI processes,
        # and they leave no worker behind.
        space.started.remove(apache)
        apache.stop()
        leftovers = {}
        for site in (fcgid, cgi):
            pids = servers.processes_running(site.script)
            if pids and not servers.wait_gone(pids, 10):
                leftovers[str(site.script)] = [(p, servers.proc_cmdline(p)) for p in pids if servers.proc_alive(p)]
                servers.kill_pids(pids)
        assert not leftovers, f"processes left running after Apache stopped: {leftovers}"


def url(port: int, path: str = "/iReporter/") -> str:
    return f"http://127.0.0.1:{port}{path}"


def raw_post(port: int, body: bytes, content_type: str, timeout: float = 60):
    """POST /iReporter/ with an explicit Content-Length; the server may answer
    before the body is all sent."""
    head = (f"POST /iReporter/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return read_response(s, "POST")[0]
    finally:
        s.close()


def oversized(total: int) -> tuple[bytes, str]:
    """An upload whose file part makes the whole body `total` bytes (the
    session is irrelevant: the size is judged first)."""
    jpeg = servers.photo()
    from appclient import FilePart
    probe = multipart_body([("command", "upload"), ("title", "big")], [FilePart(jpeg)])
    filler = b"\0" * (total - len(probe))
    return multipart_body([("command", "upload"), ("title", "big")], [FilePart(jpeg + filler)]), \
        multipart_content_type()


# ------------------------------------------------------- the web client

@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT, CGI_PORT], ids=["proxy_fcgi", "fcgid", "cgi"])
def test_web_client_served_with_the_same_headers(stack, port):
    browser.check_headers(url(port, "/"))


def test_web_client_in_chromium(stack):
    """The client through Apache and mod_proxy_fcgi: without Nchan it polls
    `stream` with `since`, and a photo posted by a phone appears by itself
    (once); it opens; no console error, no CSP violation. First of the
    module: the sites share the database but not their upload folders, so
    only now is every photo of the stream one this site serves."""
    site = url(PROXY_PORT, "/")
    with AppClient(Endpoint(url(PROXY_PORT))) as phone:
        assert "result" in phone.register(servers.unique_name("webap"), "pw").json()
        assert phone.upload(servers.photo(), title="Through Apache").json() == {"successful": 1}
        driver = browser.start()
        try:
            driver.get(site)
            browser.wait_for(lambda: "Through Apache" in browser.tiles(driver), what="the photo in the grid")
            browser.wait_for(lambda: browser.updates(driver) == "polling", what="polling (no live stream here)")
            assert phone.upload(servers.photo(), title="Polled in").json() == {"successful": 1}
            browser.wait_for(lambda: browser.tiles(driver)[:2] == ["Polled in", "Through Apache"], timeout=20,
                             what="the new photo, first and once")
            browser.open_newest(driver)
            browser.wait_for(lambda: driver.find_element(By.ID, "viewer-title").text == "Polled in",
                             what="the photo view")
            image = driver.find_element(By.ID, "viewer-image")
            browser.wait_for(lambda: browser.loaded(driver, image), what="the photo itself, through Apache")
            assert browser.console_errors(driver) == [], stack["logs"]()
        finally:
            driver.quit()


# ------------------------------------------------------- the parameters

@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT], ids=["proxy_fcgi", "fcgid"])
def test_request_parameters_reach_the_server(stack, port):
    """REMOTE_ADDR, REQUEST_METHOD, REQUEST_URI (the original, not the
    rewritten one) as the server's access log records them; CONTENT_TYPE and
    CONTENT_LENGTH (the form is parsed: command=stream), HTTP_COOKIE (the
    session survives, see the flows); mod_unique_id's UNIQUE_ID as the
    request id (docs/DEPLOY.md, "Logs"), echoed as X-Request-Id."""
    marker = servers.unique_name("q")
    with AppClient(Endpoint(url(port))) as c:
        r = c.request("POST", f"/iReporter/some/path?{marker}=1", multipart_body([("command", "stream")]),
                      multipart_content_type())
        assert r.status == 200 and r.body.startswith(b'{"result":['), r
    log = stack["access_logs"][port]
    line = servers.wait_for(lambda: next((x for x in log.read_text().splitlines() if marker in x), None), 5,
                            what=f"the request in {log}")
    assert f" client=127.0.0.1 method=POST uri=/iReporter/some/path?{marker}=1 command=stream " in line, line
    request_id = r.header("X-Request-Id")
    assert request_id and " outcome=ok " in line and f" request_id={request_id} " in line, (r.headers, line)


# ------------------------------------------------------- mod_proxy_fcgi

def test_proxy_fcgi_app_flow(stack):
    app_flow(url(PROXY_PORT), stack["server"].upload_dir, "proxy", stack["logs"])


def test_proxy_fcgi_reactions(stack):
    reactions_flow(url(PROXY_PORT), stack["server"].upload_dir, "proxy", stack["logs"])
    jsonrpc_flow(url(PROXY_PORT), stack["logs"])


def test_proxy_fcgi_operator_pages_and_redirect(stack):
    st = servers.status(url(PROXY_PORT, "/"))
    assert st["pool"] == "ireporter" and st["total processes"] == 3, st
    assert {p["pid"] for p in st["processes"]} == set(stack["server"].workers()), st
    with AppClient(Endpoint(url(PROXY_PORT))) as c:
        r = c.get(path="/ireporter-ping")
        assert r.status == 200 and r.body == b"pong\n", r
        # The app's URL without the slash: a redirect, as the PHP folder gave.
        r = c.get(path="/iReporter")
        assert r.status == 301 and r.header("Location").endswith("/iReporter/"), r
        # Photos are files: a missing one is Apache's 404, never the API.
        r = c.get(path="/iReporter/upload/999999.jpg")
        assert r.status == 404, r
        # Nothing else of the upload folder is served (spool files start with a dot).
        (stack["server"].upload_dir / ".spool-test").write_bytes(b"partial upload")
        r = c.get(path="/iReporter/upload/.spool-test")
        assert r.status in (403, 404), r


def test_proxy_fcgi_mastodon_door(stack):
    """The Mastodon-compatible API at the host's root through Apache, its
    bearer token passed on (CGIPassAuth): a bad one on a public endpoint is
    refused, which only a server that saw it can do."""
    import http.client, json
    def get(path, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", PROXY_PORT, timeout=10)
        try:
            connection.request("GET", path, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()
    assert get("/api/v1/custom_emojis") == (200, b"[]"), stack["logs"]()
    status, body = get("/api/v1/custom_emojis", {"Authorization": "Bearer made-up"})
    assert (status, json.loads(body)) == (401, {"error": "The access token is invalid"}), stack["logs"]()
    for path in ("/api/v1/no-such-thing", "/.well-known/webfinger?resource=acct:a@b", "/.well-known/host-meta"):
        status, body = get(path)
        assert (status, json.loads(body)) == (404, {"error": "Record not found"}), (path, body[:200])


def test_proxy_fcgi_body_limits(stack):
    # Within Apache's LimitRequestBody (22 MiB) but over the server's 20 MiB
    # photo limit: the server's own JSON error.
    body, ctype = oversized(21 * 1024 * 1024)
    r = raw_post(PROXY_PORT, body, ctype)
    assert r.status == 200 and r.json() == TOO_LARGE, (r.status, r.body[:300], stack["logs"]())
    # Over 22 MiB: Apache's LimitRequestBody or the server (which judges the
    # Content-Length first and answers before reading the body), whichever
    # speaks first; never a stored photo or a hung request.
    body, ctype = oversized(23 * 1024 * 1024)
    r = raw_post(PROXY_PORT, body, ctype)
    assert r.status == 413 or (r.status == 200 and r.json() == TOO_LARGE), (r.status, r.body[:300])


@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT, CGI_PORT], ids=["proxy_fcgi", "fcgid", "cgi"])
def test_photos_set_aside_are_not_served(stack, port):
    """`.removed/` keeps what the sweep, `repair` and uploads set aside
    (photos whose row is gone: deleted, moderated in SQL) under their 2012
    names: Apache serves those names in the upload folder only, not below it."""
    upload_dir = {PROXY_PORT: stack["server"].upload_dir, FCGID_PORT: stack["fcgid"].upload_dir,
                  CGI_PORT: stack["cgi"].upload_dir}[port]
    removed = upload_dir / ".removed"
    if not removed.exists():
        removed.mkdir(0o700)  # as the server makes it
        servers.chown_www(removed)
    name = f"{900_000_000 + port}.jpg"
    placed = [upload_dir / name, removed / name]
    for path in placed:
        path.write_bytes(servers.photo())
        servers.chown_www(path)
    try:
        with AppClient(Endpoint(url(port))) as c:
            assert c.get(path=f"/iReporter/upload/{name}").status == 200, "a photo's 2012 name is served"
            r = c.get(path=f"/iReporter/upload/.removed/{name}")
            assert r.status in (403, 404), (r.status, r.body[:100])
    finally:
        for path in placed:
            path.unlink()


# -------------------------------------------------------------- mod_fcgid

def test_fcgid_app_flow(stack):
    site = stack["fcgid"]
    assert len(servers.photo()) > 131072, "the photo must exceed mod_fcgid's default FcgidMaxRequestLen"
    app_flow(url(FCGID_PORT), site.upload_dir, "fcgid", stack["logs"])
    # mod_fcgid runs the binary (as www-data) with the socket on fd 0; our
    # supervisor forks `workers = 1` worker.
    pids = servers.processes_running(site.script)
    assert pids, "no index.fcgi process is running"
    assert all(servers.proc_user(p) == WWW for p in pids), [(p, servers.proc_user(p)) for p in pids]
    supervisors = [p for p in pids if servers.proc_ppid(p) not in pids]
    for s in supervisors:
        assert len(servers.children(s)) == 1, (s, servers.children(s))


def test_fcgid_servers_follow_a_log_rotation(stack, tmp_path):
    """deploy/logrotate/ireporter on a LAMP site: no systemd unit, no pid
    file, a server per mod_fcgid process. They used to write on into the
    rotated file (and fail2ban, reading the new one, saw nothing)."""
    servers.need_tool("logrotate", "logrotate")
    site = stack["fcgid"]
    at_least_two_fcgid_servers(site)
    conf = tmp_path / "logrotate.conf"
    servers.render(servers.DEPLOY / "logrotate" / "ireporter", conf,
                   {"/var/log/ireporter/ireporter.log /var/log/ireporter/access.log": str(site.access_log),
                    "/run/ireporter/ireporter.pid": str(tmp_path / "no.pid"),
                    "/var/www/html/iReporter": str(site.app)})
    conf.chmod(0o644)
    p = subprocess.run(["logrotate", "--force", "--state", str(tmp_path / "state"), str(conf)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    rotated = site.access_log.with_name(site.access_log.name + ".1")
    assert rotated.exists() and site.access_log.read_bytes() == b""
    tries = iter(range(1000))

    def logged_in_new_file():
        marker = f"rotated-{next(tries)}"
        with AppClient(Endpoint(url(FCGID_PORT))) as c:
            c.get(f"?{marker}")
        return marker.encode() in site.access_log.read_bytes()
    servers.wait_for(logged_in_new_file, 10, what="a request's line in the new access log")


@pytest.mark.parametrize("port", [FCGID_PORT, CGI_PORT], ids=["fcgid", "cgi"])
def test_lamp_private_files_not_served(stack, port):
    with AppClient(Endpoint(url(port))) as c:
        for path in ("ireporter.conf", ".htaccess"):
            r = c.get(path)
            assert r.status == 403, (path, r.status, r.body[:200])
            assert b"db_url" not in r.body and b"ireport:" not in r.body
        r = c.get(path="/iReporter")
        assert r.status == 301 and r.header("Location").endswith("/iReporter/"), r
        r = c.get("upload/999999.jpg")
        assert r.status == 404, r
        # Any other path under /iReporter/ is the API, as index.php was.
        r = c.get("anything/else")
        assert r.status == 200 and r.header("Content-Type") == "application/json", r


@pytest.mark.parametrize("port", [FCGID_PORT, CGI_PORT], ids=["fcgid", "cgi"])
def test_lamp_passes_a_signed_flickr_requests_key(stack, port):
    """flickrapi names its key only in an `Authorization: OAuth` header,
    which Apache hands on only with CGIPassAuth (the .htaccess has it)."""
    import json
    echo = "/iReporter/services/rest/?method=flickr.test.echo&format=json&nojsoncallback=1"
    with AppClient(Endpoint(url(port))) as c:
        signed = c.request("GET", echo, b"", None, cookie=None,
                           extra_headers=[("Authorization", f'OAuth oauth_consumer_key="{LAMP_FLICKR_KEY}", oauth_nonce="1"')])
        assert json.loads(signed.body)["stat"] == "ok", (signed.status, signed.body, stack["logs"]())
        unsigned = c.request("GET", echo, b"", None, cookie=None)
        assert json.loads(unsigned.body)["code"] == 100, unsigned.body


@pytest.mark.parametrize("port", [FCGID_PORT, CGI_PORT], ids=["fcgid", "cgi"])
def test_lamp_body_limits(stack, port):
    # 21 MiB: within LimitRequestBody / FcgidMaxRequestLen (22 MiB), over the
    # server's 20 MiB photo limit: the server's own JSON error.
    body, ctype = oversized(21 * 1024 * 1024)
    r = raw_post(port, body, ctype)
    assert r.status == 200 and r.json() == TOO_LARGE, (r.status, r.body[:300], stack["apache"].log_tail())
    # Over 22 MiB (a 24 MB photo): Apache refuses the body (mod_fcgid would
    # hand the server an empty one) and runs the server as its ErrorDocument
    # 413, which answers the same JSON error with HTTP 200, as the app expects.
    body, ctype = oversized(24 * 1000 * 1000)
    r = raw_post(port, body, ctype)
    assert r.status == 200 and r.json() == TOO_LARGE, (r.status, r.body[:300], stack["apache"].log_tail())
    assert r.header("Content-Type") == "application/json"


def test_fcgid_status_page(stack):
    """status_path under the app's folder (deploy/apache/lamp/ireporter.conf.example),
    local clients only (the .htaccess): the pool of the process that answered."""
    with AppClient(Endpoint(url(FCGID_PORT))) as c:
        r = c.get("ireporter-status?json")
        assert r.status == 200 and r.header("Content-Type") == "application/json", (r.status, r.body[:300])
        assert r.json()["pool"] == "ireporter" and r.json()["total processes"] == 1, r.json()
        r = c.get("ireporter-ping")
        assert r.status == 200 and r.body == b"pong\n", r


# ------------------------------------ state all the processes of a site share

def fcgid_servers(site: Site) -> list[int]:
    """The servers mod_fcgid runs for `site` (each forks its worker)."""
    pids = servers.processes_running(site.script)
    return [p for p in pids if servers.proc_ppid(p) not in pids]


def at_least_two_fcgid_servers(site: Site, within: float = 30):
    """A request that finds no server idle while one is busy waits a second
    for it and asks for another only if it is still busy (fcgid_bridge.c):
    with one server, two requests at once are both its. Bursts of eight
    clients at once until mod_fcgid has started a second (then kept:
    FcgidIdleTimeout 300, FcgidMinProcessesPerClass 3)."""
    def ping_for(seconds: float):
        end = time.monotonic() + seconds
        with AppClient(Endpoint(url(FCGID_PORT)), timeout=30) as c:
            while time.monotonic() < end:
                r = c.get("ireporter-ping")
                assert r.status == 200 and r.body == b"pong\n", r
    deadline = time.monotonic() + within
    while len(fcgid_servers(site)) < 2:
        assert time.monotonic() < deadline, f"mod_fcgid never started a second server: {fcgid_servers(site)}"
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(ping_for, [2.5] * 8))


@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT, CGI_PORT], ids=["proxy_fcgi", "fcgid", "cgi"])
def test_each_phone_sees_its_upload_in_its_next_stream(stack, port):
    """Eight phones upload at once, each streaming right after every upload.
    mod_fcgid runs each process as a server of its own (each with its stream
    cache), CGI a process per request: the change counter must be the
    site's, or a phone's next stream misses its own photo."""
    tag = {PROXY_PORT: "rwproxy", FCGID_PORT: "rwfcgid", CGI_PORT: "rwcgi"}[port]
    if port == FCGID_PORT:
        # Two servers from the start, whatever ran before (this test alone, too).
        at_least_two_fcgid_servers(stack["fcgid"])
    problems = servers.phones_upload_then_stream(url(port), phones=8, uploads=10, tag=tag)
    assert not problems, "\n".join(problems[:20]) + f"\n({len(problems)} problems)\n" + stack["logs"]()
    if port in stack["access_logs"]:
        pids = servers.pids_in_access_log(stack["access_logs"][port], "command=upload")
        assert len(pids) >= 2, f"the uploads were all served by one process: {pids}"


def attempt_pids(log: Path, user: str, attempts: int) -> set[int]:
    """The pids that served `user`'s failed logins, once all are in the log
    (a worker writes a request's line after its answer)."""
    marker = f"attempt={user}-"
    servers.wait_for(lambda: sum(marker in line for line in log.read_text().splitlines()) >= attempts, 10,
                     what=f"the {attempts} lines of {marker} in {log}")
    return servers.pids_in_access_log(log, marker)


def take_back(port: int, user: str):
    """`user` logs in with the right password once its block is over (a
    refused attempt counts nothing): its failures no longer count against
    127.0.0.1, whose 20th failing account would block every login from the
    address the rest of the module uses."""
    def let_in():
        with AppClient(Endpoint(url(port)), timeout=30) as phone:
            return b'"result"' in phone.login(user, servers.app_password("right")).body
    servers.wait_for(let_in, 10, interval=0.2, what=f"{user} let in once the block is over")


@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT, CGI_PORT], ids=["proxy_fcgi", "fcgid", "cgi"])
def test_failed_logins_count_across_processes(stack, port):
    """Six wrong passwords, two at a time, so that two processes (mod_fcgid:
    two servers; CGI: six processes) serve them: the right password is then
    refused by the throttle, which only counts them all if they share it.
    A run that one process served alone shows nothing (no pair overlapped,
    and a process free again takes the next request: mod_fcgid hands out
    the one freed last): it is taken back and run again, with a fresh
    account, until two served one (the access log's pid). With CGI, a run
    whose right password came after the 2 s block (each attempt a process
    start on a loaded machine) is run again, three runs at most: processes
    that did not share the count would never show a block."""
    log = stack["access_logs"].get(port)
    if port == FCGID_PORT:
        at_least_two_fcgid_servers(stack["fcgid"])
    deadline = time.monotonic() + 40
    for run in range(1, 11):
        result = servers.failed_logins_across_processes([url(port)])
        assert all(b'"error"' in body for _, body in result["answers"]), result
        if log is None:  # CGI: a process per request; run again only when the block was over before it could show
            if result["throttled"] or run == 3:
                break
            take_back(port, result["user"])
            continue
        pids = attempt_pids(log, result["user"], len(result["answers"]))
        if len(pids) >= 2 or run == 10 or time.monotonic() > deadline:
            break
        take_back(port, result["user"])
    # Only the run two processes served: with a count of each process's own, 3 + 3 blocks nothing.
    assert result["throttled"], result
    if log is not None:
        assert len(pids) >= 2, f"the failed logins were all served by one process, {run} runs: {pids}"


# ------------------------------------------------------------------- CGI

def test_cgi_app_flow(stack):
    site = stack["cgi"]
    app_flow(url(CGI_PORT), site.upload_dir, "cgi", stack["logs"])
    # One process per request: nothing of ours stays running.
    servers.wait_for(lambda: not servers.processes_running(site.script), 5,
                     what="the CGI processes to exit")


def test_cgi_answers_concurrent_requests(stack):
    """CGI: each request its own process; several at once all answer."""
    import concurrent.futures as cf

    def one(_):
        with AppClient(Endpoint(url(CGI_PORT)), keep_alive=False, timeout=30) as c:
            r = c.stream()
            return r.status, (r.header("Content-Type") or ""), r.body[:11]
    with cf.ThreadPoolExecutor(6) as ex:
        results = list(ex.map(one, range(12)))
    assert all(r == (200, "application/json", b'{"result":[') for r in results), results


@pytest.mark.parametrize("port", [PROXY_PORT, FCGID_PORT, CGI_PORT], ids=["proxy_fcgi", "fcgid", "cgi"])
def test_photo_sizes_made_once_then_served_by_apache(stack, port):
    """A size not on disk is Apache's 404 in the photos' tree, whose
    ErrorDocument is the server: it makes the size once, and Apache serves
    the file from then on; a wrong secret is a 404 with nothing made."""
    import urllib.error
    import urllib.request
    from appclient import jpeg_size
    tag = {PROXY_PORT: "szproxy", FCGID_PORT: "szfcgid", CGI_PORT: "szcgi"}[port]
    with AppClient(Endpoint(url(port))) as phone:
        assert b"IdUser" in phone.register(tag, "secret-pass").body
        assert phone.upload(servers.photo(), tag).body == b'{"successful":1}'
        mine = [p for p in phone.call({"command": "stream", "extras": "secret,server"}).json()["result"] if p["title"] == tag]
    id_photo, secret, server = mine[0]["IdPhoto"], mine[0]["secret"], mine[0]["server"]
    path = f"/iReporter/photos/{server}/{id_photo}_{secret}_q.jpg"

    def get(path):
        try:
            with urllib.request.urlopen(url(port, path), timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()
    status, headers, made = get(path)
    assert status == 200 and jpeg_size(made) == (150, 150), (status, made[:300], stack["logs"]())
    assert "immutable" in headers["Cache-Control"]
    first = headers
    status, headers, served = get(path)
    assert status == 200 and served == made and headers["Last-Modified"], "Apache's own file answer"
    assert "immutable" in headers["Cache-Control"] and headers["X-Content-Type-Options"] == "nosniff"
    # The server's first answer and Apache's later ones: the same policy, each header once.
    for name in ("X-Content-Type-Options", "Content-Security-Policy"):
        assert first.get_all(name) == headers.get_all(name) and len(headers.get_all(name)) == 1, (name, first, headers)
    wrong = "0000000000" if secret != "0000000000" else "0000000001"
    for bad in (f"/iReporter/photos/{server}/{id_photo}_{wrong}_z.jpg", f"/iReporter/photos/{server}/{id_photo}_{secret}_x.jpg",
                f"/iReporter/photos/{server}/{id_photo}_{secret}_z.jpg.php", "/iReporter/photos/000000/.spool-x"):
        status, _, body = get(bad)
        # (A name the AliasMatch does not take is the document root's: 404 or 403, never ours.)
        assert status in (403, 404) and body[:2] != b"\xff\xd8", (bad, status, body[:200])
