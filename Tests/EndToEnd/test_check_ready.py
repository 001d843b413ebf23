"""`ireporter check` and the readiness page (issue 27), against a real
MariaDB, our server and nginx (deploy/nginx/ireporter.conf):

  - check says ok for each item of a working installation (as root, it
    tries the folders as the configured user) and exits 0; a wrong database
    password, a missing upload folder or one only root may write exit 1
    naming what failed (--check-config says "configuration OK" to each);
  - /ireporter-ready answers 200 `ready` while the database answers, and
    503 naming the database for a server whose database is down, while
    /ireporter-ping still answers `pong` (liveness is not readiness).

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_check_ready.py
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint

PORT, DEAD_DB_PORT = servers.http_port(1), servers.http_port(2)


@pytest.fixture(scope="module")
def site():
    with servers.server_behind_nginx("check", PORT) as server:
        yield server


def variant(site, name: str, **keys) -> Path:
    """The site's configuration with `keys` changed, in a file of its own."""
    path = site.base / f"{name}.conf"
    path.write_text(servers.set_config_keys(site.config_text, keys))
    return path


def run(site, *args: str, conf: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(site.binary), *args, "--config", str(conf or site.config_path)], env=servers.clean_env(),
                          capture_output=True, text=True, timeout=120)


def items(output: str) -> dict[str, str]:
    """`ok   database: ...` lines: item -> the whole line."""
    found = {}
    for line in output.splitlines():
        m = re.match(r"^(ok  |warn|FAIL) ([^:]+): ", line)
        if m:
            found[m.group(2)] = line
    return found


def test_check_says_ok_for_each_item_of_a_working_installation(site):
    # As installed (schema.sql): the migrations are pending, which the server serves without.
    p = run(site, "check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.match(r"warn database: connected to .*; migrations not applied: 001-widen-pass, .* \(ireporter migrate\)$",
                    items(p.stdout)["database"]), p.stdout
    migrate = run(site, "migrate")
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    p = run(site, "check")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = items(p.stdout)
    assert lines["user"].startswith("ok  ") and "www-data" in lines["user"], p.stdout
    # Without `user` (a systemd unit's configuration), run as root: said, as a warning.
    rooted = run(site, "check", conf=variant(site, "no-user", user=""))
    assert rooted.returncode == 0, rooted.stdout + rooted.stderr
    assert items(rooted.stdout)["user"].startswith("warn user: empty, and this runs as root"), rooted.stdout
    migrations = len(list((servers.REPO / "sql" / "migrations").glob("*.sql")))
    assert re.match(rf"ok   database: connected to .* as [^ ]+, database \w+; schema and {migrations} migrations applied$",
                    lines["database"]), p.stdout
    for folder in ("upload_dir", "session_dir"):
        assert lines[folder].startswith("ok  ") and f"writable by uid {servers.pwd_id('www-data')}" in lines[folder], p.stdout
    # The running server has the socket: said, not a failure.
    assert lines["listen"].startswith("warn") and "in use (by a running server?)" in lines["listen"], p.stdout


def test_check_tells_text_a_php_version_stored_converted(site):
    """A PHP version that connected in the server's default utf8mb4 left
    `é` as the latin1 byte E9 in the latin1 columns: read raw (db_charset =
    latin1) that is no UTF-8, so check says to set db_charset = utf8mb4.
    Our own UTF-8 text (café as C3 A9) is no reason to."""
    assert run(site, "migrate").returncode == 0, "only this note left to say"
    # Ours (café as C3 A9), and a PHP-era name cut at the column's 45 bytes inside its é.
    site.db.sql("INSERT INTO login (username, pass) VALUES (X'636166C3A9', 'p'), "
                f"(X'{'61' * 44}C3', 'p');\n")
    lines = items(run(site, "check").stdout)
    assert lines["database"].startswith("ok  "), lines["database"]
    site.db.sql("INSERT INTO photos (IdUser, title) VALUES (1, X'636166E9');\n")
    try:
        p = run(site, "check")
        assert p.returncode == 0, p.stdout + p.stderr
        assert items(p.stdout)["database"].startswith("warn") and "set db_charset = utf8mb4" in items(p.stdout)["database"], p.stdout
        conf = variant(site, "utf8mb4", db_charset="utf8mb4")
        assert items(run(site, "check", conf=conf).stdout)["database"].startswith("ok  "), "told: no more"
    finally:
        site.db.sql("DELETE FROM photos WHERE title = X'636166E9'; "
                    f"DELETE FROM login WHERE username IN (X'636166C3A9', X'{'61' * 44}C3');\n")


def test_check_names_a_wrong_database_password(site):
    conf = variant(site, "wrong-password", db_url=re.sub(r"^(mysql://[^:/@]+:)[^@]*@", r"\1wrong@", site.db_url))
    assert run(site, "--check-config", conf=conf).returncode == 0, "the syntax is fine: --check-config cannot tell"
    p = run(site, "check", conf=conf)
    assert p.returncode == 1, p.stdout + p.stderr
    assert items(p.stdout)["database"].startswith("FAIL database:") and "Access denied" in p.stdout, p.stdout
    assert "check failed: database" in p.stderr, p.stderr
    assert items(p.stdout)["upload_dir"].startswith("ok  "), "every item is tried, not only up to the first failure"


