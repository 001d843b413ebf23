-- Read markers (the Mastodon API's /api/v1/markers, the form API's
-- `markers` and `mark`): where each person stopped reading their home
-- timeline and their notifications, so that another app or device opens
-- there. One row per person and timeline; `last_read_id` is the status or
-- notification id an app sent, `version` counts the row's changes. A new
-- table, never a change to the original's. Additive and idempotent.
CREATE TABLE IF NOT EXISTS `read_markers` (
  `IdUser` int(11) NOT NULL,
  `timeline` enum('home','notifications') NOT NULL,
  `last_read_id` bigint NOT NULL,
  `version` int(11) NOT NULL,
  `updated` bigint NOT NULL,
  PRIMARY KEY (`IdUser`, `timeline`)
) ENGINE=InnoDB;
