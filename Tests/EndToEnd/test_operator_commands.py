"""The operator's long commands on a large installation: `ireporter migrate`,
`migrate-passwords`, `repair` and `search-index` show their progress (on
stderr: done of total, rate and time left, redrawn in place on a terminal,
a line every five seconds otherwise), stop on Ctrl-C
(SIGINT) with nothing half-done, and the same command run again goes on
where it stopped. The binary as an operator runs it (as root, a
configuration file), against a private MariaDB (servers.start_database),
on tables and folders big enough to take seconds.

    IREPORTER_BINARY=.build/release/ireporter python3 -m pytest --noconftest -q Tests/EndToEnd/test_operator_commands.py
"""
from __future__ import annotations

import os
import pty
import pwd
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import servers

# What `ireporter migrate` applies: every file of sql/migrations (the binary carries them).
MIGRATIONS = sorted(path.stem for path in (servers.REPO / "sql" / "migrations").glob("*.sql"))


@pytest.fixture(scope="module")
def site():
    binary = servers.binary()
    with servers.workspace("operator") as space:
        db, base = space.db, space.base
        if db.directory is None:
            pytest.fail("these tests need a database they can reach as root: unset IREPORTER_TEST_DB_URL",
                        pytrace=False)
        upload, sessions = servers.app_dirs(base)
        conf = base / "ireporter.conf"
        # Cheap Argon2 parameters: thousands of hashes in seconds.
        conf.write_text(f"db_url = {db.url}\nupload_dir = {upload}\nsession_dir = {sessions}\n"
                        "password_hash_memory_kib = 1024\npassword_hash_iterations = 1\n")
        yield {"binary": binary, "db": db, "conf": conf, "upload": upload, "base": base}


def run(site, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(site["binary"]), *args, "--config", str(site["conf"])], env=servers.clean_env(**env),
                          capture_output=True, text=True, timeout=600)


