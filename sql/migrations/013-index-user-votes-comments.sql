-- One person's votes and comments, by photo and by comment: the photos
-- someone likes, newest first (`liked`, the Mastodon API's favourites), and
-- `export` and `delete_account` reading a person's votes and comments, each
-- an index range instead of a scan of every vote or comment. `vote` is in
-- the votes' index, so those reads need no row. Additive (indexes on
-- migration 003's tables, never on the original's) and idempotent.
CREATE INDEX IF NOT EXISTS `IdUser_IdPhoto_vote` ON `votes` (`IdUser`, `IdPhoto`, `vote`);
CREATE INDEX IF NOT EXISTS `IdUser_IdComment` ON `comments` (`IdUser`, `IdComment`);
