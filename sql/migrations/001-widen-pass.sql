-- Widen login.pass from the original varchar(45) so it can hold an Argon2id
-- PHC string (about 100 characters). Idempotent. The server stores hashes
-- only once this has run; `ireporter migrate-passwords` runs it and then
-- re-hashes every password still stored as the app sent it.
ALTER TABLE `login` MODIFY `pass` varchar(255) CHARACTER SET latin1 NOT NULL;
