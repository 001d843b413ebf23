#!/usr/bin/env python3
"""seed.py - the benchmark data set, identical for the PHP original and ours.

  seed.py --mysql "mariadb --defaults-file=/tmp/ref-mariadb/my.cnf -u root iReport" \\
          --schema /work/shared/reference/sql/schema.sql --users-out users.txt
  seed.py --mysql ... --restore-plain     login.pass back to the seeded values, varchar(45)
  seed.py --mysql ... --dump-hashes F     save (IdUser, pass) once passwords are hashed
  seed.py --mysql ... --apply-hashes F    widen login.pass and load F (made by --dump-hashes)
  seed.py --mysql ... --explain           EXPLAIN of the stream query

Seeding DROPS and recreates `login` and `photos` from the given schema (the
PHP original's: MyISAM, pass varchar(45), photos AUTO_INCREMENT=2), so every
run starts from the same freshly written tables (MariaDB plans the stream
query differently on a churned table: see the reference's RESULTS.md), then:

  --users N  (1000)   user0001..userN, password = hex SHA1('pass<i>') (40
                      characters, like the app's salted SHA1), IdUser = i
  --photos M (10000)  IdPhoto 2..M+1, title 'Photo <n>', owner
                      1 + (n*7919 mod N), so the JOIN touches every user

Deterministic, no randomness. Only the mariadb command-line client is used
(the statements go to its stdin). No image files are made for the seeded
photos: stream only reads the database. --users-out writes "username
password" lines for bench/lua/login.lua.
"""
import argparse
import hashlib
import shlex
import subprocess
import sys

STREAM_SQL = ("SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l "
              "ON (l.IdUser = p.IdUser) ORDER BY IdPhoto DESC LIMIT 50")


def mysql(cmd, sql, extra=()):
    r = subprocess.run(shlex.split(cmd) + list(extra), input=sql.encode(), capture_output=True)
    if r.returncode != 0:
        sys.exit(f"seed.py: mariadb failed: {r.stderr.decode(errors='replace')}")
    return r.stdout.decode(errors="replace")


def password(i):
    return hashlib.sha1(f"pass{i}".encode()).hexdigest()


def username(i):
    return f"user{i:04d}"


def seed(a):
    schema = open(a.schema).read()
    parts = ["DROP TABLE IF EXISTS `login`, `photos`;", schema]
    for start in range(1, a.users + 1, 1000):
        rows = ",".join(f"({i},'{username(i)}','{password(i)}')"
                        for i in range(start, min(start + 1000, a.users + 1)))
        parts.append(f"INSERT INTO login (IdUser, username, pass) VALUES {rows};")
    for start in range(1, a.photos + 1, 2000):
        rows = ",".join(f"({n + 1},'Photo {n}',{1 + (n * 7919) % a.users})"
                        for n in range(start, min(start + 2000, a.photos + 1)))
        parts.append(f"INSERT INTO photos (IdPhoto, title, IdUser) VALUES {rows};")
    # The schema's AUTO_INCREMENT=2 start: the next upload gets IdPhoto M+2.
    parts.append(f"ALTER TABLE photos AUTO_INCREMENT = {a.photos + 2};")
    mysql(a.mysql, "\n".join(parts))
    if a.users_out:
        with open(a.users_out, "w") as f:
            for i in range(1, a.users + 1):
                f.write(f"{username(i)} {password(i)}\n")
    print(mysql(a.mysql, "SELECT COUNT(*) users, MIN(IdUser), MAX(IdUser) FROM login;"
                         "SELECT COUNT(*) photos, MIN(IdPhoto), MAX(IdPhoto) FROM photos;", ["-t"]).rstrip())


def restore_plain(a):
    # The column narrowed back to the original varchar(45) first (the hashes
    # are cut, then overwritten): a server only stores hashes in a column
    # wide enough for them. The caller makes sure no login is in flight.
    mysql(a.mysql, "ALTER TABLE login MODIFY pass varchar(45) CHARACTER SET latin1 NOT NULL;"
                   "UPDATE login SET pass = SHA1(CONCAT('pass', IdUser));")
    out = mysql(a.mysql, "SELECT COUNT(*) FROM login WHERE pass <> SHA1(CONCAT('pass', IdUser)) "
                         "OR pass LIKE '$argon2%';", ["-N"]).strip()
    if out != "0":
        sys.exit(f"seed.py: {out} passwords not restored")
    print("login.pass: plain seeded values, varchar(45)")


def dump_hashes(a):
    out = mysql(a.mysql, "SELECT IdUser, pass FROM login ORDER BY IdUser;", ["-N"])
    rows = [line.split("\t") for line in out.splitlines() if line]
    if not rows or not all(r[1].startswith("$argon2id$") for r in rows):
        sys.exit("seed.py: not every password is an Argon2id hash; nothing dumped")
    with open(a.dump_hashes, "w") as f:
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\n")
    print(f"{len(rows)} hashes saved to {a.dump_hashes}")


def apply_hashes(a):
    rows = [line.rstrip("\n").split("\t") for line in open(a.apply_hashes) if line.strip()]
    parts = ["ALTER TABLE login MODIFY pass varchar(255) CHARACTER SET latin1 NOT NULL;",
             "CREATE TEMPORARY TABLE h (IdUser int PRIMARY KEY, pass varchar(255) CHARACTER SET latin1);"]
    for start in range(0, len(rows), 500):
        vals = ",".join(f"({int(r[0])},'{r[1]}')" for r in rows[start:start + 500])
        parts.append(f"INSERT INTO h VALUES {vals};")
    parts.append("UPDATE login l JOIN h ON h.IdUser = l.IdUser SET l.pass = h.pass;")
    mysql(a.mysql, "\n".join(parts))
    n = mysql(a.mysql, "SELECT COUNT(*) FROM login WHERE pass LIKE '$argon2id$%';", ["-N"]).strip()
    print(f"login.pass: varchar(255), {n} Argon2id hashes loaded from {a.apply_hashes}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mysql", required=True, help="mariadb client command line, database included")
    ap.add_argument("--schema", help="schema file (CREATE TABLE login, photos)")
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--photos", type=int, default=10000)
    ap.add_argument("--users-out")
    ap.add_argument("--restore-plain", action="store_true")
    ap.add_argument("--dump-hashes")
    ap.add_argument("--apply-hashes")
    ap.add_argument("--explain", action="store_true")
    a = ap.parse_args()
    if a.restore_plain:
        restore_plain(a)
    elif a.dump_hashes:
        dump_hashes(a)
    elif a.apply_hashes:
        apply_hashes(a)
    elif a.explain:
        print(mysql(a.mysql, f"EXPLAIN {STREAM_SQL};", ["-t"]).rstrip())
    else:
        if not a.schema:
            ap.error("--schema is needed to seed")
        seed(a)


if __name__ == "__main__":
    main()