def test_check_names_a_missing_upload_folder(site):
    missing = site.base / "no-such-upload"
    conf = variant(site, "missing-upload", upload_dir=missing)
    p = run(site, "check", conf=conf)
    assert p.returncode == 1, p.stdout + p.stderr
    assert items(p.stdout)["upload_dir"] == f"FAIL upload_dir: {missing} does not exist", p.stdout
    assert "check failed: upload_dir" in p.stderr


def test_check_tries_the_folders_as_the_servers_user(site):
    """root may write anywhere; the server, as www-data, may not."""
    roots = site.base / "roots-upload"
    roots.mkdir(mode=0o755, exist_ok=True)
    p = run(site, "check", conf=variant(site, "roots-upload", upload_dir=roots))
    assert p.returncode == 1, p.stdout + p.stderr
    assert items(p.stdout)["upload_dir"].startswith(f"FAIL upload_dir: {roots} is not writable by uid "
                                                    f"{servers.pwd_id('www-data')}"), p.stdout


def test_check_tries_the_photos_tree_as_the_servers_user(site):
    """A restore copied as root, the top folder given back alone: uploads
    and deletions in the tree fail, and so does linking a root-owned
    photo into it (fs.protected_hardlinks), while upload_dir itself is
    writable."""
    restored = site.base / "restored-upload"
    (restored / "photos" / "000" / "000").mkdir(parents=True, exist_ok=True)
    (restored / "5.jpg").write_bytes(b"\xff\xd8 as PHP stored it")
    (restored / "notes.txt").write_text("the operator's: not a photo file")
    www = servers.pwd_id("www-data")
    os.chown(restored, www, www)
    conf = variant(site, "restored-upload", upload_dir=restored)
    p = run(site, "check", conf=conf)
    assert p.returncode == 1, p.stdout + p.stderr
    assert items(p.stdout)["upload_dir"].startswith("ok  "), p.stdout
    assert items(p.stdout)["upload_dir's contents"] == (
        f"FAIL upload_dir's contents: in {restored}, 3 of the 3 folders are not writable by uid {www}: "
        "photos, photos/000, photos/000/000; 1 of the 1 photo files looked at are another user's: 5.jpg "
        f"(uploads, deletions and sizes there fail): chown -R www-data {restored}"), p.stdout
    for path in (restored / "photos", restored / "photos" / "000", restored / "photos" / "000" / "000", restored / "5.jpg"):
        os.chown(path, www, www)
    p = run(site, "check", conf=conf)
    assert items(p.stdout)["upload_dir's contents"] == (
        f"ok   upload_dir's contents: the 3 folders (the photos' tree, .removed/) and the 1 photo files looked at in {restored} "
        f"are uid {www}'s"), p.stdout


def test_check_as_root_without_a_user_fails_no_healthy_folder(site):
    """Root is not the server's user here: the files' owners are not its to judge."""
    served = site.base / "www-data-upload"
    (served / "photos" / "000" / "000").mkdir(parents=True, exist_ok=True)
    (served / "5.jpg").write_bytes(b"\xff\xd8")
    www = servers.pwd_id("www-data")
    for path in (served, served / "photos", served / "photos" / "000", served / "photos" / "000" / "000", served / "5.jpg"):
        os.chown(path, www, www)
    p = run(site, "check", conf=variant(site, "no-user", user="", upload_dir=served))
    assert items(p.stdout)["upload_dir's contents"] == (
        f"ok   upload_dir's contents: the 3 folders (the photos' tree, .removed/) in {served} are uid 0's"), p.stdout


