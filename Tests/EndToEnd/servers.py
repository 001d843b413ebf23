"""servers.py - private MariaDB, iReporter, Apache and nginx instances for the
deployment tests (test_deploy_apache.py, test_deploy_spawn.py,
test_process_model.py). Each test module starts what it needs once and stops
it at the end; everything runs on loopback, in its own directory under /tmp.

Environment:
  IREPORTER_BINARY        required: the built ireporter binary (copied into the
                          test directories: www-data must be able to run it)
  IREPORTER_TEST_DB_URL   optional: use this database instead of starting a
                          private MariaDB (scripts/mariadb.sh, 127.0.0.1:3312,
                          /tmp/ir-deploy-mariadb-3312; its tables are emptied
                          at each module start)
  IREPORTER_DEPLOY_DB_PORT, IREPORTER_DEPLOY_DB_DIR   override those two
  IREPORTER_DEPLOY_PORT_BASE  first of the four loopback HTTP ports the web
                          servers listen on (default 8095: 8095-8098)
  IREPORTER_KEEP_DIRS=1   keep the test directories (logs) after the run

The deploy/ files under test are rendered (their production paths replaced
by the test's) exactly as an operator would edit them; render() fails when a
path it must replace is missing, so the tests cannot drift away from deploy/.
What the scripts already do, the harness asks them for (run_script) rather
than doing it again: MariaDB (scripts/mariadb.sh, galera.sh, replica.sh), the
private nginx and the front nginx (scripts/stack.sh render-nginx,
scripts/cluster.sh render-front, scripts/nginx.sh start|stop).

Processes are only ever signalled by the pid we started or read from a pid
file / the status page / /proc (children of our pid, or processes running the
binary copy in our own test directory), never by name.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from appclient import AppClient, Endpoint, jpeg_size, multipart_body, multipart_content_type
from e2e import DROP_ALL_TABLES, schema_as_installed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEPLOY = REPO / "deploy"
WWW = "www-data"
APACHE_MODULES = Path("/usr/lib/apache2/modules")

SUCCESS = b'{"successful":1}'

_PORT_BASE = int(os.environ.get("IREPORTER_DEPLOY_PORT_BASE", "8095"))


def http_port(n: int) -> int:
    """The n-th (0-3) HTTP port of the deployment tests: 8095-8098 by default."""
    assert 0 <= n <= 3
    return _PORT_BASE + n


# ------------------------------------------------------------------ basics

def http_get(url: str) -> tuple[int, str]:
    """(status, body) of a GET, an error status included (readiness's 503)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def binary() -> Path:
    """The server binary under test (IREPORTER_BINARY); fails the test loudly."""
    value = os.environ.get("IREPORTER_BINARY")
    if not value:
        pytest.fail("IREPORTER_BINARY is not set: point it at the built server "
                    "(e.g. IREPORTER_BINARY=.build/release/ireporter)", pytrace=False)
    path = Path(value)
    if not path.is_absolute():
        path = (REPO / path) if (REPO / path).exists() else path.resolve()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"IREPORTER_BINARY={value}: no executable file there", pytrace=False)
    return path


def need_root():
    if os.geteuid() != 0:
        pytest.fail("the deployment tests start web servers that switch to www-data: run them as root",
                    pytrace=False)


def need_tool(path: str, package: str) -> str:
    found = shutil.which(path) or (path if os.access(path, os.X_OK) else None)
    if not found:
        pytest.fail(f"{path} is missing (apt-get install {package})", pytrace=False)
    return found


def clean_env(**extra: str) -> dict[str, str]:
    """A minimal environment: no IREPORTER_* (they override the server's
    configuration file), no LISTEN_* (socket activation), no proxies."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "LANG": "C.UTF-8", "HOME": "/root"}
    env.update(extra)
    return env


def pwd_id(name: str) -> int:
    import pwd
    return pwd.getpwnam(name).pw_uid


def grp_id(name: str) -> int:
    import grp
    return grp.getgrnam(name).gr_gid


def proc_ppid(pid: int) -> Optional[int]:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def chown_www(*paths: Path):
    for p in paths:
        shutil.chown(p, WWW, WWW)


def make_workdir(name: str) -> Path:
    """A fresh directory that www-data (Apache, nginx, the server) can traverse."""
    d = Path(tempfile.mkdtemp(prefix=f"ir-{name}-", dir="/tmp"))
    d.chmod(0o755)
    return d


def remove_workdir(d: Path):
    if os.environ.get("IREPORTER_KEEP_DIRS") == "1":
        return
    shutil.rmtree(d, ignore_errors=True)


def app_dirs(base: Path) -> tuple[Path, Path]:
    """upload/ (0755) and sessions/ (0700), owned by www-data."""
    upload, sessions = base / "upload", base / "sessions"
    for d, mode in ((upload, 0o755), (sessions, 0o700)):
        d.mkdir(parents=True, exist_ok=True)
        chown_www(d)
        d.chmod(mode)
    return upload, sessions


def www_file(path: Path) -> Path:
    """An empty file www-data can append to (logs of a server that dropped root)."""
    path.touch()
    chown_www(path)
    return path


def install_binary(src: Path, dst: Path) -> Path:
    """A copy (never a link into .build): www-data must be able to run it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".new")
    shutil.copyfile(src, tmp)
    tmp.chmod(0o755)
    tmp.replace(dst)
    return dst


# The key of nginx's publisher location in the private nginxes (Nginx), and
# the live_publish_key of servers that publish there.
PUBLISH_KEY = "e2e-publish-key-" + secrets.token_hex(8)


