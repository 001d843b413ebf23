-- Index login.username: login and register look accounts up by name, which
-- the original schema answers with a full table scan. Additive (no column
-- changes; the PHP version benefits too). Idempotent.
CREATE INDEX IF NOT EXISTS `username` ON `login` (`username`);
