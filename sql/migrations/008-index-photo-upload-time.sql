-- Photos by upload time (issue 26): Flickr's `flickr.photos.search` with
-- `min_upload_date` / `max_upload_date` and no text reads a span of upload
-- times newest first as a range of this index, stopping at the page
-- (without it, every photo newest first until the span was found: 1-2 s at
-- 400,000 photos for a date before most of them). Until it is applied, the
-- server refuses such a search (Flickr error 10); with text the words'
-- index drives and the span is checked per photo, as before.
-- Additive (a new index on the InnoDB `photo_details` of migration 003).
-- Idempotent.
CREATE INDEX IF NOT EXISTS `created_IdPhoto` ON `photo_details` (`created`, `IdPhoto`);
