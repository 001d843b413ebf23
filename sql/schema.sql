-- iReporter schema (database `iReport`), for new installs of the Swift
-- server. Loaded by scripts/mariadb.sh on every start, so every statement
-- must be idempotent (CREATE TABLE IF NOT EXISTS); an existing database,
-- e.g. one the 2012 PHP version created, is left exactly as it is.
--
-- Tables, columns and types are exactly those of the 2012 tutorial's schema
-- (kept verbatim in sql/original-myisam.sql; the server runs on that too):
--   * the tables default to utf8, but every text column is
--     CHARACTER SET latin1 (collation latin1_swedish_ci): username and
--     password comparisons are case-insensitive and ignore trailing spaces,
--     and the server connects as latin1 so the bytes the client sent are
--     stored unchanged (UTF-8 included);
--   * photos starts at AUTO_INCREMENT=2: the first photo is IdPhoto 2.
-- The one change: ENGINE=InnoDB instead of MyISAM (crash-safe, row locks).

CREATE TABLE IF NOT EXISTS `login` (
  `IdUser` int(11) NOT NULL AUTO_INCREMENT,
  `username` varchar(45) CHARACTER SET latin1 NOT NULL,
  `pass` varchar(45) CHARACTER SET latin1 NOT NULL,
  PRIMARY KEY (`IdUser`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

CREATE TABLE IF NOT EXISTS `photos` (
  `IdPhoto` int(11) NOT NULL AUTO_INCREMENT,
  `title` varchar(100) CHARACTER SET latin1 NOT NULL,
  `IdUser` int(11) NOT NULL,
  PRIMARY KEY (`IdPhoto`)
) ENGINE=InnoDB AUTO_INCREMENT=2 DEFAULT CHARSET=utf8;
