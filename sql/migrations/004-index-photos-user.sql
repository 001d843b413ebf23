-- One person's photos, paged by id (`stream` with `IdUser`, issue 15): an
-- index range on both engines (MyISAM's secondary keys do not carry the
-- primary key). Idempotent.
--
-- Not harmless to the PHP version on a large table: with this index MariaDB
-- may run the original stream query from `login` (a scan and a sort of every
-- photo: 25 s at 1 000 000 photos and 10 000 users), where our server pins
-- its plan (STRAIGHT_JOIN). Apply it once the PHP version is retired; without
-- it `stream` with `IdUser` walks the photos newest first until it has a page.
CREATE INDEX IF NOT EXISTS `IdUser_IdPhoto` ON `photos` (`IdUser`, `IdPhoto`);
