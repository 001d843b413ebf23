-- What the tutorial left for later (issue 15): photo details, comments and
-- votes. Additive: new InnoDB tables only (they work beside the original
-- MyISAM `login` and `photos` too); nothing of the original tables changes,
-- so the PHP version keeps running on the same database.
-- Idempotent (IF NOT EXISTS), applied by `make up` and the test stack; on an
-- existing database: mariadb iReport < sql/migrations/003-photo-details-comments-votes.sql
--
-- Times are Unix seconds (UTC), ids int(11) as in the original tables, text
-- latin1 like `photos.title`: the server's latin1 connection stores the bytes
-- the client sent (UTF-8) unchanged.

-- Upload time and size of each photo uploaded after this migration (a photo
-- from before has no row: its `created`, `width`, `height` are null).
CREATE TABLE IF NOT EXISTS `photo_details` (
  `IdPhoto` int(11) NOT NULL,
  `created` bigint NOT NULL,
  `width` int(11) NOT NULL,
  `height` int(11) NOT NULL,
  PRIMARY KEY (`IdPhoto`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

-- The counts a stream with extras shows, kept by the commands that change
-- them (in the same transaction), so a page costs one join, not a COUNT per
-- photo. Also the row every change to a photo's votes and comments locks
-- first: votes, comments and `delete` of one photo take their turns.
CREATE TABLE IF NOT EXISTS `photo_counts` (
  `IdPhoto` int(11) NOT NULL,
  `likes` int(11) NOT NULL DEFAULT 0,
  `dislikes` int(11) NOT NULL DEFAULT 0,
  `comments` int(11) NOT NULL DEFAULT 0,
  PRIMARY KEY (`IdPhoto`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

-- One vote per person per photo: 1 like, -1 dislike.
CREATE TABLE IF NOT EXISTS `votes` (
  `IdPhoto` int(11) NOT NULL,
  `IdUser` int(11) NOT NULL,
  `vote` tinyint NOT NULL,
  PRIMARY KEY (`IdPhoto`, `IdUser`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

CREATE TABLE IF NOT EXISTS `comments` (
  `IdComment` int(11) NOT NULL AUTO_INCREMENT,
  `IdPhoto` int(11) NOT NULL,
  `IdUser` int(11) NOT NULL,
  `text` varchar(1000) CHARACTER SET latin1 NOT NULL,
  `created` bigint NOT NULL,
  PRIMARY KEY (`IdComment`),
  -- a photo's comments, paged by id (cursors)
  KEY `IdPhoto_IdComment` (`IdPhoto`, `IdComment`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;
