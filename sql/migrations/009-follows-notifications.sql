-- The follow graph and notifications (issue 28): who follows whom (the
-- `feed` of the people one follows, `followers`, `following`) and what
-- others did to one's photos and account (`notifications`). Additive: new
-- InnoDB tables only, beside the original ones. Idempotent.

-- One row per follower and followee; `id` orders a person's lists
-- (cursors, newest first), read by either side's index.
CREATE TABLE IF NOT EXISTS `follows` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `follower` int(11) NOT NULL,
  `followee` int(11) NOT NULL,
  `created` bigint NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `follower_followee` (`follower`, `followee`),
  KEY `follower_id` (`follower`, `id`),
  KEY `followee_id` (`followee`, `id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

-- What `actor` did that `recipient` is told of: liked their photo
-- (favourite), followed them (follow), commented on their photo (mention).
-- IdPhoto and IdComment are 0 where they do not apply, so that `subject`
-- holds each event once (a like sent twice is one notification) and finds
-- the row to remove when it is undone (unvote, unfollow, uncomment) or its
-- photo is deleted.
CREATE TABLE IF NOT EXISTS `notifications` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `recipient` int(11) NOT NULL,
  `kind` enum('favourite','follow','mention') NOT NULL,
  `actor` int(11) NOT NULL,
  `IdPhoto` int(11) NOT NULL DEFAULT 0,
  `IdComment` int(11) NOT NULL DEFAULT 0,
  `created` bigint NOT NULL,
  PRIMARY KEY (`id`),
  KEY `recipient_id` (`recipient`, `id`),
  UNIQUE KEY `subject` (`IdPhoto`, `kind`, `actor`, `IdComment`, `recipient`),
  KEY `IdComment` (`IdComment`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;
