DROP TABLE IF EXISTS login, photos;
SOURCE /work/main/sql/original-myisam.sql;
INSERT INTO login (username, pass) SELECT CONCAT('user', seq), 'x' FROM seq_1_to_1000;
DELIMITER //
CREATE OR REPLACE PROCEDURE plain(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO photos (IdUser, title) VALUES (1 + i MOD 1000, 'title'); SET i = i + 1; END WHILE; END//
CREATE OR REPLACE PROCEDURE guarded(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO photos (IdUser, title) SELECT 1 + i MOD 1000, 'title' FROM login WHERE IdUser = 1 + i MOD 1000; SET i = i + 1; END WHILE; END//
DELIMITER ;
DELIMITER //
CREATE OR REPLACE PROCEDURE checked(n INT) BEGIN DECLARE i INT DEFAULT 0; DECLARE x INT; WHILE i < n DO INSERT INTO photos (IdUser, title) VALUES (1 + i MOD 1000, 'title'); SELECT 1 INTO x FROM login WHERE IdUser = 1 + i MOD 1000 LOCK IN SHARE MODE; SET i = i + 1; END WHILE; END//
CREATE OR REPLACE PROCEDURE guarded_const(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO photos (IdUser, title) SELECT 7, 'title' FROM login WHERE IdUser = 7; SET i = i + 1; END WHILE; END//
DELIMITER ;
