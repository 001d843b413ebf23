-- A unique index on login.username (issue 18): registration's "username
-- exists" is then held by the database itself, on one host or on a Galera
-- cluster (which replicates neither GET_LOCK nor MyISAM). It compares as
-- the column does (latin1_swedish_ci: case and trailing spaces ignored),
-- exactly as login and register look a name up. `ireporter migrate` first
-- looks for names an old database holds twice and refuses, listing them
-- (`ireporter duplicate-usernames`, docs/SCALING.md); run by hand on such a
-- database this statement fails with a duplicate-key error instead.
-- Idempotent.
CREATE UNIQUE INDEX IF NOT EXISTS `username_unique` ON `login` (`username`);
