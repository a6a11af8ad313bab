-- @seed 21
-- @setting binlog_row_metadata=MINIMAL binlog_row_image=FULL database_charset=latin1 log_bin_compress=ON names=ddl
-- Found by make proof (seed 21, reduced): ENUM members from the binlog's CREATE TABLE (MINIMAL
-- metadata) in a latin1 column were read as mojibake ('é7' as 'Ã©7') once one member ('中1')
-- had a character latin1 lacks; the server makes it '?1'. Fixed in rows/schema_sql.py _members.
-- It failed with:
--   sql --sql2: tables differ from the server's: ['t0']
--   sql --sql2 --complete-insert --replace: tables differ from the server's: ['t0']
--   rows: table 't0': a row of the server's is not in ours; nearest: c2: ours 'Ã©7' != server 'é7'
-- @ddl
CREATE TABLE `t0` (`id0` SMALLINT NOT NULL, `c2` ENUM('é0','中1','a2','a3','q''uote4','back\\slash5','B6','é7','中8','中9','a10','back\\slash11','back\\slash12','tail13','a14','q''uote15','tail16','B17','q''uote18','a19'), `we``ird3` INT UNSIGNED, `c4` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, `列名5` YEAR, `c6` BIT(1), `c7` JSON, `g99` INT AS (`c2` IS NULL) STORED, UNIQUE KEY (`id0`)) ENGINE=InnoDB
-- @start
SET time_zone = '+00:00'
-- @workload
SET time_zone = '+00:00'
INSERT INTO `t0` (`id0`, `c2`, `we``ird3`, `c4`, `列名5`, `c6`, `c7`) VALUES (13, _utf8mb4 X'C3A937', 1461297141, 'long text', 1970, b'0', _utf8mb4 X'5B312C205B322C205B332C205B5D5D5D5D'), (7, _utf8mb4 X'6261636B5C736C6173683132', 2795047475, _utf8mb4 X'222262202027F09F98802722625C00615C', 2012, b'1', _utf8mb4 X'7B2261223A205B312C20322E352C2022785C2279225D2C202262223A206E756C6C7D')
COMMIT
