-- What the server's sweep (every 10 minutes) removes from the OAuth tables,
-- read as index ranges: apps registered more than a day ago that never
-- signed anyone in (anyone may register one, without signing in: no token
-- and no code of theirs), and tokens revoked or expired more than a day
-- ago. Without these the sweep does not run (it would read whole tables).
-- Additive (indexes on migration 010's tables) and idempotent.
CREATE INDEX IF NOT EXISTS `created` ON `oauth_apps` (`created`);
CREATE INDEX IF NOT EXISTS `app_id` ON `oauth_codes` (`app_id`);
CREATE INDEX IF NOT EXISTS `revoked` ON `oauth_tokens` (`revoked`);
CREATE INDEX IF NOT EXISTS `expires` ON `oauth_tokens` (`expires`);
CREATE INDEX IF NOT EXISTS `app_id` ON `oauth_tokens` (`app_id`);
