"""The operator's defaults (docs/SECURITY.md, "The operator's defaults"):

  - scripts/stack.sh runs as root in a predictable /tmp path: a run folder
    that someone else made there (with links in it) is refused, and the file
    a link pointed at is left alone;
  - the private MariaDB's password is random (scripts/mariadb.sh url), and
    --check-config warns about the well-known ireport:ireport and about a
    session folder that others may write to.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest -q Tests/EndToEnd/test_operator_defaults.py
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import servers

NOBODY = 65534


def test_stack_refuses_a_run_folder_owned_by_someone_else(tmp_path):
    servers.need_root()
    # The attack: another user makes /tmp/<run dir> first, with the
    # configuration file name linked to a file of root's.
    target = tmp_path / "roots-file"
    target.write_text("root's own\n")
    target.chmod(0o600)
    run_dir = tmp_path / "ireporter-run"
    run_dir.mkdir()
    (run_dir / "ireporter.conf").symlink_to(target)
    os.chown(run_dir, NOBODY, NOBODY)
    os.lchown(run_dir / "ireporter.conf", NOBODY, NOBODY)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IREPORTER_")}
    env.update(RUN_DIR=str(run_dir), SKIP_BUILD="1", PORT="8099", DB_PORT="3399")
    p = subprocess.run([str(servers.REPO / "scripts/stack.sh"), "up"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "not root" in p.stderr and "refusing" in p.stderr, p.stderr
    assert target.read_text() == "root's own\n" and (target.stat().st_mode & 0o777) == 0o600
    assert sorted(os.listdir(run_dir)) == ["ireporter.conf"]


def test_stack_refuses_a_run_folder_that_is_a_link(tmp_path):
    servers.need_root()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "ireporter-run"
    link.symlink_to(elsewhere)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IREPORTER_")}
    env.update(RUN_DIR=str(link), SKIP_BUILD="1", PORT="8099", DB_PORT="3399")
    p = subprocess.run([str(servers.REPO / "scripts/stack.sh"), "up"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0 and "not a directory" in p.stderr, p.stdout + p.stderr
    assert os.listdir(elsewhere) == []


def check_config(binary: Path, conf: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "--config", str(conf), "--check-config"], env=servers.clean_env(),
                          capture_output=True, text=True, timeout=30)


def check_password_file(directory: Path) -> str:
    """scripts/mariadb.sh's password: random hex, root's own, 0600."""
    path = directory / "ireport.password"
    password = path.read_text().strip()
    assert len(password) == 32 and int(password, 16) >= 0, password
    st = path.stat()
    assert st.st_uid == 0 and (st.st_mode & 0o777) == 0o600
    return password


def test_the_private_database_password_is_random():
    """The deployment tests' MariaDB (scripts/mariadb.sh) and the test stack
    (scripts/stack.sh, IREPORTER_RUN_DIR): a random password, which the
    stack's configuration uses; never ireport:ireport."""
    db = servers.start_database()
    try:
        assert "ireport:ireport@" not in db.url, db.url
        if db.directory is not None:
            assert f"ireport:{check_password_file(db.directory)}@" in db.url
    finally:
        db.stop()
    run_dir = Path(os.environ.get("IREPORTER_RUN_DIR", "/nonexistent"))
    if (run_dir / "mariadb" / "ireport.password").exists():
        password = check_password_file(run_dir / "mariadb")
        assert f"db_url = mysql://ireport:{password}@" in (run_dir / "ireporter.conf").read_text()


def test_check_config_warns_about_the_well_known_password_and_open_session_folders(tmp_path):
    servers.need_root()
    binary = servers.install_binary(servers.binary(), tmp_path / "bin" / "ireporter")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    sessions.chmod(0o1733)  # Debian's /var/lib/php/sessions
    conf = tmp_path / "ireporter.conf"
    conf.write_text(f"db_url = mysql://ireport:ireport@localhost/iReport\nsession_dir = {sessions}\n"
                    f"upload_dir = {tmp_path}\n")
    p = check_config(binary, conf)
    assert p.returncode == 0, p.stderr
    assert "well-known" in p.stderr, p.stderr
    assert f"{sessions} may be written by other users" in p.stderr, p.stderr

    sessions.chmod(0o700)
    conf.write_text(f"db_url = mysql://ireport:s3cret-{os.getpid()}@localhost/iReport\n"
                    f"session_dir = {sessions}\nupload_dir = {tmp_path}\n")
    p = check_config(binary, conf)
    assert p.returncode == 0 and "warning" not in p.stderr.lower(), p.stderr


def test_the_socket_goes_to_listen_group_and_user_as_configured():
    """`user = www-data` with `listen_group`: the web server's group gets
    the socket (it was given back to www-data's own group when the server
    switched user); `listen_owner` alone: the group is `user`'s."""
    servers.need_root()
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="ireporter-socket-"))
    try:
        base.chmod(0o755)
        for folder in ("upload", "sessions"):
            (base / folder).mkdir()
            os.chown(base / folder, servers.pwd_id("www-data"), servers.grp_id("www-data"))
        for n, (extra, owner, group) in enumerate([
                ("listen_group = nogroup\n", "www-data", "nogroup"),
                ("listen_owner = nobody\n", "nobody", "www-data")]):
            socket = base / f"fcgi-{n}.sock"
            conf = base / f"ireporter-{n}.conf"
            conf.write_text(f"listen = {socket}\nuser = www-data\nworkers = 1\nupload_dir = {base}/upload\n"
                            f"session_dir = {base}/sessions\ndb_url = mysql://nobody:@127.0.0.1:1/none\n" + extra)
            server = subprocess.Popen([str(servers.binary()), "--config", str(conf)], env=servers.clean_env(),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                def switched() -> bool:  # the socket's owners are set before the server becomes www-data
                    uid = next(line.split()[2] for line in Path(f"/proc/{server.pid}/status").read_text().splitlines()
                               if line.startswith("Uid:"))
                    return int(uid) == servers.pwd_id("www-data")
                servers.wait_for(lambda: server.poll() is not None or switched(), timeout=20, what="the switch to www-data")
                assert server.poll() is None, server.stderr.read()
                st = socket.stat()
                assert (st.st_uid, st.st_gid) == (servers.pwd_id(owner), servers.grp_id(group)), (extra, st)
            finally:
                server.terminate()
                server.wait(timeout=30)
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)
