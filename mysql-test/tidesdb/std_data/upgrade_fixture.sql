-- The tables of the upgrade fixture (scripts/make-upgrade-fixture.sh runs this against a
-- fresh server of the release that writes the fixture; tidesdb.upgrade opens the result
-- with the current build). Every on-disk format the release has: rows and keys of the
-- common types, a secondary, a unique and a hidden primary key, BLOBs in value logs, an
-- instant ADD COLUMN and DROP COLUMN history, foreign keys, partitions, AUTO_INCREMENT
-- counters, ANALYZE statistics; rows in SSTables (OPTIMIZE) and rows only in the WAL.
CREATE DATABASE upgrade_fixture;
USE upgrade_fixture;
CREATE TABLE types (id INT PRIMARY KEY, i BIGINT, d DECIMAL(10, 3), f DOUBLE, c CHAR(8), v VARCHAR(40),
  b VARBINARY(16), t TEXT, dt DATETIME(3), ts TIMESTAMP NULL, j JSON, e ENUM('x', 'y', 'z'),
  bits BIT(5), u INT UNSIGNED, KEY (v), UNIQUE KEY (i)) ENGINE=TidesDB;
INSERT INTO types SELECT seq, seq * 1000, seq / 7, seq * 1.5, CONCAT('c', seq), CONCAT('v-', seq),
  UNHEX(LPAD(HEX(seq), 8, '0')), REPEAT('t', seq % 50), '2026-12-02 10:00:00.123' + INTERVAL seq MINUTE,
  NULL, JSON_OBJECT('n', seq), ELT(1 + seq % 3, 'x', 'y', 'z'), seq % 32, seq FROM seq_1_to_500;
CREATE TABLE nopk (a INT, b VARCHAR(20), KEY (b)) ENGINE=TidesDB;
INSERT INTO nopk SELECT seq, CONCAT('b', seq % 10) FROM seq_1_to_100;
CREATE TABLE blobs (id INT PRIMARY KEY, small VARCHAR(10), payload LONGBLOB) ENGINE=TidesDB;
INSERT INTO blobs SELECT seq, CONCAT('s', seq), REPEAT(CHAR(65 + seq), 20000 + seq * 1000) FROM seq_1_to_20;
CREATE TABLE evolved (id INT PRIMARY KEY, a INT, gone VARCHAR(10), b VARCHAR(10)) ENGINE=TidesDB;
INSERT INTO evolved VALUES (1, 10, 'g1', 'b1'), (2, 20, 'g2', 'b2');
ALTER TABLE evolved ADD COLUMN added INT NOT NULL DEFAULT 7, ALGORITHM=INSTANT;
INSERT INTO evolved VALUES (3, 30, 'g3', 'b3', 33);
ALTER TABLE evolved DROP COLUMN gone, ALGORITHM=INSTANT;
ALTER TABLE evolved ADD COLUMN first_col VARCHAR(5) DEFAULT 'f' FIRST, ALGORITHM=INSTANT;
INSERT INTO evolved (id, a, b, added, first_col) VALUES (4, 40, 'b4', 44, 'f4');
CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=TidesDB;
CREATE TABLE child (id INT PRIMARY KEY, pid INT, KEY (pid),
  CONSTRAINT fk_child FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE) ENGINE=TidesDB;
INSERT INTO parent VALUES (1, 'one'), (2, 'two');
INSERT INTO child VALUES (10, 1), (11, 1), (20, 2);
CREATE TABLE parts (id INT PRIMARY KEY, v INT) ENGINE=TidesDB
  PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN MAXVALUE);
INSERT INTO parts SELECT seq, seq FROM seq_1_to_200;
CREATE TABLE counters (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=TidesDB AUTO_INCREMENT=1000;
INSERT INTO counters (v) VALUES (1), (2), (3);
ANALYZE TABLE types, blobs;
OPTIMIZE TABLE types, nopk, blobs, evolved, parent, child, parts, counters;
-- After the OPTIMIZE: only in the WAL (and memtables) when the server stops.
INSERT INTO types (id, v, i) VALUES (1001, 'after-optimize', 1001000);
UPDATE blobs SET payload = REPEAT('z', 70000) WHERE id = 1;
DELETE FROM nopk WHERE a = 1;
INSERT INTO counters (v) VALUES (4);
