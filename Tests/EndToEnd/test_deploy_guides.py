"""The deployment guides of docs/DEPLOY.md, walked as an operator would: on a
fresh host where the 2012 PHP site runs (a copy of ../shared/reference/php
with photos in upload/, its MyISAM database with accounts whose passwords
are stored as the app sent them), the commands of the blocks marked
```sh guide=NAME``` are run as they stand, in order, as root, from the
release folder (deploy/, sql/, .build/release/ireporter). Then the app must
work through the web server: the old accounts log in, the old photos show,
new uploads work, the PHP files are gone, the database is migrated.

"A fresh host" is this machine seen through a private mount namespace
(`unshare -m`): /etc, /var and /usr/local are overlays whose changes land
in the test's directory, /run is the test's own, and /run/mysqld holds the
test database's socket. So /etc/apache2, /var/www/html/iReporter,
/usr/local/bin/ireporter are the paths the guide names, and nothing of the
real host changes. The web server listens on a loopback test port (the
host's default site, moved to that port). Two commands have no host to act
on and are stand-ins (tests/shims, in the PATH): `apt-get install` checks
that the packages are installed (no network), `systemctl start|reload
apache2|nginx` runs `apachectl` / `nginx` as the units would.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest --noconftest -q Tests/EndToEnd/test_deploy_guides.py
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

import servers
from appclient import AppClient, Endpoint
from servers import app_flow

DEPLOY_MD = servers.REPO / "docs" / "DEPLOY.md"
REFERENCE_PHP = servers.REPO.parent / "shared" / "reference" / "php"
APACHE_PORT, NGINX_PORT = servers.http_port(0), servers.http_port(3)
# Which web server each guide puts in front.
GUIDES = {"nginx": "nginx", "proxy_fcgi": "apache", "fcgid": "apache", "cgi": "apache"}
APP = "/var/www/html/iReporter"
# The PHP site's accounts and photos (IdPhoto from 2), as PHP stored them.
PHP_USERS = [("marin", "m4r1n"), ("ray", "wenderlich"), ("anna", "secret")]
TOO_LARGE = {"error": "Photo is too large (the limit is 20 MB)"}

SHIMS = {
    "apt-get": r"""#!/bin/sh
# apt-get on the test host: no network. `install` checks that the packages
# are installed already; anything else does nothing.
[ "$1" = install ] || exit 0
shift
for p in "$@"; do
    case "$p" in -*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || { echo "apt-get (test stand-in): $p is not installed" >&2; exit 100; }
done
""",
    "systemctl": r"""#!/bin/sh
# systemctl on a host without systemd: what the units of apache2 and nginx do.
# Alive and not a zombie (PID 1 here may not reap the daemons it inherits).
alive() { state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1); [ -n "$state" ] && [ "$state" != Z ]; }
running() { [ -s "$1" ] && alive "$(cat "$1")"; }
stop_apache() {
    running /run/apache2/apache2.pid || return 0
    pid=$(cat /run/apache2/apache2.pid)
    apachectl stop
    i=0
    while alive "$pid" && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
}
case "$1 ${2%.service}" in
    "start apache2") running /run/apache2/apache2.pid || apachectl start ;;
    "reload apache2") if running /run/apache2/apache2.pid; then apachectl graceful; else apachectl start; fi ;;
    "restart apache2") stop_apache && apachectl start ;;
    "stop apache2") stop_apache ;;
    "start nginx") running /run/nginx.pid || nginx ;;
    "reload nginx"|"restart nginx") if running /run/nginx.pid; then nginx -s reload; else nginx; fi ;;
    "stop nginx") nginx -s quit ;;
    *) echo "systemctl (test stand-in): '$*' is not emulated" >&2; exit 1 ;;