def render(src: Path, dst: Path, replace: dict[str, str], mode: int = 0o644) -> str:
    """Copy a deploy/ file, replacing literal strings (each must occur)."""
    text = src.read_text()
    for old, new in replace.items():
        if old not in text:
            raise AssertionError(f"{src} no longer contains {old!r}: update the test's rendering")
        text = text.replace(old, new)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(text)
    dst.chmod(mode)
    return text


def run_script(script: str, *args: str, env: Optional[dict[str, str]] = None, timeout: float = 60,
               input: Optional[str] = None) -> str:
    """Runs scripts/SCRIPT (the project's own steps: what the harness needs
    of them it asks them for, rather than doing it again); its output, or
    the test fails with both streams."""
    p = subprocess.run([str(REPO / "scripts" / script), *args], env=clean_env(**(env or {})), capture_output=True,
                       text=True, timeout=timeout, cwd="/", input=input)
    assert p.returncode == 0, f"scripts/{script} {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def edit(path: Path, replace: Optional[dict[str, str]]):
    """A test's own change to a rendered file: literal strings, each must occur."""
    if replace:
        render(path, path, replace, mode=path.stat().st_mode & 0o777)


def set_config_keys(text: str, keys: dict[str, object]) -> str:
    """Set `key = value` in an ireporter.conf text: replaces the first line
    (active or commented out) for that key, else appends it."""
    lines = text.splitlines()
    for key, value in keys.items():
        pattern = re.compile(rf"^\s*#?\s*{re.escape(key)}\s*=")
        new = f"{key} = {value}"
        for i, line in enumerate(lines):
            if pattern.match(line):
                lines[i] = new
                break
        else:
            lines.append(new)
    return "\n".join(lines) + "\n"


def config_value(text: str, key: str) -> Optional[str]:
    for line in text.splitlines():
        m = re.match(rf"^\s*{re.escape(key)}\s*=\s*(.*?)\s*(#.*)?$", line)
        if m:
            return m.group(1)
    return None


