-- Each photo's secret (issue 16): ten lowercase hex digits (40 random bits,
-- Flickr's format) in the names of its files in the photos' tree and in their
-- URLs, /iReporter/photos/<server>/<IdPhoto>_<secret>_<size>.jpg, so that the
-- photos cannot be counted through as upload/<IdPhoto>.jpg can. A table beside
-- `photos`, not a column of it: the 2012 table (MyISAM, read by the PHP
-- version in a swap-in) is not rebuilt. Additive and idempotent.
CREATE TABLE IF NOT EXISTS `photo_secrets` (
  `IdPhoto` int(11) NOT NULL,
  `secret` char(10) CHARACTER SET ascii NOT NULL,
  PRIMARY KEY (`IdPhoto`)
) ENGINE=InnoDB;

-- The photos already stored get theirs now (RANDOM_BYTES: MariaDB 10.10+,
-- from the server's cryptographic generator). A photo stored later without
-- one (by the PHP version, in a swap-in) gets it from our server the first
-- time an answer needs it.
INSERT IGNORE INTO `photo_secrets` (`IdPhoto`, `secret`)
  SELECT `IdPhoto`, LOWER(HEX(RANDOM_BYTES(5))) FROM `photos`;
