-- The Mastodon API's media (issue 28). `media_attachments`: a photo uploaded
-- to /api/v1/media and checked as `upload` checks one, kept in the upload
-- folder's spool area (`file`, a name there) until a status posts it (the row
-- then goes, the file becomes the photo) or swept after a day unused.
-- `photo_descriptions`: a photo's description (alt text), from its media or
-- set later. Text as the other text columns: latin1 holding the bytes sent;
-- none is the empty text (no description, `focus` "x,y" or none).
-- Tables beside `photos`, never a change to it. Additive and idempotent.
CREATE TABLE IF NOT EXISTS `media_attachments` (
  `IdMedia` int(11) NOT NULL AUTO_INCREMENT,
  `IdUser` int(11) NOT NULL,
  `file` varchar(64) CHARACTER SET ascii NOT NULL,
  `width` int(11) NOT NULL,
  `height` int(11) NOT NULL,
  `description` varchar(1500) CHARACTER SET latin1 NOT NULL,
  `focus` varchar(40) CHARACTER SET ascii NOT NULL,
  `created` bigint NOT NULL,
  PRIMARY KEY (`IdMedia`),
  KEY `IdUser_IdMedia` (`IdUser`, `IdMedia`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

CREATE TABLE IF NOT EXISTS `photo_descriptions` (
  `IdPhoto` int(11) NOT NULL,
  `description` varchar(1500) CHARACTER SET latin1 NOT NULL,
  PRIMARY KEY (`IdPhoto`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;
