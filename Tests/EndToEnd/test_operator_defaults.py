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