esac
""",
}


def guide_script(name: str) -> str:
    """The commands of the guide, as docs/DEPLOY.md shows them."""
    blocks = re.findall(r"^```sh guide=([\w,]+)\n(.*?)^```$", DEPLOY_MD.read_text(), re.M | re.S)
    commands = [body for tags, body in blocks if name in tags.split(",")]
    assert commands, f"docs/DEPLOY.md has no block marked guide={name}"
    return "\n".join(commands)


@pytest.fixture(scope="module")
def database():
    servers.need_root()
    db = servers.start_database()
    if db.directory is None:
        pytest.fail("the guide tests need a database they can reach as root: unset IREPORTER_TEST_DB_URL",
                    pytrace=False)
    yield db
    db.stop()


def php_database(db: servers.Database):
    """The PHP site's database: the tutorial's MyISAM tables, its accounts
    (the password as the app sent it) and their photos, reached with
    lib.php's credentials (ireport/ireport, what the guide's DB_URL copies;
    the next module's start_database sets the stack's random one again)."""
    schema = (servers.REPO / "sql" / "original-myisam.sql").read_text()
    rows = "".join(f"INSERT INTO login (username, pass) VALUES ('{u}', '{servers.app_password(p)}');\n"
                   for u, p in PHP_USERS)
    rows += "".join(f"INSERT INTO photos (title, IdUser) VALUES ('{u} in 2012', {n + 1});\n"
                    for n, (u, _) in enumerate(PHP_USERS))
    lib_php_account = "".join(f"ALTER USER 'ireport'@'{host}' IDENTIFIED BY 'ireport';\n"
                              for host in ("localhost", "127.0.0.1"))
    db.sql(lib_php_account + servers.DROP_ALL_TABLES + schema + rows)


class FreshHost:
    """This machine in a mount namespace of its own (see the module's doc)."""

    def __init__(self, name: str, db: servers.Database):
        self.name = name
        self.web = GUIDES[name]
        self.port = NGINX_PORT if self.web == "nginx" else APACHE_PORT
        self.dir = servers.make_workdir(f"guide-{name}")
        self.log = self.dir / "guide.log"
        self.ns_file = self.dir / "mount-namespace"
        self.db = db
        for layer in ("etc", "var", "usr-local"):
            for part in ("up", "work"):
                (self.dir / f"{layer}-{part}").mkdir()
        for d in ("run/lock", "run/mysqld"):
            (self.dir / d).mkdir(parents=True)
        # The release folder: the repository's deploy/ and sql/, the binary built.
        release = self.dir / "release"
        (release / ".build" / "release").mkdir(parents=True)
        for part in ("deploy", "sql"):
            (release / part).symlink_to(servers.REPO / part)
        servers.install_binary(servers.binary(), release / ".build" / "release" / "ireporter")
        self.release = release
        self.shims = self.dir / "shims"
        self.shims.mkdir()
        for tool, text in SHIMS.items():
            (self.shims / tool).write_text(text)
            (self.shims / tool).chmod(0o755)
        self.photos = self.dir / "php-photos"
        self.photos.mkdir()
        for n in range(len(PHP_USERS)):
            (self.photos / f"{n + 2}.jpg").write_bytes(servers.small_photo())
            (self.photos / f"{n + 2}-thumb.jpg").write_bytes(
                servers.imagemagick("-size", "180x180", "xc:#c08040", "jpeg:-"))

    def setup_script(self) -> str:
        """Mounts, then the host as it was before the guide: the PHP site
        served by the web server (on the test's port)."""
        d, port = self.dir, self.port
        mounts = "\n".join(
            f"mount -t overlay overlay -o lowerdir=/{path},upperdir={d}/{layer}-up,workdir={d}/{layer}-work /{path}"
            for layer, path in (("etc", "etc"), ("var", "var"), ("usr-local", "usr/local")))
        web = {
            "apache": f"""
sed -i -e 's/^Listen 80$/Listen 127.0.0.1:{port}/' -e '/Listen 443/d' /etc/apache2/ports.conf
sed -i 's/<VirtualHost \\*:80>/<VirtualHost *:{port}>/' /etc/apache2/sites-available/000-default.conf
apachectl start
""",
            "nginx": f"""
sed -i -e 's/listen 80 default_server;/listen 127.0.0.1:{port} default_server;/' \\
       -e '/listen \\[::\\]:80 default_server;/d' /etc/nginx/sites-available/default
nginx
""",
        }[self.web]
        return f"""set -eux
{mounts}
mount --bind {d}/run /run
mount --bind {self.db.directory} /run/mysqld
readlink /proc/self/ns/mnt > {self.ns_file}
# Not part of a fresh host: what an earlier install of ours left on this machine.
rm -rf /etc/ireporter /var/lib/ireporter /usr/local/bin/ireporter /etc/nginx/snippets/ireporter.conf \\
       /etc/apache2/conf-enabled/ireporter* /etc/apache2/conf-available/ireporter*
# The PHP site, its photos written by PHP (www-data).
mkdir -p /var/www/html
rm -rf {APP}
cp -r {REFERENCE_PHP} {APP}
chmod -R u+w {APP}
cp {self.photos}/* {APP}/upload/
chown -R www-data:www-data {APP}/upload
{web}"""

    def walk(self):
        """The guide's commands, from the release folder, after the setup."""
        (self.dir / "setup.sh").write_text(self.setup_script())
        (self.dir / "guide.sh").write_text(guide_script(self.name))
        env = servers.clean_env(PATH=f"{self.shims}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        with open(self.log, "ab") as log:
            p = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                                f"bash {self.dir}/setup.sh && cd {self.release} && "
                                f"exec bash -eux -o pipefail {self.dir}/guide.sh"],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd="/", timeout=300)
        assert p.returncode == 0, f"the {self.name} guide failed (exit {p.returncode}):\n" + self.logs()

    def processes(self) -> list[int]:
        """Every process living in this host's mount namespace."""
        if not self.ns_file.exists():
            return []
        ns = self.ns_file.read_text().strip()
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/ns/mnt") == ns and servers.proc_alive(int(entry)):
                        found.append(int(entry))
                except OSError:
                    pass
        return found

    def run_inside(self, *command: str) -> subprocess.CompletedProcess:
        [pid, *_] = self.processes()
        return subprocess.run(["nsenter", "-t", str(pid), "-m", "--", *command], capture_output=True, text=True,
                              timeout=30)

    def logs(self) -> str:
        web_log = (self.dir / "var-up/log/apache2/error.log") if self.web == "apache" \
            else (self.dir / "var-up/log/nginx/error.log")
        return "\n".join([servers.tail(self.log, 60), servers.tail(web_log)])

    def stop(self):
        pids = self.processes()
        servers.kill_pids(pids, signal.SIGTERM)
        if not servers.wait_gone(pids, 15):
            servers.kill_pids([p for p in pids if servers.proc_alive(p)])
            servers.wait_gone(pids, 5)
        servers.remove_workdir(self.dir)


