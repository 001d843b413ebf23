-- OAuth 2.0 for Mastodon's client API (issue 28): the apps that clients
-- register (POST /api/v1/apps), the access tokens they are given
-- (/oauth/token) and the authorization codes between the two
-- (/oauth/authorize). Every secret is stored as its SHA-256 only (64 hex
-- digits): whoever reads these tables cannot use a token, a code or an app's
-- client_secret. Additive (new InnoDB tables only) and idempotent.
-- Times are Unix seconds; 0 is "none" (never used, not revoked, no expiry).
-- Ids and hashes compare byte for byte (ascii_bin): a client_id is case-sensitive.

CREATE TABLE IF NOT EXISTS `oauth_apps` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `client_id` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `secret_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `name` varbinary(255) NOT NULL,
  `website` varbinary(2000) NOT NULL,
  -- one per line
  `redirect_uris` varbinary(8000) NOT NULL,
  `scopes` varchar(1000) CHARACTER SET ascii NOT NULL,
  `created` bigint NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `client_id` (`client_id`)
) ENGINE=InnoDB;

-- IdUser 0: an app's own token (client_credentials), no user.
CREATE TABLE IF NOT EXISTS `oauth_tokens` (
  `id` bigint NOT NULL AUTO_INCREMENT,
  `token_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `app_id` int(11) NOT NULL,
  `IdUser` int(11) NOT NULL,
  `scopes` varchar(1000) CHARACTER SET ascii NOT NULL,
  `created` bigint NOT NULL,
  `expires` bigint NOT NULL,
  `last_used` bigint NOT NULL,
  `revoked` bigint NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `token_hash` (`token_hash`),
  -- a person's authorized apps
  KEY `IdUser_app_id` (`IdUser`, `app_id`)
) ENGINE=InnoDB;

-- Single use, for 10 minutes; kept until then with the token it gave, so
-- that a code used twice revokes that token (RFC 6749 §4.1.2).
CREATE TABLE IF NOT EXISTS `oauth_codes` (
  `code_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `app_id` int(11) NOT NULL,
  `IdUser` int(11) NOT NULL,
  `redirect_uri` varbinary(2000) NOT NULL,
  `scopes` varchar(1000) CHARACTER SET ascii NOT NULL,
  `code_challenge` varchar(128) CHARACTER SET ascii NOT NULL,
  `code_challenge_method` varchar(8) CHARACTER SET ascii NOT NULL,
  `expires` bigint NOT NULL,
  `token_id` bigint NOT NULL,
  PRIMARY KEY (`code_hash`),
  KEY `expires` (`expires`)
) ENGINE=InnoDB;
