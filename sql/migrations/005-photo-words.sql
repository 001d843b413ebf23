-- The search index (`search` command): one row per distinct word of a
-- photo's title and its author's username, as `SearchWords` normalises them
-- (UTF-8, lowercase, accents removed; CJK as characters and pairs). Kept in
-- step by the server's uploads and deletes; `ireporter search-index` fills it
-- for photos stored before it existed (or by the PHP version), resumably.
-- Additive: the 2012 tables are not touched. Idempotent.
--   PRIMARY KEY (word, IdPhoto): a word's photos newest first, a prefix's
--     words by range (binary order: "sun" ≤ word < "sun\xFF");
--   KEY photo (IdPhoto, word): "does this photo have a word starting with…",
--     and a photo's rows for a delete.
CREATE TABLE IF NOT EXISTS `photo_words` (
  `word` varbinary(64) NOT NULL,
  `IdPhoto` int(11) NOT NULL,
  PRIMARY KEY (`word`, `IdPhoto`),
  KEY `photo` (`IdPhoto`, `word`)
) ENGINE=InnoDB;

-- Where `ireporter search-index` goes on after an interruption: the next
-- IdPhoto to index (one row, id 1).
CREATE TABLE IF NOT EXISTS `photo_words_backfill` (
  `id` tinyint NOT NULL PRIMARY KEY,
  `next_photo` int(11) NOT NULL
) ENGINE=InnoDB;
