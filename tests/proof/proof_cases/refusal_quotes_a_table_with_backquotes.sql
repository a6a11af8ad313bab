-- @seed 4000227
-- @setting binlog_row_metadata=FULL binlog_row_image=NOBLOB database_charset=utf8mb4 log_bin_compress=OFF names=schema
-- Found by make proof (seed 4000227, reduced): the refusal of --replace and --rollback (NOBLOB images)
-- named the table `x`` y1` (a name with two backquotes) unquoted, so the line did not say which
-- table it was. Fixed: quote_table in output/statements.py and output/rewriter.py. It failed with:
--   sql --sql2 --complete-insert --replace: refused, but the NOBLOB images of 'x` y1' (no BLOB, TEXT, JSON or GEOMETRY column) are whole: binlog-spec: error: /tmp/proofx/final2/seed-4000227/reduced/mariadb-bin.000599: offset 842: the row image of `proof`.`x`` y1` lacks columns (binlog_row_image MINIMAL or NOBLOB): it cannot be written back whole
--   sql --sql2 --rollback: refused, but the NOBLOB images of 'x` y1' (no BLOB, TEXT, JSON or GEOMETRY column) are whole: binlog-spec: error: /tmp/proofx/final2/seed-4000227/reduced/mariadb-bin.000599: offset 842: the row image of `proof`.`x`` y1` lacks columns (binlog_row_image MINIMAL or NOBLOB): it cannot be written back whole
-- @ddl
CREATE TABLE `x```` y1` (`prénom0` BIGINT UNSIGNED NOT NULL, `c2` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci, `c3` SET('中0','q''uote1','a2','back\\slash3','tail4','back\\slash5','中6','x y7','x y8','back\\slash9','tail10','中11','😀12','中13','back\\slash14','back\\slash15','é16','back\\slash17','B18','back\\slash19','back\\slash20','q''uote21','back\\slash22','a23','😀24','x y25'), `x```` y4` VARBINARY(64), `c5` LONGTEXT CHARACTER SET gbk COLLATE gbk_chinese_ci, UNIQUE KEY (`prénom0`)) ENGINE=InnoDB DEFAULT CHARSET=latin1
-- @start
SET time_zone = '+05:30'
INSERT IGNORE INTO `x```` y1` (`prénom0`, `c2`, `c3`, `x```` y4`, `c5`) VALUES (15, NULL, _utf8mb4 X'E4B8AD302C7127756F7465312C61322C6261636B5C736C617368332C6261636B5C736C617368352CE4B8AD362CE4B8AD31312CF09F988031322CE4B8AD31332CC3A931362C6261636B5C736C61736831392C6261636B5C736C61736832302C6261636B5C736C61736832322CF09F988032342C7820793235', X'00', _utf8mb4 X'61E6968761E4B8ADE4B8AD61E4B8ADE69D8E2061E69687'), (5, NULL, _utf8mb4 X'61322C7461696C342C782079382C7461696C31302C6261636B5C736C61736831342C6261636B5C736C61736832322CF09F98803234', X'', ''), (7, NULL, _utf8mb4 X'E4B8AD302C7461696C342C782079382C6261636B5C736C617368392CE4B8AD31312CF09F988031322CE4B8AD31332CC3A931362C4231382C6261636B5C736C61736831392C7820793235', X'', _utf8mb4 X'2000E69D8E6120'), (10, _utf8mb4 X'C39F62C39F0061C39F74615372', _utf8mb4 X'E4B8AD302C7127756F7465312C61322C7461696C342C7461696C31302CE4B8AD31312CE4B8AD31332C6261636B5C736C61736831342C7127756F746532312C6261636B5C736C6173683232', NULL, _utf8mb4 X'E69D8E61'), (0, _utf8mb4 X'61747462C39F', _utf8mb4 X'61322CE4B8AD362C7461696C31302CC3A931362C6261636B5C736C61736831372C7127756F746532312C6261636B5C736C6173683232', X'', _utf8mb4 X'002020')
-- @workload
SET time_zone = '+05:30'
UPDATE `x```` y1` SET `x```` y4` = X'201E2020660041', `c2` = NULL WHERE `prénom0` = 10
COMMIT
