#!/bin/bash
# bench/search/fulltext.sh - the design not taken, measured: MariaDB FULLTEXT
# (InnoDB, boolean mode) on a side table of 1,000,000 rows of 4-word ASCII
# titles (every word prefixed with "x" so that no word is under
# innodb_ft_min_token_size or a stopword), against the same queries as
# LIKE on the titles. Prints the count of matches and, from SHOW PROFILES,
# the seconds of: newest 50, newest 50 below an id, the 50 most relevant.
# Its own private MariaDB (FT_DIR, FT_PORT), stopped at the end. Run as root
# from the repository, under the test lock:
#   flock /tmp/ireporter-make-test.lock bench/search/fulltext.sh
set -e
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
D="${FT_DIR:-/tmp/ireporter-fulltext-probe}"; P="${FT_PORT:-3396}"
scripts/mariadb.sh start $D $P >/dev/null
SQL() { scripts/mariadb.sh sql $D $P "$@"; }
SQL -e "SELECT @@innodb_ft_min_token_size, @@innodb_ft_max_token_size, @@version"
SQL <<'Q'
DROP TABLE IF EXISTS ps, ph;
CREATE TABLE ph (IdPhoto int PRIMARY KEY, title varchar(100) CHARACTER SET latin1 NOT NULL, IdUser int NOT NULL) ENGINE=InnoDB;
INSERT INTO ph SELECT seq, CONCAT_WS(' ', ELT(1+seq%37,'sunset','beach','mountain','city','river','night','street','zoe','coffee','dog','cat','market','bridge','forest','snow','rain','lake','tower','garden','festival','train','harbor','sunrise','desert','island','castle','museum','park','sky','cloud','flower','tree','road','car','boat','food','party'), ELT(1+(seq DIV 37)%41,'over','in','at','with','the','of','red','blue','green','golden','old','new','big','little','quiet','busy','early','late','winter','summer','spring','autumn','morning','evening','paris','tokyo','berlin','london','rome','madrid','lisbon','oslo','vienna','prague','dublin','athens','cairo','lima','quito','seoul','hanoi'), ELT(1+(seq DIV 1517)%53, 'photo','shot','view','scene','moment','walk','trip','day','light','colors','picture','memory','time','story','life','dream','world','home','friends','family','love','joy','peace','calm','wild','free','soft','bright','dark','deep','high','low','far','near','first','last','best','only','true','pure','raw','cold','warm','hot','fresh','clear','fog','mist','dust','gold','silver','ruby','jade'), CONCAT('w', seq % 100000)), 1 + seq % 1000 FROM seq_1_to_1000000;
CREATE TABLE ps (IdPhoto int PRIMARY KEY, words varchar(400) CHARACTER SET latin1 NOT NULL) ENGINE=InnoDB;
INSERT INTO ps SELECT IdPhoto, CONCAT('x', REPLACE(title, ' ', ' x')) FROM ph;
Q
time SQL -e "ALTER TABLE ps ADD FULLTEXT INDEX words (words)"
for q in "+xsun*" "+xsunset" "+xa*" "+xw1*" "+xw12345" "+xzoe* +xparis*" "+xsun* +xtokyo* +xgold*"; do
  echo "== $q"
  SQL -e "SELECT COUNT(*) FROM ps WHERE MATCH(words) AGAINST('$q' IN BOOLEAN MODE)"
  SQL -e "SET profiling=1; SELECT p.IdPhoto FROM ps p WHERE MATCH(words) AGAINST('$q' IN BOOLEAN MODE) ORDER BY IdPhoto DESC LIMIT 50; SELECT p.IdPhoto FROM ps p WHERE MATCH(words) AGAINST('$q' IN BOOLEAN MODE) AND IdPhoto < 500000 ORDER BY IdPhoto DESC LIMIT 50; SELECT IdPhoto, MATCH(words) AGAINST('$q' IN BOOLEAN MODE) s FROM ps p WHERE MATCH(words) AGAINST('$q' IN BOOLEAN MODE) ORDER BY s DESC LIMIT 50; SHOW PROFILES" | grep -E '^[0-9]+\s+[0-9.]+\s+SELECT' | awk '{print $1, $2}'
done
SQL -e "SET profiling=1; SELECT IdPhoto FROM ph WHERE title LIKE '%sunset%' ORDER BY IdPhoto DESC LIMIT 50; SELECT IdPhoto FROM ph WHERE title LIKE '%w12345%' ORDER BY IdPhoto DESC LIMIT 50; SHOW PROFILES" | grep -E '^[0-9]+\s+[0-9.]+\s+SELECT' | awk '{print $1, $2}'
scripts/mariadb.sh stop $D $P >/dev/null
