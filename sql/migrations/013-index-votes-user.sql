-- One person's votes, by photo: the photos someone likes, newest first
-- (`liked`, the Mastodon API's favourites), and `export` and
-- `delete_account` reading a person's votes, each an index range instead of
-- a scan of every vote. `vote` is in it, so those reads need no row.
-- Additive (an index on migration 003's table, never on the original's)
-- and idempotent.
CREATE INDEX IF NOT EXISTS `IdUser_IdPhoto_vote` ON `votes` (`IdUser`, `IdPhoto`, `vote`);
