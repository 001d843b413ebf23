-- The plans of every statement an anonymous question runs (issue 26),
-- on the seeded table of bench/search/bounds.sh: each must be an index
-- range or lookup that stops at its LIMIT (docs/SECURITY.md "What an
-- anonymous query reads"). Values as the server binds them.
SELECT 'stream: the newest page (PK range, LIMIT)' AS statement;
EXPLAIN SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto > 0 AND p.IdPhoto < 9223372036854775807 ORDER BY p.IdPhoto DESC LIMIT 50;
SELECT 'stream IdUser=7 since/before (IdUser_IdPhoto range, migration 004)' AS statement;
EXPLAIN SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto > 1000 AND p.IdPhoto < 900000 AND p.IdUser = 7 ORDER BY p.IdPhoto DESC LIMIT 50;
SELECT 'stream with extras (the same range, each photo''s rows by key)' AS statement;
EXPLAIN SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username, c.likes, c.dislikes, c.comments, d.created, d.width, d.height, v.vote AS myvote FROM photos p JOIN login l ON (l.IdUser = p.IdUser) LEFT JOIN photo_counts c ON (c.IdPhoto = p.IdPhoto) LEFT JOIN photo_details d ON (d.IdPhoto = p.IdPhoto) LEFT JOIN votes v ON (v.IdPhoto = p.IdPhoto AND v.IdUser = 0) WHERE p.IdPhoto > 0 AND p.IdPhoto < 9223372036854775807 ORDER BY p.IdPhoto DESC LIMIT 50;
SELECT 'comments of a photo (IdPhoto_IdComment range)' AS statement;
EXPLAIN SELECT c.IdComment, c.IdUser, l.username, c.text, c.created FROM comments c LEFT JOIN login l ON (l.IdUser = c.IdUser) WHERE c.IdPhoto = 42 AND c.IdComment > 0 AND c.IdComment < 2147483647 ORDER BY c.IdComment DESC LIMIT 500;
SELECT 'search: the words a term starts, one dive each' AS statement;
EXPLAIN SELECT word FROM photo_words WHERE word >= 'night' AND word < CONCAT('night', X'FF') ORDER BY word LIMIT 1;
EXPLAIN SELECT word FROM photo_words WHERE word > 'night' AND word < CONCAT('night', X'FF') ORDER BY word LIMIT 1;
SELECT 'search, one word: each word''s photos newest first, LIMIT the page' AS statement;
EXPLAIN SELECT IdPhoto FROM photo_words WHERE word = 'sunset' AND IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC LIMIT 50;
SELECT 'search, several words: a chunk of each word (PostingIntersection), LIMIT the chunk' AS statement;
EXPLAIN (SELECT 0 AS slot, IdPhoto FROM photo_words WHERE word = 'night' AND IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC LIMIT 64) UNION ALL (SELECT 1 AS slot, IdPhoto FROM photo_words WHERE word = 'city' AND IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC LIMIT 64);
SELECT 'search, a broad term checked on found photos (photo key, by id)' AS statement;
EXPLAIN SELECT DISTINCT IdPhoto FROM photo_words WHERE IdPhoto IN (999205, 998000, 0, 0) AND word >= 's' AND word < CONCAT('s', X'FF');
SELECT 'search, only broad terms: the photo key newest first, LIMIT the chunk' AS statement;
EXPLAIN SELECT IdPhoto, word FROM photo_words FORCE INDEX (photo) WHERE IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC, word DESC LIMIT 256;
SELECT 'the page''s photos and authors, by id' AS statement;
EXPLAIN SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto IN (999205, 998000, 0, 0);
SELECT 'Flickr by upload date alone: the upload-time key (migration 008) newest first, LIMIT the chunk' AS statement;
EXPLAIN SELECT IdPhoto, created FROM photo_details FORCE INDEX (created_IdPhoto) WHERE created >= -9223372036854775808 AND created <= 1262904000 AND (created < 9223372036854775807 OR (created = 9223372036854775807 AND IdPhoto < 9223372036854775807)) ORDER BY created DESC, IdPhoto DESC LIMIT 64;
SELECT 'Flickr user_id and a date: the author''s photos (IdUser_IdPhoto, LIMIT the budget + 1), then their upload times by id' AS statement;
EXPLAIN SELECT IdPhoto FROM photos WHERE IdUser = 7 AND IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC LIMIT 20051;
EXPLAIN SELECT IdPhoto, created FROM photo_details WHERE IdPhoto IN (7, 1007, 2007, 0) AND created >= 0 AND created <= 1262904000;
SELECT 'Flickr getRecent / people.getPublicPhotos total: COUNT of at most 4,000 (a range with LIMIT)' AS statement;
EXPLAIN SELECT COUNT(*) AS n FROM (SELECT p.IdPhoto FROM photos p WHERE p.IdPhoto < 9223372036854775807 AND p.IdUser = 7 ORDER BY p.IdPhoto DESC LIMIT 4000) m JOIN photos p ON (p.IdPhoto = m.IdPhoto);