def proc_alive(pid: int) -> bool:
    """Exists and is not a zombie (an orphan we did not start may linger as
    one when PID 1 does not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def proc_user(pid: int) -> Optional[str]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                import pwd
                return pwd.getpwuid(int(line.split()[2])).pw_name  # effective uid
    except (OSError, KeyError):
        return None
    return None


def children(pid: int) -> list[int]:
    """Live child processes of pid: a supervisor's workers, not its answer
    refresher or its sweep of the upload folder (each named so)."""
    return [c for c in children_all(pid) if proc_name(c) not in ("answer-refresh", "upload-sweep")]


@contextlib.contextmanager
def stopped(pids: list[int]):
    """The processes stopped (SIGSTOP) for the block, resumed (SIGCONT) after."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def children_all(pid: int) -> list[int]:
    """Live child processes of pid."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    except OSError:
        return []
    return [c for c in out if proc_alive(c)]


def proc_name(pid: int) -> str | None:
    """The process's name (/proc/PID/comm); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def processes_running(exe: Path) -> list[int]:
    """Live processes whose executable is this file (the copy a test installed)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            target = os.readlink(f"/proc/{entry}/exe")
        except OSError:
            continue
        if target.removesuffix(" (deleted)") == str(exe) and proc_alive(int(entry)):
            found.append(int(entry))
    return found


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


def wait_gone(pids, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while any(proc_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_pids(pids, sig=signal.SIGKILL):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return f"({path}: none)"
    return f"--- last lines of {path}:\n" + "\n".join(lines)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def port_free(port: int):
    if port_open(port):
        pytest.fail(f"127.0.0.1:{port} is already in use: another test run (or a leftover server) holds it",
                    pytrace=False)


def unused_port() -> int:
    """A loopback port nothing listens on, for a server a test starts: in
    10000-11999, below Linux's ephemeral range (32768-60999), so that no
    outgoing connection's local port takes it before the server binds it
    (the kernel's "any free port" is in that range). The Swift tests' own
    services use 12000-31999 (TestPorts)."""
    for port in random.sample(range(10000, 12000), 100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail("no free port in 127.0.0.1:10000-11999", pytrace=False)


# ------------------------------------------------------------------ MariaDB

class DatabaseScript:
    """One of scripts/' database scripts (mariadb.sh, galera.sh, replica.sh),
    whose every command is `SCRIPT COMMAND DIR PORT [ARGS...]` (lib.sh's
    dir_port_args)."""

    def __init__(self, name: str, directory: Path, port: int | str):
        need_tool("/usr/sbin/mariadbd", "mariadb-server")
        self.name, self.directory, self.port = name, directory, port

    def script(self, command: str, *args: str, timeout: float = 200, input: Optional[str] = None) -> str:
        return run_script(self.name, command, str(self.directory), str(self.port), *args, timeout=timeout, input=input)

    def running(self) -> bool:
        return subprocess.run([str(REPO / "scripts" / self.name), "status", str(self.directory), str(self.port)],
                              capture_output=True, timeout=30).returncode == 0

    def stop(self):
        subprocess.run([str(REPO / "scripts" / self.name), "stop", str(self.directory), str(self.port)],
                       capture_output=True, timeout=200)


class GaleraNodes(DatabaseScript):
    """scripts/galera.sh's three nodes in `directory`: SQL on one of them."""

    def __init__(self, directory: Path, port: int | str):
        super().__init__("galera.sh", directory, port)

    def sql(self, node: int, text: str) -> str:
        return self.script("sql", str(node), "-N", "-B", "-e", text, timeout=60)

    def read(self, node: int, text: str) -> str:
        """`text` once node `node` has applied every write the cluster
        committed before it (a causal read: the `mariadb` client's session
        does not wait, and a write acknowledged through another node may
        not be applied here yet)."""
        return self.sql(node, "SET SESSION wsrep_sync_wait = 1; " + text)


@dataclass
class Database:
    url: str
    directory: Optional[Path] = None   # set when we started it
    port: str = ""

    def sql(self, text: str) -> str:
        """Runs SQL as root on the database we started (tab-separated rows)."""
        assert self.directory is not None, "not our own database: no root client"
        return DatabaseScript("mariadb.sh", self.directory, self.port).script("sql", "-N", "-B", input=text)

    def stop(self):
        if self.directory is not None:
            DatabaseScript("mariadb.sh", self.directory, self.port).stop()
            self.directory = None


@contextlib.contextmanager
def table_locked(db: Database, table: str):
    """`LOCK TABLES <table> WRITE` held by a session of its own (`mariadb -n`
    runs and answers each line as it comes) until the block ends."""
    assert db.directory is not None, "not our own database: no root client"
    locker = subprocess.Popen([str(REPO / "scripts" / "mariadb.sh"), "sql", str(db.directory), str(db.port), "-N", "-B", "-n"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=clean_env(), cwd="/")
    try:
        locker.stdin.write(f"LOCK TABLES {table} WRITE; SELECT 'locked';\n")
        locker.stdin.flush()
        assert locker.stdout.readline().strip() == "locked"
        yield
    finally:
        locker.stdin.write("UNLOCK TABLES;\n")
        locker.stdin.close()
        locker.wait(30)


def waiting_for_table(db: Database, statement_prefix: str) -> int:
    """How many sessions run a statement starting so (one waiting for a lock, say)."""
    return int(db.sql(f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '{statement_prefix}%'").strip())


def start_database() -> Database:
    """IREPORTER_TEST_DB_URL when set, else a private MariaDB (scripts/mariadb.sh)."""
    url = os.environ.get("IREPORTER_TEST_DB_URL")
    if url:
        return Database(url)
    port = os.environ.get("IREPORTER_DEPLOY_DB_PORT", "3312")
    directory = Path(os.environ.get("IREPORTER_DEPLOY_DB_DIR", f"/tmp/ir-deploy-mariadb-{port}"))
    mariadb = DatabaseScript("mariadb.sh", directory, port)
    if not mariadb.running():
        port_free(int(port))
    mariadb.script("start", timeout=180)
    # Our own database (its password is the stack's own): empty tables as
    # installed (migrations 003 to 005, and repair's table of rows set
    # aside, too), for every module.
    db = Database(run_script("mariadb.sh", "url", str(directory)).strip(), directory, port)
    db.sql(DROP_ALL_TABLES + schema_as_installed(REPO / "sql" / "schema.sql"))
    return db


# --------------------------------------------------------------- the server

class OurServer:
    """ireporter started by us (as root, `user = www-data` in its
    configuration), listening on its own unix socket: base/run/fcgi.sock.
    Its configuration is deploy/ireporter.conf.example, rendered."""

    def __init__(self, base: Path, source_binary: Path, db_url: str, **keys):
        self.base = base
        self.run_dir = base / "run"
        self.run_dir.mkdir(parents=True, exist_ok=True)
        chown_www(self.run_dir)
        self.upload_dir, self.session_dir = app_dirs(base)
        self.binary = install_binary(source_binary, base / "bin" / "ireporter")
        self.socket_path = self.run_dir / "fcgi.sock"
        self.pid_file = self.run_dir / "ireporter.pid"
        self.config_path = base / "ireporter.conf"
        self.log_path = base / "ireporter.log"
        self.db_url = db_url
        self.proc: Optional[subprocess.Popen] = None
        self.seen_workers: set[int] = set()
        self.db: Optional[Database] = None  # the test database, when server_behind_nginx started it
        self.write_config(**keys)

    def write_config(self, **keys):
        text = (DEPLOY / "ireporter.conf.example").read_text()
        for old, new in (("/run/ireporter/fcgi.sock", str(self.socket_path)),
                         ("/run/ireporter/ireporter.pid", str(self.pid_file)),
                         ("/var/www/iReporter/upload", str(self.upload_dir)),
                         ("/var/lib/ireporter/sessions", str(self.session_dir))):
            assert old in text, f"deploy/ireporter.conf.example no longer contains {old}"
            text = text.replace(old, new)
        defaults = {"db_url": self.db_url, "user": WWW, "workers": 3, "log_file": ""}
        defaults.update(keys)
        text = set_config_keys(text, defaults)
        self.config_path.write_text(text)
        # As deploy/ireporter.conf.example says: root:www-data 0640. The
        # server re-reads it on SIGUSR2 after it switched to www-data.
        os.chown(self.config_path, 0, grp_id(WWW))
        self.config_path.chmod(0o640)
        self.config_text = text

    def check_config(self):
        p = subprocess.run([str(self.binary), "--config", str(self.config_path), "--check-config"],
                           env=clean_env(), capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, f"--check-config refused {self.config_path}:\n{p.stderr}"

    def start(self, timeout: float = 15):
        self.check_config()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([str(self.binary), "--config", str(self.config_path)],
                                     env=clean_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     cwd="/", start_new_session=True)
        log.close()

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"ireporter exited with {self.proc.returncode} during start-up\n"
                                     + tail(self.log_path))
            # (A server killed outright leaves its pid file: this one's pid, not any.)
            return self.listening() and self.pid_file.is_file() \
                and self.pid_file.read_text().strip() == str(self.proc.pid)
        wait_for(ready, timeout, what=f"ireporter to listen on {self.tcp_listen or self.socket_path}")
        self.workers()  # remember them for the cleanup
        return self

    @property
    def tcp_listen(self) -> Optional[tuple[str, int]]:
        """(host, port) when `listen` is TCP rather than the unix socket."""
        listen = re.search(r"^listen = (.+)$", self.config_text, re.M).group(1).strip()
        if listen.startswith("/"):
            return None
        host, _, port = listen.rpartition(":")
        return host, int(port)

    def listening(self) -> bool:
        if self.tcp_listen is None:
            return self.socket_path.is_socket()
        try:
            socket.create_connection(self.tcp_listen, timeout=1).close()
            return True
        except OSError:
            return False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def workers(self) -> list[int]:
        w = children(self.proc.pid) if self.proc else []
        self.seen_workers.update(w)
        return w

    def signal(self, sig):
        self.workers()
        os.kill(self.proc.pid, sig)

    def stop(self, timeout: float = 40) -> Optional[float]:
        """SIGTERM; returns the seconds it took to exit (None: had to be killed)."""
        if self.proc is None:
            return None
        self.workers()
        took = None
        if self.proc.poll() is None:
            t0 = time.monotonic()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
                took = time.monotonic() - t0
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        # Workers the supervisor left behind (it should leave none).
        leftovers = [p for p in self.seen_workers if proc_alive(p) and str(self.config_path) in proc_cmdline(p)]
        kill_pids(leftovers)
        self.leftover_workers = leftovers
        self.proc = None
        return took


# ------------------------------------------------------------------ Apache

APACHE_MAIN = """\
# Private Apache for the iReporter deployment tests (servers.py).
ServerRoot "{root}"
PidFile "{root}/run/httpd.pid"
DefaultRuntimeDir "{root}/run"
Mutex file:{root}/run default
ErrorLog "{root}/logs/error.log"
LogLevel warn
{load_modules}
User www-data
Group www-data
ServerName localhost
ServerTokens Prod
TypesConfig /etc/mime.types
AccessFileName .htaccess
Timeout 60
KeepAlive On
# Small: a test server.
StartServers 1
ServerLimit 2
ThreadsPerChild 25
MaxRequestWorkers 50
MinSpareThreads 10
MaxSpareThreads 50
<IfModule mod_cgid.c>
    ScriptSock "{root}/run/cgisock"
</IfModule>
LogFormat "%h %l %u %t \\"%r\\" %>s %b %D" timed
CustomLog "{root}/logs/access.log" timed

# Debian's apache2.conf defaults: nothing but what a site allows.
<Directory />
    Options FollowSymLinks
    AllowOverride None
    Require all denied
</Directory>
<FilesMatch "^\\.ht">
    Require all denied
</FilesMatch>

{body}
"""


class Apache:
    """apache2 -f ROOT/httpd.conf -k start|stop, with only the given modules."""

    BASE_MODULES = ["mpm_event", "authz_core", "authz_host", "mime", "alias", "dir", "log_config", "headers"]

    def __init__(self, root: Path, ports: list[int], modules: list[str], body: str):
        self.root = root
        self.ports = ports
        self.exe = need_tool("/usr/sbin/apache2", "apache2")
        for d in ("run", "logs"):
            (root / d).mkdir(parents=True, exist_ok=True)
        self.conf = root / "httpd.conf"
        self.error_log = root / "logs" / "error.log"
        self.pid_file = root / "run" / "httpd.pid"
        loads = []
        for m in dict.fromkeys(self.BASE_MODULES + modules):
            if m == "log_config":
                continue  # compiled in on Debian
            so = APACHE_MODULES / f"mod_{m}.so"
            if not so.is_file():
                pytest.fail(f"{so} is missing (apt-get install apache2 libapache2-mod-fcgid)", pytrace=False)
            loads.append(f"LoadModule {m}_module {so}")
        listen = "\n".join(f"Listen 127.0.0.1:{p}" for p in ports)
        self.conf.write_text(APACHE_MAIN.format(root=root, load_modules="\n".join(loads),
                                                body=listen + "\n\n" + body))
        self.pid: Optional[int] = None

    def _ctl(self, *args, check=True):
        p = subprocess.run([self.exe, "-f", str(self.conf), *args], env=clean_env(), capture_output=True,
                           text=True, timeout=30, cwd="/")
        if check and p.returncode != 0:
            raise AssertionError(f"apache2 {' '.join(args)} failed ({p.returncode}):\n{p.stdout}{p.stderr}\n"
                                 + tail(self.error_log))
        return p

    def start(self):
        for port in self.ports:
            port_free(port)
        self._ctl("-t")
        self._ctl("-k", "start")
        self.pid = int(wait_for(lambda: self.pid_file.is_file() and self.pid_file.read_text().strip(), 15,
                                what="Apache's pid file"))
        for port in self.ports:
            wait_for(lambda: port_open(port), 15, what=f"Apache on 127.0.0.1:{port}")
        return self

    def stop(self):
        if self.pid is None:
            return
        pid = self.pid
        self.pid = None
        if proc_alive(pid):
            self._ctl("-k", "stop", check=False)
            if not wait_gone([pid], 20):
                kill_pids([pid])
                wait_gone([pid], 5)

    def log_tail(self, n=25) -> str:
        return tail(self.error_log, n)

    @staticmethod
    def proxy_fcgi_snippet(server: "OurServer", path: Path) -> Path:
        """deploy/apache/ireporter-proxy-fcgi.conf pointed at `server`'s
        socket and upload folder, at `path` (for a VirtualHost's Include)."""
        render(DEPLOY / "apache" / "ireporter-proxy-fcgi.conf", path,
               {"/run/ireporter/fcgi.sock": str(server.socket_path),
                "/var/www/iReporter/upload/": f"{server.upload_dir}/"})
        return path


# ------------------------------------------------------------------- nginx

class Nginx:
    """A private nginx in run_dir/nginx, as scripts/stack.sh renders and
    starts it (`stack.sh render-nginx`, then scripts/nginx.sh), with
    deploy/nginx/ireporter.conf pointed at `socket_path`; `edits` and
    `live_edits` change ireporter.conf and ireporter-live.conf as rendered.
    Its publisher location's key is PUBLISH_KEY."""

    def __init__(self, run_dir: Path, port: int, socket_path: Path, upload_dir: Path,
                 edits: Optional[dict[str, str]] = None, live_edits: Optional[dict[str, str]] = None,
                 s3_url: str = ""):
        run_dir.mkdir(parents=True, exist_ok=True)
        # The stack's key file, made before it would make one of its own.
        key = run_dir / "publish.key"
        key.write_text(PUBLISH_KEY)
        key.chmod(0o600)
        # S3_URL: deploy/nginx/ireporter-s3.conf before ireporter.conf, and its cache.
        run_script("stack.sh", "render-nginx", env={"RUN_DIR": str(run_dir), "PORT": str(port),
                                                   "UPLOAD_DIR": str(upload_dir), "FCGI_SOCKET": str(socket_path),
                                                   "S3_URL": s3_url})
        self.dir, self.port = run_dir / "nginx", port
        edit(self.dir / "ireporter.conf", edits)
        edit(self.dir / "ireporter-live.conf", live_edits)
        self.pid: Optional[int] = None

    def start(self):
        port_free(self.port)
        run_script("nginx.sh", "start", str(self.dir), f"127.0.0.1:{self.port}")
        self.pid = int((self.dir / "nginx.pid").read_text())
        wait_for(lambda: port_open(self.port), 10, what=f"nginx on 127.0.0.1:{self.port}")
        return self

    def stop(self):
        self.pid = None
        run_script("nginx.sh", "stop", str(self.dir))

    def log_tail(self, n=25) -> str:
        return tail(self.dir / "error.log", n)


class FrontNginx(Nginx):
    """A private front nginx (deploy/nginx/ireporter-front.conf) spreading
    requests over the two app hosts on loopback `host_ports`, as
    scripts/cluster.sh renders it in run_dir/front (`cluster.sh
    render-front`): each answer names its host in X-Upstream."""

    def __init__(self, run_dir: Path, port: int, host_ports: list[int]):
        run_script("cluster.sh", "render-front", env={"CLUSTER_DIR": str(run_dir), "PORT": str(port),
                                                     "APP_PORTS": " ".join(map(str, host_ports))})
        self.dir, self.port = run_dir / "front", port
        self.pid = None


def s3_client(url: str):
    """A boto3 client (moto depends on boto3) with the key of an s3_url."""
    import boto3
    parts = urllib.parse.urlsplit(url)
    return boto3.client("s3", endpoint_url=f"{parts.scheme}://{parts.hostname}:{parts.port}", region_name="us-east-1",
                        aws_access_key_id=urllib.parse.unquote(parts.username),
                        aws_secret_access_key=urllib.parse.unquote(parts.password))


def s3_keys(url: str) -> list[str]:
    """Every key of an s3_url's bucket."""
    keys = []
    for page in s3_client(url).get_paginator("list_objects_v2").paginate(Bucket=url.rsplit("/", 1)[1]):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return sorted(keys)


class S3Server:
    """scripts/s3-server.py (moto, signature checking on) on 127.0.0.1:`port`
    in run_dir/s3, started and stopped as scripts/cluster.sh does
    (`cluster.sh start-s3`): `url` is the bucket's s3_url once started.
    Objects live in its memory."""

    def __init__(self, run_dir: Path, port: int):
        # This PATH: the script runs the python3 of the tests, which has moto.
        self.env = {"PATH": os.environ["PATH"], "CLUSTER_DIR": str(run_dir), "S3_PORT": str(port)}
        self.directory, self.port = run_dir / "s3", port
        self.pid = 0
        self.url = ""

    def start(self):
        port_free(self.port)
        run_script("cluster.sh", "start-s3", env=self.env, timeout=60)
        self.pid = int((self.directory / "s3-server.pid").read_text())
        self.url = (self.directory / "s3.url").read_text().strip()
        return self

    def client(self):
        return s3_client(self.url)

    def keys(self) -> list[str]:
        return s3_keys(self.url)

    def freeze(self, frozen: bool):
        """SIGSTOP: connections are accepted by the kernel and never answered."""
        os.kill(self.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def stop(self):
        if self.pid and proc_alive(self.pid):
            self.freeze(False)
        run_script("cluster.sh", "stop-s3", env=self.env, timeout=60)


@dataclass
class Workspace:
    """What a test module starts from (`workspace`): the test database (None
    when not asked for), a fresh work folder, and what the module started."""
    db: Optional[Database]
    base: Path
    started: list = field(default_factory=list)

    def start(self, thing):
        """thing.start(), stopped (thing.stop()) at the end, also when its
        start fails half-way; returns it."""
        self.started.append(thing)
        thing.start()
        return thing


@contextlib.contextmanager
def workspace(name: str, database: bool = True):
    """Root, the test database (start_database) and a work folder of its own;
    afterwards what was started through it is stopped, last first, then the
    database, and the folder is removed."""
    need_root()
    db = start_database() if database else None
    space = Workspace(db, make_workdir(name))
    try:
        yield space
    finally:
        for thing in reversed(space.started):
            thing.stop()
        if db:
            db.stop()
        remove_workdir(space.base)


@contextlib.contextmanager
def server_behind_nginx(name: str, port: int, nginx_edits: Optional[dict[str, str]] = None,
                        live_edits: Optional[dict[str, str]] = None, **keys):
    """The test database, our server (`keys`: its configuration) in a work
    folder of its own and a private nginx on `port` in front of it; all
    stopped, and the folder removed, afterwards. The server's `db` is the
    test database."""
    with workspace(name) as space:
        server = space.start(OurServer(space.base / "server", binary(), space.db.url, **keys))
        server.db = space.db
        space.start(Nginx(space.base, port, server.socket_path, server.upload_dir, edits=nginx_edits,
                          live_edits=live_edits,
                          s3_url=keys.get("s3_url", "") if keys.get("photo_store") == "s3" else ""))
        yield server


# ------------------------------------------------------------------ photos

_photo_cache: dict[str, bytes] = {}


def convert_binary() -> str:
    """ImageMagick's convert: Debian's ImageMagick 6 directly, as the
    reference's bench/make_images.sh uses it."""
    convert = next((c for c in ("/usr/bin/convert-im6.q16", shutil.which("convert") or "")
                    if c and os.access(c, os.X_OK)), None)
    if not convert:
        pytest.fail("ImageMagick's convert is needed to make the test photos (apt-get install imagemagick)",
                    pytrace=False)
    return convert


def imagemagick(*args: str) -> bytes:
    """The output of ImageMagick's convert with these arguments."""
    return subprocess.run([convert_binary(), *args], capture_output=True, check=True, timeout=120).stdout


def photo() -> bytes:
    """A real JPEG of 1000x750, well over mod_fcgid's default 128 KB request
    limit (ImageMagick, deterministic)."""
    if "photo" not in _photo_cache:
        data = imagemagick("-seed", "7", "-size", "1000x750", "plasma:fractal",
                           "-sampling-factor", "4:2:0", "-quality", "92", "jpeg:-")
        assert jpeg_size(data) == (1000, 750)
        assert len(data) > 150_000, len(data)
        _photo_cache["photo"] = data
    return _photo_cache["photo"]


# --------------------------------------------------------------- the flows

def app_password(clear: str) -> str:
    """What the app sends for `clear` (e2e.app_password: the salt after the password, as LoginScreen.m does)."""
    import e2e
    return e2e.app_password(clear)


def unique_name(tag: str) -> str:
    return f"{tag}_{secrets.token_hex(4)}"


def check_json(r, what: str):
    assert r.status == 200, f"{what}: HTTP {r.status}: {r.body[:300]!r}"
    ctype = r.header("Content-Type") or ""
    assert ctype.startswith("application/json"), f"{what}: Content-Type {ctype!r}: {r.body[:300]!r}"
    return r.json()


def app_flow(base_url: str, upload_dir: Optional[Path] = None, tag: str = "deploy",
             logs: Callable[[], str] = lambda: "") -> int:
    """The app's flow through a real web server: register -> upload a JPEG ->
    stream -> GET upload/<id>.jpg and <id>-thumb.jpg -> logout -> upload
    refused. Returns the IdPhoto. On failure the assertion carries `logs()`."""
    try:
        return _app_flow(base_url, upload_dir, tag)
    except (AssertionError, OSError, Exception) as e:  # noqa: B014 - add the logs to any failure
        raise AssertionError(f"{type(e).__name__}: {e}\n{logs()}") from e


def _app_flow(base_url: str, upload_dir: Optional[Path], tag: str) -> int:
    jpeg = photo()
    user = unique_name(tag)
    title = f"Photo of {user}"
    with AppClient(Endpoint(base_url), timeout=30) as phone:
        r = phone.register(user, app_password("secret"))
        body = check_json(r, "register")
        assert body["result"][0]["username"] == user, body
        assert phone.session_id, f"register set no session cookie: {r.headers}"

        r = phone.upload(jpeg, title)
        assert r.status == 200 and r.body == SUCCESS, f"upload: HTTP {r.status} {r.body[:300]!r}"

        r = phone.stream()
        rows = check_json(r, "stream")["result"]
        mine = [row for row in rows if row["title"] == title]
        assert len(mine) == 1, f"the upload is not in the stream: {rows[-3:]}"
        assert mine[0]["username"] == user
        id_photo = int(mine[0]["IdPhoto"])

        r = phone.stream(str(id_photo))
        assert check_json(r, "stream IdPhoto")["result"] == mine

        for name, size in ((f"{id_photo}.jpg", jpeg_size(jpeg)), (f"{id_photo}-thumb.jpg", (180, 180))):
            r = phone.get("upload/" + name)
            assert r.status == 200, f"GET upload/{name}: HTTP {r.status} {r.body[:200]!r}"
            assert r.header("Content-Type") == "image/jpeg", (name, r.headers)
            # every shipped web-server configuration sends these with a photo
            assert r.header("X-Content-Type-Options") == "nosniff", (name, r.headers)
            assert r.header("Content-Security-Policy") == "default-src 'none'; sandbox", (name, r.headers)
            assert jpeg_size(r.body) == size, (name, jpeg_size(r.body))
            if upload_dir is not None:
                on_disk = upload_dir / name
                assert on_disk.is_file(), f"{on_disk} missing"
                assert on_disk.read_bytes() == r.body
                assert on_disk.owner() == WWW, f"{on_disk} is owned by {on_disk.owner()}"

        if upload_dir is not None:
            # Anything else in the folder (a spool file: the original with
            # its EXIF, while an upload is checked) is never served.
            spool = upload_dir / ".spool-e2e123"
            spool.write_bytes(jpeg)
            chown_www(spool)
            try:
                for name in (spool.name, "notes.txt", f"{id_photo}.jpeg", f"{id_photo}-big.jpg"):
                    r = phone.get("upload/" + name)
                    assert r.status in (403, 404) and r.body[:2] != b"\xff\xd8", (name, r.status)
            finally:
                spool.unlink()

        r = phone.logout()
        assert r.status == 200, f"logout: HTTP {r.status}"
        assert phone.session_id is None, f"logout did not delete the cookie: {r.headers}"

        r = phone.upload(jpeg, title + " again")
        assert r.status == 200 and r.json() == {"error": "Authorization required"}, \
            f"upload after logout: HTTP {r.status} {r.body[:300]!r}"
    return id_photo


# ------------------------------------------------------------------- status

def status(base: str, timeout: float = 5) -> dict:
    """The server's status page, `?json&full`, through the web server."""
    with urllib.request.urlopen(base.rstrip("/") + "/ireporter-status?json&full", timeout=timeout) as r:
        return json.loads(r.read())


# --------------------------------------------------------------------- load

@dataclass
class Outcome:
    client: int
    kind: str
    started: float
    finished: float
    status: Optional[int] = None
    body: bytes = b""
    error: Optional[str] = None
    ok: bool = False


@dataclass
class Load:
    """`clients` phones, each sending requests back to back for `seconds`
    (at most `max_requests` each): by default stream, and a login every
    fourth request; with `uploads`, logged-in phones uploading photos; with
    `get_path`, GETs of that path (expected["get"]). Every answer must be
    exactly the expected one."""
    base_url: str
    user: str
    password: str
    expected: dict[str, bytes]
    clients: int = 8
    seconds: float = 2.0
    max_requests: int = 400
    # Stop a client at its first unexpected answer (once the server is
    # stopped, Apache answers 503 at once: no point hammering it).
    stop_on_failure: bool = False
    uploads: bool = False
    get_path: Optional[str] = None
    outcomes: list[Outcome] = field(default_factory=list)

    def _send(self, phone: AppClient, i: int) -> tuple[str, object]:
        if self.get_path is not None:
            return "get", phone.get(path=self.get_path)
        if self.uploads:
            return "upload", phone.upload(small_photo(), f"{self.user} load {threading.get_ident()} {i}")
        kind = "login" if i % 4 == 3 else "stream"
        return kind, (phone.login(self.user, self.password) if kind == "login" else phone.stream())

    def run(self, during: Optional[Callable[[], None]] = None, at: float = 0.7) -> list[Outcome]:
        start = time.monotonic()
        deadline = start + self.seconds
        lock = threading.Lock()

        expected = dict(self.expected, upload=SUCCESS)

        def client(n: int):
            phone = AppClient(Endpoint(self.base_url), timeout=20)
            if self.uploads:
                assert phone.login(self.user, self.password).status == 200 and phone.session_id
            try:
                for i in range(self.max_requests):
                    if time.monotonic() > deadline:
                        break
                    o = Outcome(n, "upload" if self.uploads else "stream", time.monotonic() - start, 0.0)
                    try:
                        o.kind, r = self._send(phone, i)
                        o.status, o.body = r.status, r.body
                        o.ok = r.status == 200 and r.body == expected[o.kind]
                    except Exception as e:  # noqa: BLE001 - every failure is an outcome
                        o.error = f"{type(e).__name__}: {e}"
                        phone.close()
                    o.finished = time.monotonic() - start
                    with lock:
                        self.outcomes.append(o)
                    if self.stop_on_failure and not o.ok:
                        break
            finally:
                phone.close()

        threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(self.clients)]
        for t in threads:
            t.start()
        if during is not None:
            time.sleep(max(0.0, start + at - time.monotonic()))
            during()
        for t in threads:
            t.join(self.seconds + 60)
        assert not any(t.is_alive() for t in threads), "a load client hung"
        return self.outcomes

    @staticmethod
    def failure_window(outcomes: list[Outcome]) -> tuple[int, float]:
        """How many requests failed, and the seconds from the first failed
        request's start to the last one's end (0: none failed)."""
        failed = [o for o in outcomes if not o.ok]
        if not failed:
            return 0, 0.0
        return len(failed), max(o.finished for o in failed) - min(o.started for o in failed)

    @staticmethod
    def describe(outcomes: list[Outcome], limit: int = 8) -> str:
        bad = [o for o in outcomes if not o.ok]
        lines = [f"{len(outcomes)} requests, {len(bad)} not as expected"]
        for o in bad[:limit]:
            lines.append(f"  client {o.client} {o.kind} t={o.started:.3f}-{o.finished:.3f}s: "
                         f"status={o.status} error={o.error} body={o.body[:120]!r}")
        return "\n".join(lines)


def prepare_load_user(base_url: str, tag: str) -> tuple[str, str, dict[str, bytes]]:
    """Registers a user; returns (name, password, expected bodies by kind)."""
    user, password = unique_name(tag), app_password("load")
    with AppClient(Endpoint(base_url), timeout=20) as phone:
        r = phone.register(user, password)
        login_body = r.body
        assert r.status == 200 and json.loads(login_body)["result"][0]["username"] == user, r
        r = phone.stream()
        assert r.status == 200, r
        stream_body = r.body
    return user, password, {"login": login_body, "stream": stream_body}


# ------------------------------------------------ state across processes

THROTTLED = re.compile(r'^\{"error":"Too many failed logins, try again in \d+ seconds"\}$')


def small_photo() -> bytes:
    """A real JPEG of 400x300 (tens of KB): many uploads at once, quickly."""
    if "small" not in _photo_cache:
        _photo_cache["small"] = imagemagick("-seed", "3", "-size", "400x300", "plasma:fractal", "-quality", "85",
                                            "jpeg:-")
    return _photo_cache["small"]


def pushed_out(phone: "AppClient", user_id: str, title: str, newest: list[dict]) -> bool:
    """True when the photo `title` (the user's newest) is missing from the
    stream's `newest` 50 only because 50 newer photos were committed before
    that stream was answered (a phone held up under load), not because the
    stream was stale."""
    r = phone.call({"command": "stream", "IdUser": user_id, "count": "1"})
    mine = r.json()["result"] if r.status == 200 else []
    return (len(newest) == 50 and len(mine) == 1 and mine[0]["title"] == title
            and int(mine[0]["IdPhoto"]) < min(int(row["IdPhoto"]) for row in newest))


def phones_upload_then_stream(upload_url: str, stream_url: Optional[str] = None, phones: int = 8, uploads: int = 10,
                              tag: str = "rw", timeout: float = 120) -> list[str]:
    """`phones` phones at once, each registering, then uploading `uploads`
    photos, each followed at once by a stream (through `stream_url`, another
    process or server, when given): the app shows its user the new photo in
    that stream. Returns what went wrong: photos missing from their
    uploader's next stream, failed answers (empty: all well)."""
    import concurrent.futures as cf
    jpeg = small_photo()
    deadline = time.monotonic() + timeout

    def phone(n: int) -> list[str]:
        problems = []
        user = unique_name(f"{tag}{n}")
        with AppClient(Endpoint(upload_url), timeout=30) as up, AppClient(Endpoint(stream_url or upload_url),
                                                                          timeout=30) as down:
            r = up.register(user, app_password("rw"))
            if r.status != 200 or b'"result"' not in r.body:
                return [f"phone {n}: register: {r.status} {r.body[:200]!r}"]
            user_id = r.json()["result"][0]["IdUser"]
            down.jar = up.jar
            for i in range(uploads):
                if time.monotonic() > deadline:
                    return problems + [f"phone {n}: out of time after {i} uploads"]
                title = f"{user} photo {i}"
                r = up.upload(jpeg, title)
                if r.status != 200 or r.body != SUCCESS:
                    problems.append(f"phone {n}: upload {i}: {r.status} {r.body[:200]!r}")
                    continue
                r = down.stream()
                rows = r.json()["result"] if r.status == 200 else []
                titles = [row["title"] for row in rows]
                if title not in titles and not pushed_out(down, user_id, title, rows):
                    problems.append(f"phone {n}: {title!r} missing from the uploader's next stream "
                                    f"(HTTP {r.status}, newest: {titles[:3]})")
        return problems

    with cf.ThreadPoolExecutor(phones) as pool:
        return [p for problems in pool.map(phone, range(phones)) for p in problems]


def failed_logins_across_processes(base_urls: list[str], tag: str = "throttle", pairs: int = 3) -> dict:
    """One account, one address: 2 x `pairs` wrong passwords, two at a time
    (so that two processes serve them), taking turns over `base_urls`
    (several servers), each tagged `?attempt=N` in the URI; then the right
    password. 5 failures block the name from that address for 1 s, the 6th
    for 2 s: "throttled" says whether any answer (the 6th attempt's or the
    right password's) was the throttle's, which only happens when the
    processes share the count (on a busy machine a CGI process per request
    can take longer than the block, so the right password may come after it).
    Returns {"answers": [(uri, body)], "last": body, "throttled": bool}."""
    import concurrent.futures as cf
    user, password = unique_name(tag), app_password("right")
    with AppClient(Endpoint(base_urls[0]), timeout=30) as phone:
        r = phone.register(user, password)
        assert r.status == 200 and b'"result"' in r.body, r
    answers = []

    def attempt(n: int):
        url = base_urls[n % len(base_urls)]
        uri = f"{Endpoint(url).path()}?attempt={user}-{n}"
        with AppClient(Endpoint(url), keep_alive=False, timeout=30) as phone:
            r = phone.request("POST", uri, multipart_body([("command", "login"), ("username", user),
                                                           ("password", app_password("wrong"))]),
                              multipart_content_type())
            return uri, r.body

    with cf.ThreadPoolExecutor(2) as pool:
        for round_ in range(pairs):
            answers += list(pool.map(attempt, (2 * round_, 2 * round_ + 1)))
    with AppClient(Endpoint(base_urls[-1]), timeout=30) as phone:
        last = phone.login(user, password).body
    throttled = any(THROTTLED.match(body.decode()) for body in [body for _, body in answers] + [last])
    return {"answers": answers, "last": last, "user": user, "throttled": throttled}


def pids_in_access_log(log: Path, marker: str) -> set[int]:
    """The worker pids that served the requests whose URI holds `marker`."""
    return {int(m.group(1)) for line in log.read_text().splitlines() if marker in line
            for m in [re.search(r" pid=(\d+)", line)] if m}