def test_a_start_that_fails_says_why_on_the_terminal_too(site):
    """With log_file set, the server's stderr is the file from the start:
    an operator starting it by hand (or spawn-fcgi) saw a silent exit 1.
    The errors of the start go to the stderr it was given too."""
    roots = site.base / "roots-upload-start"
    roots.mkdir(mode=0o755, exist_ok=True)
    log = site.base / "failed-start.log"
    conf = variant(site, "failed-start", upload_dir=roots, log_file=log, listen=site.base / "failed-start.sock")
    p = subprocess.run([str(site.binary), "--config", str(conf)], env=servers.clean_env(), capture_output=True, text=True,
                       timeout=60)
    reason = f"upload_dir {roots} is not writable by uid {servers.pwd_id('www-data')}"
    assert p.returncode == 1 and reason in p.stderr, (p.returncode, p.stdout, p.stderr)
    assert reason in log.read_text(), "and in the log file, as before"
    # Started with stderr closed, the log file became fd 2 itself and was closed with it: nothing was logged.
    p = subprocess.run(["bash", "-c", 'exec "$0" --config "$1" 2>&-', str(site.binary), str(conf)], env=servers.clean_env(),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and log.read_text().count(reason) == 2, (p.returncode, log.read_text())


def test_check_tries_the_logs_as_the_servers_user(site):
    """log_file the server cannot open keeps it from starting; an
    access_log whose folder it cannot write is made again by no one after
    a rotation (unless logrotate's `create` does): both said, as www-data."""
    roots = site.base / "roots-logs"
    roots.mkdir(mode=0o755, exist_ok=True)
    given = roots / "access.log"
    given.touch()
    servers.chown_www(given)
    p = run(site, "check", conf=variant(site, "roots-logs", log_file=roots / "ireporter.log", access_log=given))
    assert p.returncode == 1, p.stdout + p.stderr
    lines = items(p.stdout)
    assert lines["log_file"].startswith(f"FAIL log_file: {roots}/ireporter.log cannot be written by uid "), p.stdout
    assert lines["access_log"].startswith(f"warn access_log: {given} is writable, but its folder is not"), p.stdout


def test_check_leaves_a_session_folder_shared_as_phps_is(site):
    """Debian's /var/lib/php/sessions: root's, 1733. PHP writes there as
    "others": the check must not tell the operator to `chmod o-w` it (PHP
    could then keep no session). A folder anyone may write that is not
    sticky is still a warning."""
    shared = site.base / "php-sessions"
    shared.mkdir(exist_ok=True)
    os.chown(shared, 0, 0)
    shared.chmod(0o1733)
    line = items(run(site, "check", conf=variant(site, "php-sessions", session_dir=shared)).stdout)["session_dir"]
    assert line.startswith(f"ok   session_dir: {shared} is writable by uid {servers.pwd_id('www-data')}, shared as PHP's"), line
    open_to_all = site.base / "open-sessions"
    open_to_all.mkdir(exist_ok=True)
    open_to_all.chmod(0o777)
    line = items(run(site, "check", conf=variant(site, "open-sessions", session_dir=open_to_all)).stdout)["session_dir"]
    assert line.startswith("warn session_dir: ") and "chmod o-w" in line, line


def test_ready_while_the_database_answers_and_ping_stays_pong(site):
    assert servers.http_get(f"http://127.0.0.1:{PORT}/ireporter-ready") == (200, "ready\n")
    assert servers.http_get(f"http://127.0.0.1:{PORT}/ireporter-ping") == (200, "pong\n")


def test_not_ready_while_the_photos_tree_is_not_the_servers(site):
    """A backup restored as root, the top folder given back alone: every
    upload would fail, so a balancer is told before the phones are."""
    tree = Path(site.upload_dir) / "photos"
    tree.mkdir(exist_ok=True)
    www = servers.pwd_id("www-data")
    ready = f"http://127.0.0.1:{PORT}/ireporter-ready"
    os.chown(tree, 0, 0)
    tree.chmod(0o755)
    answers = []
    try:
        # Each worker keeps its answer a second: the first 503 is looked at.
        servers.wait_for(lambda: answers.append(servers.http_get(ready)) or answers[-1][0] == 503, timeout=10, what="not ready")
        assert answers[-1][1] == f"not ready\nupload_dir: {tree} is not writable by uid {www} (`ireporter check` says what)\n", \
            answers[-1]
    finally:
        os.chown(tree, www, www)
    servers.wait_for(lambda: servers.http_get(ready) == (200, "ready\n"), timeout=10, what="ready again")


def test_not_ready_naming_the_database_when_it_is_down(site):
    """A second server whose database is a closed port: alive (ping), not ready."""
    base = site.base / "dead-db"
    server = nginx = None
    try:
        server = servers.OurServer(base, servers.binary(), "mysql://ireport:x@127.0.0.1:1/iReport", workers=1).start()
        nginx = servers.Nginx(base, DEAD_DB_PORT, server.socket_path, server.upload_dir).start()
        status, body = servers.http_get(f"http://127.0.0.1:{DEAD_DB_PORT}/ireporter-ready")
        assert status == 503 and body.startswith("not ready\ndatabase: "), (status, body)
        assert servers.http_get(f"http://127.0.0.1:{DEAD_DB_PORT}/ireporter-ping") == (200, "pong\n")
        # What the operator sees meanwhile: the request the error met, and
        # the readiness page's 503 in the metrics the alerts read.
        with AppClient(Endpoint(f"http://127.0.0.1:{DEAD_DB_PORT}/iReporter/")) as phone:
            assert b"temporarily unavailable" in phone.stream().body
        errors = [line for line in server.log_path.read_text(errors="replace").splitlines() if " error: " in line]
        assert any(re.search(r" \(while serving POST /iReporter/ \(request [0-9a-f]+, client 127\.0\.0\.1\)\)$", line)
                   for line in errors), errors
        metrics = servers.http_get(f"http://127.0.0.1:{DEAD_DB_PORT}/ireporter-status?openmetrics")[1]
        assert re.search(r'ireporter_requests_total\{command="status",outcome="http-503"\} [1-9]', metrics), metrics
        p = run(site, "check", conf=server.config_path)
        assert p.returncode == 1 and items(p.stdout)["database"].startswith("FAIL database: 127.0.0.1:1: "), p.stdout
    finally:
        if nginx:
            nginx.stop()
        if server:
            server.stop()