@pytest.fixture
def host(database, request):
    php_database(database)
    h = FreshHost(request.param, database)
    yield h
    h.stop()


@pytest.mark.parametrize("host", list(GUIDES), indirect=True)
def test_the_guide_as_written_swaps_the_php_site(host, database):
    if not REFERENCE_PHP.is_dir():
        pytest.skip(f"the PHP reference is missing: {REFERENCE_PHP}")
    host.walk()
    base = f"http://127.0.0.1:{host.port}/iReporter/"

    def answers():
        with AppClient(Endpoint(base), timeout=10) as phone:
            r = phone.stream()
            return r.status == 200 and r.header("Content-Type") == "application/json" and r
    r = servers.wait_for(answers, 15, what="the app's API through the web server")
    titles = {row["title"] for row in r.json()["result"]}
    assert {f"{u} in 2012" for u, _ in PHP_USERS} <= titles, titles

    # The PHP site's accounts log in as before; its photos are served.
    for user, password in PHP_USERS:
        with AppClient(Endpoint(base)) as phone:
            r = phone.login(user, servers.app_password(password))
            assert r.status == 200 and r.json()["result"][0]["username"] == user, (r.body, host.logs())
    with AppClient(Endpoint(base)) as phone:
        for id_photo in range(2, 2 + len(PHP_USERS)):
            r = phone.get(f"upload/{id_photo}.jpg")
            assert r.status == 200 and r.header("Content-Type") == "image/jpeg", (id_photo, r.status)
        # lib.php (the database password) is gone, not merely hidden.
        r = phone.get("lib.php")
        assert b"mysqli_connect" not in r.body
    for php in ("index.php", "api.php", "lib.php"):
        assert host.run_inside("test", "-e", f"{APP}/{php}").returncode == 1, f"{php} is still in {APP}"
    app_flow(base, None, f"guide{host.name}", host.logs)
    if host.name == "nginx":
        # The guide's stream_answer_file: kept once a stream was answered, for nginx to answer the next ones.
        def kept():
            with AppClient(Endpoint(base)) as phone:
                assert phone.stream().status == 200
            return host.run_inside("test", "-s", "/run/ireporter/stream-answer").returncode == 0
        servers.wait_for(kept, 10, interval=0.2, what="the stream answer file of the guide's server")

    # The database: both migrations applied, every password hashed.
    assert database.sql("SELECT COUNT(*) FROM login WHERE pass NOT LIKE BINARY '$argon2id$%'").strip() == "0"
    assert database.sql("SELECT CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                         "'iReport' AND TABLE_NAME = 'login' AND COLUMN_NAME = 'pass'").strip() == "255"
    assert database.sql("SHOW INDEX FROM login WHERE Key_name = 'username'").strip()

    # One state for every process of the installation, beside the sessions.
    state = "/var/lib/ireporter/sessions/ireporter-shared-state"
    assert host.run_inside("test", "-f", state).returncode == 0, f"no {state}"

    if host.name in ("fcgid", "cgi"):
        # The configuration in the web root: the server's group may read it, the web never.
        mode = host.run_inside("stat", "-c", "%a %U:%G", f"{APP}/ireporter.conf")
        assert mode.stdout.split() == ["640", "root:www-data"], mode.stdout
        with AppClient(Endpoint(base)) as phone:
            r = phone.get(path="/iReporter/ireporter.conf")
            assert r.status == 403 and b"db_url" not in r.body, (r.status, r.body[:200])
        # A 24 MB photo: the server's JSON answer, not Apache's page or "Malformed request".
        from test_deploy_apache import oversized, raw_post
        body, ctype = oversized(24 * 1000 * 1000)
        r = raw_post(host.port, body, ctype)
        assert r.status == 200 and r.json() == TOO_LARGE, (r.status, r.body[:300], host.logs())
    if host.name != "cgi":
        # The status page, where the guide's configuration puts it (local clients only).
        path = "/iReporter/ireporter-status" if host.name == "fcgid" else "/ireporter-status"
        with AppClient(Endpoint(base)) as phone:
            r = phone.get(path=path + "?json")
            assert r.status == 200 and r.json()["pool"] == "ireporter", (path, r.status, r.body[:300])
