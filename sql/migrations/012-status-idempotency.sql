-- The Mastodon API's `Idempotency-Key`: a status posted with one, kept an
-- hour, so that the same key from the same account (a phone retrying a post
-- whose answer it lost) answers that status rather than posting again.
-- `key_hash` is the key's SHA-256 (hex), `status_id` the status's id (a
-- photo's IdPhoto, or 10^15 + IdComment for a reply). Old rows are swept as
-- new media come in. A new table, never a change to the original's. Additive
-- and idempotent.
CREATE TABLE IF NOT EXISTS `status_idempotency` (
  `IdUser` int(11) NOT NULL,
  `key_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `status_id` bigint NOT NULL,
  `created` bigint NOT NULL,
  PRIMARY KEY (`IdUser`, `key_hash`),
  KEY `created` (`created`)
) ENGINE=InnoDB;
