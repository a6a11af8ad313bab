-- @seed None
-- @setting binlog_row_metadata=MINIMAL binlog_row_image=FULL database_charset=utf8mb4 log_bin_compress=OFF names=schema
-- Found by the randomized replay: MariaDB's INVISIBLE columns, known from --schema, got a
-- value in `INSERT ... VALUES` without a column list, which the server refuses (error 1136). Fixed: the
-- DDL parser keeps INVISIBLE (rows/schema_sql.py), and the INSERT names its columns (output/statements.py).
-- @ddl
CREATE TABLE `t` (`id` INT PRIMARY KEY, `a` INT INVISIBLE DEFAULT 5, `b` VARCHAR(10), `c` TIMESTAMP(3) NULL DEFAULT NULL INVISIBLE)
-- @start
INSERT INTO `t` (`id`, `a`, `b`) VALUES (1, 10, 'x')
-- @workload
SET time_zone = '+00:00'
INSERT INTO `t` (`id`, `a`, `b`, `c`) VALUES (2, 20, 'y', '2020-01-01 00:00:00.5'), (3, NULL, 'z', NULL)
UPDATE `t` SET `a` = 30 WHERE `id` = 1
DELETE FROM `t` WHERE `id` = 3
REPLACE INTO `t` (`id`, `b`) VALUES (2, 'q')
