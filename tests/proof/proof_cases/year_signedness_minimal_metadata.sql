-- @seed None
-- @setting binlog_row_metadata=MINIMAL binlog_row_image=FULL database_charset=utf8mb4
-- Issue 27, section 1 (MINIMAL metadata: names from --schema, signs from the TABLE_MAP): TABLE_MAP's SIGNEDNESS bitmap gives YEAR a bit on MariaDB; skipping it gave the
-- integers after a YEAR their neighbour's sign (rows printed s=65531, n=-1; --sql2 stored 32767, 0).
-- @ddl
CREATE TABLE `t` (`id` INT PRIMARY KEY, `y` YEAR, `s` SMALLINT, `n` INT UNSIGNED, `y2` YEAR, `b` BIGINT, `t` TINYINT UNSIGNED)
-- @start
INSERT INTO `t` VALUES (1, 2000, -5, 4294967295, 0, -9223372036854775808, 255)
-- @workload
INSERT INTO `t` VALUES (2, 1901, -32768, 0, 2155, 9223372036854775807, 0), (3, NULL, 32767, 1, 1970, -1, 128)
UPDATE `t` SET `s` = -1, `n` = 4294967294, `b` = -2 WHERE `id` = 1
UPDATE `t` SET `id` = 4, `y` = 2155 WHERE `id` = 2
DELETE FROM `t` WHERE `id` = 3
