-- Index photos.IdUser: a user's photos newest first (Flickr's
-- people.getPublicPhotos, search with user_id) without reading the whole
-- table. Additive (the PHP version benefits too). Idempotent.
CREATE INDEX IF NOT EXISTS `IdUser` ON `photos` (`IdUser`, `IdPhoto`);