def stopped_midway(site, *args: str, when: str) -> tuple[int, str]:
    """Runs the command, sends SIGINT once a line containing `when` (a
    progress line) is out, and returns its exit status and output."""
    proc = subprocess.Popen([str(site["binary"]), *args, "--config", str(site["conf"])], env=servers.clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 300
    try:
        for line in proc.stdout:
            lines.append(line)
            if when in line:
                proc.send_signal(signal.SIGINT)
                break
            assert time.monotonic() < deadline, "".join(lines)
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return proc.returncode, "".join(lines) + rest


def test_migrate_shows_progress_stops_and_goes_on(site):
    db = site["db"]
    # The PHP version's MyISAM table with two million accounts: widening
    # pass, indexing and then uniquely indexing username copy it (seconds
    # each), and MariaDB reports a copy's progress once a second: the stop
    # comes at the first migration slow enough to report (001 on most
    # machines, a later one on a fast machine).
    db.sql("DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
           + "INSERT INTO login (username, pass) SELECT CONCAT('user', seq), SHA1(seq) FROM seq_1_to_2097152;\n")
    assert db.sql("SELECT COUNT(*) FROM login").strip() == str(2 ** 21)
    width = "SELECT CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'iReport' " \
            "AND TABLE_NAME = 'login' AND COLUMN_NAME = 'pass'"

    status, out = stopped_midway(site, "migrate", when=": stage")
    assert status == 130, out
    reporting = re.search(r"^migrate: (\S+): stage", out, re.M).group(1)
    # Stopped mid-copy: undone by the server. (A stop in the statement's
    # last instants cannot interrupt it: then it is applied whole, and the
    # stop comes before the next one.)
    stopped = f"stopped ({reporting} not applied: the server undid it)" in out
    if not stopped:
        # (the next one not applied yet: those already applied are said so first)
        assert f"{reporting}: applied" in out and re.search(r"stopped \(\S+ not applied", out), out
    if reporting == "001-widen-pass" and stopped:
        assert db.sql(width).strip() == "45", "a stopped migration leaves the table as it was"

    p = run(site, "migrate")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (f"{reporting}: applied in" if stopped else f"{reporting}: already applied") in p.stdout, p.stdout
    assert db.sql(width).strip() == "255"
    p = run(site, "migrate")
    assert p.stdout.splitlines() == [f"{name}: already applied" for name in MIGRATIONS], p.stdout


def test_migrate_passwords_shows_progress_stops_and_goes_on(site):
    db = site["db"]
    rows = ",".join(f"('user{n}', '{servers.app_password(str(n))}')" for n in range(4000))
    db.sql("DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
           + f"INSERT INTO login (username, pass) VALUES {rows};\n")
    legacy = "SELECT COUNT(*) FROM login WHERE pass NOT LIKE BINARY '$argon2id$%'"

    status, out = stopped_midway(site, "migrate-passwords", when="re-hashing passwords:")
    assert status == 130 and "migrate-passwords: stopped (" in out, out
    left = int(db.sql(legacy))
    assert 0 < left < 4000, f"{left} left: the stop was not in the middle\n{out}"

    p = run(site, "migrate-passwords")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"re-hashed {left} of {left} passwords stored as sent" in p.stdout, p.stdout
    assert db.sql(legacy).strip() == "0"


def test_repair_shows_progress_stops_and_goes_on(site):
    db, upload = site["db"], site["upload"]
    db.sql("DROP TABLE IF EXISTS login, photos, photos_removed;\n" + (servers.REPO / "sql" / "schema.sql").read_text()
           + "INSERT INTO photos (title, IdUser) VALUES " + ",".join(["('seeded', 1)"] * 6000) + ";\n")
    source = site["base"] / "photo.jpg"
    source.write_bytes(servers.small_photo())
    ids = db.sql("SELECT IdPhoto FROM photos").split()
    for id_photo in ids:  # photos without their thumbnails: repair makes them (milliseconds each)
        os.link(source, upload / f"{id_photo}.jpg")
    status, out = stopped_midway(site, "repair", "--grace", "0", when="making thumbnails:")
    assert status == 130 and "repair: stopped (" in out, out
    made = len(list(upload.glob("*-thumb.jpg")))
    assert 0 < made < len(ids), f"{made} thumbnails made before the stop\n{out}"

    p = run(site, "repair", "--grace", "0")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{len(ids) - made} missing thumbnails (made)" in p.stdout, p.stdout
    assert len(list(upload.glob("*-thumb.jpg"))) == len(ids)
    assert "0 missing thumbnails" in run(site, "repair", "--dry-run").stdout


def test_repair_follows_legacy_photo_urls(site):
    """`legacy_photo_urls = off`: repair moves the 2012-era photos into the
    tree (each given a secret) and removes their guessable names; `on` gives
    the names and thumbnails back."""
    db, upload = site["db"], site["upload"]
    db.sql("DROP TABLE IF EXISTS login, photos, photos_removed, photo_secrets;\n"
           + (servers.REPO / "sql" / "schema.sql").read_text()
           + "INSERT INTO photos (title, IdUser) VALUES ('one', 1), ('two', 1);\n")
    for path in list(upload.iterdir()):
        if path.is_file():
            path.unlink()
    ids = db.sql("SELECT IdPhoto FROM photos").split()
    for id_photo in ids:
        (upload / f"{id_photo}.jpg").write_bytes(servers.small_photo())
    assert run(site, "migrate").returncode == 0
    secrets = dict(line.split() for line in db.sql("SELECT IdPhoto, secret FROM photo_secrets").splitlines())
    assert sorted(secrets) == sorted(ids), "migration 006 gives the photos stored before it their secrets"

    p = run(site, "repair", "--grace", "0", IREPORTER_LEGACY_PHOTO_URLS="off")
    assert p.returncode == 0 and "2 photos to rename in the tree (renamed)" in p.stdout, p.stdout + p.stderr
    assert not list(upload.glob("*.jpg")), "no guessable name left"
    leaf = upload / "photos" / "000" / "000"
    for id_photo in ids:
        assert (leaf / f"{id_photo}_{secrets[id_photo]}_o.jpg").read_bytes() == servers.small_photo()
    # Run as root, the folders it made are the server's (the upload folder's owner) to write in.
    www = pwd.getpwnam("www-data").pw_uid
    assert [p.stat().st_uid for p in (upload / "photos" / "000", leaf)] == [www, www]
    assert "0 photos to rename" in run(site, "repair", "--dry-run", IREPORTER_LEGACY_PHOTO_URLS="off").stdout

    p = run(site, "repair", "--grace", "0")
    assert p.returncode == 0 and "2 photos to rename in the tree (renamed)" in p.stdout, p.stdout + p.stderr
    assert sorted(path.name for path in upload.glob("*.jpg")) == sorted(
        [f"{i}.jpg" for i in ids] + [f"{i}-thumb.jpg" for i in ids])


# Photos to index: seconds of work (progress lines), even on an idle machine.
INDEXED = 400_000


def test_search_index_shows_progress_stops_and_goes_on(site):
    db = site["db"]
    # Rows as the PHP version stores them: no search words yet.
    db.sql("DROP TABLE IF EXISTS login, photos, photo_words, photo_words_backfill;\n"
           + (servers.REPO / "sql" / "schema.sql").read_text()
           + (servers.REPO / "sql" / "migrations" / "005-photo-words.sql").read_text()
           + "INSERT INTO login (username, pass) VALUES ('zoë', 'x');\n"
           + f"INSERT INTO photos (title, IdUser) SELECT CONCAT('Harbour ', seq), 1 FROM seq_1_to_{INDEXED};\n")
    status, out = stopped_midway(site, "search-index", when="search-index: photos indexed")
    assert status == 130 and "search-index: stopped (" in out, out
    assert re.search(rf"^search-index: photos indexed: \d+ of {INDEXED} \(\d+%\), [\d.]+/s, about \d+ (s|min) left$", out, re.M), out
    done = int(db.sql("SELECT COUNT(DISTINCT IdPhoto) FROM photo_words"))
    assert 0 < done < INDEXED, f"{done} photos indexed before the stop\n{out}"
    # (the first photo is IdPhoto 2)
    assert int(db.sql("SELECT next_photo FROM photo_words_backfill")) == done + 2, "each batch whole, and where it stopped"

    p = run(site, "search-index")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == f"search index complete: {INDEXED - done} photos indexed in this run\n", "progress is on stderr"
    assert int(db.sql("SELECT COUNT(*) FROM photo_words WHERE word = 'zoe'")) == INDEXED
    assert int(db.sql("SELECT COUNT(*) FROM photo_words WHERE word = 'harbour'")) == INDEXED


def test_progress_on_a_terminal_is_redrawn_in_place(site):
    """stderr a terminal (a pty): one line rewritten (carriage return, erase
    to its end) with done of total, rate and time left; stdout keeps the
    result alone. (The photos of the test above, indexed again.)"""
    terminal, child_side = pty.openpty()
    proc = subprocess.Popen([str(site["binary"]), "search-index", "--restart", "--config", str(site["conf"])],
                            env=servers.clean_env(), stdout=subprocess.PIPE, stderr=child_side)
    os.close(child_side)
    drawn = bytearray()

    def read_terminal():
        while True:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # EIO: the command ended
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(10)
    os.close(terminal)
    assert proc.returncode == 0, (out, bytes(drawn))
    assert out == f"search index complete: {INDEXED} photos indexed in this run\n".encode(), out
    lines = re.findall(rb"\rsearch-index: photos indexed: (\d+) of %d \(" % INDEXED + rb"\d+%\), [\d.]+/s, about \d+ (?:s|min) left\x1b\[K", drawn)
    assert len(lines) >= 2 and b"\n" not in drawn.rstrip(b"\r\n"), bytes(drawn)


def test_duplicate_usernames_hold_back_the_unique_index_until_the_operator_chooses(site):
    db = site["db"]
    # The PHP version's tables, where two registrations of one name could both pass.
    db.sql("DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
           + "INSERT INTO login (username, pass) VALUES ('carol', 'a'), ('bob', 'b'), ('CAROL ', 'c');\n")
    p = run(site, "migrate")
    assert p.returncode == 1, p.stdout + p.stderr
    assert '007-unique-username: NOT applied: 1 usernames are held by several accounts ("carol" (IdUser 1, 3))' \
        in p.stdout, p.stdout
    assert "002-index-username: applied" in p.stdout, "the others are applied all the same"
    assert db.sql("SELECT COUNT(*) FROM login").strip() == "3", "nothing merged"

    p = run(site, "duplicate-usernames")
    assert p.returncode == 0 and p.stdout.splitlines() == [
        '"carol" (IdUser 1, 3): the oldest keeps the name; --rename renames 3', "1 usernames held by several accounts"], p.stdout
    p = run(site, "duplicate-usernames", "--rename")
    assert p.returncode == 0 and p.stdout.splitlines() == [
        'IdUser 3: "CAROL " renamed "carol~3"', "1 accounts renamed, 0 left"], p.stdout

    p = run(site, "migrate")
    assert p.returncode == 0 and "007-unique-username: applied" in p.stdout, p.stdout + p.stderr
    assert db.sql("SELECT IdUser, username, pass FROM login ORDER BY IdUser").splitlines() == [
        "1\tcarol\ta", "2\tbob\tb", "3\tcarol~3\tc"]
    assert run(site, "duplicate-usernames").stdout.splitlines() == ["0 usernames held by several accounts"]


def test_a_migration_mariadb_refuses_leaves_the_others_applied(site):
    """Each migration stands alone: one whose statement MariaDB refuses (here
    004's index, on a `photos` without IdUser; an older MariaDB's RANDOM_BYTES
    in 006 alike) is reported, the later ones are applied, and migrate exits 1."""
    db = site["db"]
    original = "DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
    db.sql(original + "ALTER TABLE photos DROP COLUMN IdUser;\n")
    try:
        p = run(site, "migrate")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "004-index-photos-user: NOT applied: " in p.stdout and "IdUser" in p.stdout, p.stdout
        assert re.search(r"^015-read-markers: (applied in|already applied)", p.stdout, re.M), p.stdout
        assert "001-widen-pass: applied" in p.stdout, "the ones before it too"
    finally:
        db.sql(original)  # the shared database's next start applies the migrations again


def test_migrate_on_a_database_without_the_2012_tables_applies_nothing(site):
    """A new host's empty database, `migrate` run before the dump is loaded:
    006 made its table and failed to fill it, and once the dump was in a
    second run said "already applied" with no photo's secret. Now nothing
    is applied until `login` and `photos` are there."""
    db = site["db"]
    original = "DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
    db.sql("DROP TABLE IF EXISTS login, photos, photo_secrets;\n")
    try:
        p = run(site, "migrate")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "migrate: nothing applied: the tables login, photos are missing; load sql/schema.sql" in p.stderr, p.stderr
        assert db.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'iReport' "
                      "AND TABLE_NAME = 'photo_secrets'").strip() == "0", "006 made nothing"
    finally:
        db.sql(original)  # the shared database's next start applies the migrations again


