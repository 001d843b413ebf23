-- When each account registered (the Mastodon API's `created_at`, which
-- showed 1970 for an account without photos): one row per account this
-- server registers from now on; the accounts before it have none (their
-- first photo's day stands in). A new table, never a change to the
-- original's `login`. Additive and idempotent.
CREATE TABLE IF NOT EXISTS `login_registered` (
  `IdUser` int(11) NOT NULL,
  `registered` bigint NOT NULL,
  PRIMARY KEY (`IdUser`)
) ENGINE=InnoDB;