def test_convert_innodb_converts_the_original_tables_with_their_rows(site):
    db = site["db"]
    db.sql("DROP TABLE IF EXISTS login, photos;\n" + (servers.REPO / "sql" / "original-myisam.sql").read_text()
           + "INSERT INTO login (username, pass) VALUES ('alice', 'x');\n"
           + "INSERT INTO photos (title, IdUser) SELECT CONCAT('photo ', seq), 1 FROM seq_1_to_5000;\n")
    engines = "SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'iReport' " \
              "AND TABLE_NAME IN ('login', 'photos') ORDER BY TABLE_NAME"
    p = run(site, "convert-innodb", "--dry-run")
    assert p.returncode == 0 and p.stdout.splitlines() == [
        "login: would be converted to InnoDB (about 1 rows)",
        "photos: would be converted to InnoDB (about 5000 rows)"], p.stdout
    assert db.sql(engines).splitlines() == ["login\tMyISAM", "photos\tMyISAM"], "a dry run changes nothing"

    p = run(site, "convert-innodb")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "login: converted to InnoDB" in p.stdout and "photos: converted to InnoDB" in p.stdout, p.stdout
    assert db.sql(engines).splitlines() == ["login\tInnoDB", "photos\tInnoDB"]
    assert db.sql("SELECT COUNT(*), MIN(IdPhoto), MAX(IdPhoto) FROM photos").split() == ["5000", "2", "5001"]
    assert run(site, "convert-innodb").stdout.splitlines() == ["every table is InnoDB already"]
