"""Column names and signs from CREATE TABLE files and replayed DDL (parsed with sqlglot)."""
from __future__ import annotations

import warnings

import pytest

from binlog_spec.rows.column_types import Column
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.rows.statement_text import statement_offset

DUMP = """
-- MySQL dump 10.13
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `orders` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `qty` smallint(6) NOT NULL,
  `price` decimal(10,2) unsigned DEFAULT NULL,
  `ratio` float unsigned DEFAULT NULL,
  `we``ird` int(11) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `qty` (`qty`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE `other`.`t2` (a INT, b VARCHAR(3));
"""


def names(tracker, db, table):
    return [(c.name, c.unsigned) for c in tracker.columns(db, table)]


def test_a_mysqldump_schema_gives_names_and_signs():
    t = SchemaTracker("shop")
    t.load_sql(DUMP)
    assert names(t, "shop", "orders") == [("id", True), ("qty", False), ("price", True), ("ratio", False),
                                          ("we`ird", False)]
    assert names(t, "other", "t2") == [("a", False), ("b", False)]


def test_alter_table_add_drop_change_modify_rename_column_are_replayed():
    t = SchemaTracker("shop")
    t.load_sql(DUMP)
    t.observe_query("shop", "ALTER TABLE orders ADD COLUMN note TEXT AFTER qty, DROP COLUMN `we``ird`")
    t.observe_query("shop", "ALTER TABLE orders CHANGE qty quantity INT UNSIGNED NOT NULL")
    t.observe_query("shop", "ALTER TABLE orders MODIFY price DECIMAL(12,2)")
    t.observe_query("shop", "ALTER TABLE orders ADD COLUMN first_col INT FIRST")
    t.observe_query("shop", "ALTER TABLE orders RENAME COLUMN note TO remark")
    assert names(t, "shop", "orders") == [("first_col", False), ("id", True), ("quantity", True),
                                          ("remark", False), ("price", False), ("ratio", False)]


def test_rename_and_drop_table_follow_the_table():
    t = SchemaTracker("shop")
    t.load_sql(DUMP)
    t.observe_query("shop", "RENAME TABLE orders TO orders_old, other.t2 TO other.t3")
    assert t.columns("shop", "orders") is None
    assert names(t, "shop", "orders_old")[0] == ("id", True)
    assert names(t, "other", "t3") == [("a", False), ("b", False)]
    t.observe_query("shop", "ALTER TABLE orders_old RENAME TO archive.orders")
    assert t.columns("archive", "orders") is not None and t.columns("shop", "orders_old") is None
    t.observe_query("x", "DROP TABLE IF EXISTS archive.orders, other.t3")
    assert t.columns("archive", "orders") is None and t.columns("other", "t3") is None


def test_create_table_in_the_event_database():
    t = SchemaTracker()
    t.observe_query("db1", "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, s VARCHAR(10))")
    assert names(t, "db1", "t") == [("id", True), ("s", False)]


def test_a_create_table_after_a_comment_with_a_quote_is_replayed():
    t = SchemaTracker()
    t.observe_query("db1", "/* it's the migration tool */ -- and a line comment\nCREATE TABLE t (id INT UNSIGNED)")
    assert names(t, "db1", "t") == [("id", True)]


def test_the_statement_starts_after_the_comments_and_inside_an_executable_one():
    def text(q):
        return q[statement_offset(q):]
    assert text("  /* a 'b' */ -- c\n# d\n  DROP TABLE t") == "DROP TABLE t"
    assert text("/*!40101 SET NAMES utf8 */") == " SET NAMES utf8 */"
    assert text("/*M!100100 CREATE TABLE t (a INT) */").startswith(" CREATE TABLE t")
    assert text("/* never closed") == "" and text("-- only a comment") == ""
    assert text("--x") == "--x"      # not a comment: MySQL wants white space after --


def test_non_ddl_statements_are_ignored():
    t = SchemaTracker("shop")
    t.load_sql(DUMP)
    before = names(t, "shop", "orders")
    for q in ("BEGIN", "INSERT INTO orders VALUES (1)", "COMMIT", "UPDATE orders SET qty=1"):
        t.observe_query("shop", q)
    assert names(t, "shop", "orders") == before


def test_an_alter_that_cannot_be_replayed_forgets_the_table_rather_than_guess():
    t = SchemaTracker("shop")
    t.load_sql(DUMP)
    t.observe_query("shop", "ALTER TABLE orders ADD x INT FOO BAR (")
    assert t.columns("shop", "orders") is None
    assert t.notes == ["cannot replay 'ALTER TABLE orders ADD x INT FOO BAR (' (unsupported ALTER syntax); "
                       "forgetting `shop`.`orders`"]


def test_the_precision_of_old_temporal_types_comes_from_the_create_table():
    """MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n) are logged as the old types with no metadata: the
    schema gives their precision; TIME2 & co. keep the binlog's own, and precision 0 adds nothing."""
    from binlog_spec.rows.tablemap import TableDef
    from binlog_spec.rows.column_types import Column
    t = SchemaTracker("db")
    t.load_sql("CREATE TABLE h (t TIME(3), dt DATETIME(6), ts TIMESTAMP(1) NULL, t0 TIME, t2 TIME(4));")
    assert [c.fsp for c in t.columns("db", "h")] == [3, 6, 1, 0, 4]
    cols = (Column(11, {}), Column(12, {}), Column(7, {}), Column(11, {}), Column(19, {"fsp": 2}))
    table = TableDef(table_id=1, schema="db", table="h", columns=cols, nullable=(True,) * 5)
    assert [c.meta for c in t.complete(table).columns] == [{"fsp": 3}, {"fsp": 6}, {"fsp": 1}, {}, {"fsp": 2}]


def _collations(tracker, db, table):
    return {c.name: c.collation for c in tracker.columns(db, table)}


def test_a_text_columns_charset_comes_from_the_column_then_the_table_then_the_database():
    t = SchemaTracker()
    t.observe_query("", "CREATE DATABASE d1 CHARACTER SET latin1")
    t.observe_query("d1", "CREATE TABLE a (c1 VARCHAR(3), c2 TEXT CHARACTER SET utf8mb4, c3 CHAR(2) COLLATE utf8_bin,"
                          " b1 VARBINARY(3), b2 BLOB, b3 CHAR(3) CHARACTER SET binary, n INT)")
    t.observe_query("d1", "CREATE TABLE b (c1 VARCHAR(3)) DEFAULT CHARSET=cp1251")
    assert _collations(t, "d1", "a") == {"c1": 8, "c2": 45, "c3": 33, "b1": 63, "b2": 63, "b3": 63, "n": None}
    assert _collations(t, "d1", "b") == {"c1": 51}
    assert [c.text for c in t.columns("d1", "a")] == [True, True, True, False, False, False, False]


def test_a_database_without_a_charset_takes_the_servers_and_alter_database_changes_it():
    t = SchemaTracker()
    t.observe_query("", "CREATE DATABASE `d2`", server_collation=8)
    t.observe_query("d2", "CREATE TABLE x (c VARCHAR(3))")
    t.observe_query("", "ALTER DATABASE d2 DEFAULT CHARACTER SET = utf8mb4")
    t.observe_query("d2", "CREATE TABLE y (c VARCHAR(3))")
    t.observe_query("", "ALTER SCHEMA d2 COLLATE cp1250_general_ci")
    t.observe_query("d2", "ALTER TABLE y ADD COLUMN d VARCHAR(3)")
    t.observe_query("d2", "CREATE TABLE z (c VARCHAR(3))")
    assert _collations(t, "d2", "x") == {"c": 8}     # a column keeps the charset it was created with
    assert _collations(t, "d2", "y") == {"c": 45, "d": 45}    # ADD COLUMN takes the table's default
    assert _collations(t, "d2", "z") == {"c": 26}
    t.observe_query("", "DROP DATABASE d2")
    assert t.columns("d2", "x") is None and "d2" not in t.database_charsets


def test_convert_to_character_set_changes_every_text_column_and_the_default():
    t = SchemaTracker()
    t.observe_query("d", "CREATE TABLE x (c VARCHAR(3) CHARACTER SET latin1, b VARBINARY(3), n INT) CHARSET latin1")
    t.observe_query("d", "ALTER TABLE x CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    assert _collations(t, "d", "x") == {"c": 45, "b": 63, "n": None}
    t.observe_query("d", "ALTER TABLE d.x DEFAULT CHARSET=latin1, ADD COLUMN e TEXT")
    assert _collations(t, "d", "x")["e"] == 8


def test_create_table_if_not_exists_of_a_known_table_changes_nothing():
    t = SchemaTracker()
    t.observe_query("d", "CREATE TABLE x (a INT, b INT)")
    t.observe_query("d", "ALTER TABLE x ADD COLUMN c INT")
    t.observe_query("d", "CREATE TABLE IF NOT EXISTS x (a INT, b INT)")
    assert [c.name for c in t.columns("d", "x")] == ["a", "b", "c"]
    t.observe_query("d", "CREATE TABLE IF NOT EXISTS y (a INT)")
    assert [c.name for c in t.columns("d", "y")] == ["a"]


def test_executable_comments_are_read_and_delimiters_split_a_dump():
    t = SchemaTracker()
    t.load_sql("""/*!40101 SET NAMES utf8mb4 */;
CREATE DATABASE /*!32312 IF NOT EXISTS*/ `d3` /*!40100 DEFAULT CHARACTER SET latin1 */;
USE `d3`;
CREATE TABLE `t` (`a` varchar(5) DEFAULT ';/*!', `e` enum('é','ü') DEFAULT NULL) ENGINE=InnoDB;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER trg BEFORE INSERT ON t FOR EACH ROW
BEGIN SET NEW.a = 'x;y'; SET NEW.e = 'é'; END */;;
DELIMITER ;
CREATE TABLE `u` (`b` int);
""")
    assert _collations(t, "d3", "t") == {"a": 8, "e": 8}
    assert [c.name for c in t.columns("d3", "u")] == ["b"] and t.creates == 2


def test_enum_members_from_ddl_are_in_the_columns_charset():
    from binlog_spec.rows.tablemap import TableDef
    from binlog_spec.rows.column_types import Column
    t = SchemaTracker()
    t.observe_query("d", "CREATE TABLE x (e ENUM('é','ü') CHARACTER SET latin1, s SET('ä','b'))")
    enum_col = Column(254, {"real_type": 247, "pack_length": 1})
    set_col = Column(254, {"real_type": 248, "pack_length": 1})
    table = TableDef(table_id=1, schema="d", table="x", columns=(enum_col, set_col), nullable=(True, True))
    done = t.complete(table)
    assert done.columns[0].enum_values == ("é".encode("latin-1"), "ü".encode("latin-1"))
    assert done.columns[0].charset == 8 and done.columns[1].set_values == ("ä".encode(), b"b")


def test_a_real_mariadb_dump_of_two_databases_gives_names_charsets_and_members():
    """fixtures/charsets-nolog/schema.sql: `mariadb-dump --no-data --triggers --databases coltypes
    other_db` of the fixture server (USE, /*!40101 ... */ lines, a view, a trigger in DELIMITER ;;)."""
    import json
    from conftest import FIXTURES
    from binlog_spec.rows.charsets import charset_name
    folder = FIXTURES / "charsets-nolog"
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # nothing in a real dump is worth a warning
        t = SchemaTracker.from_file(folder / "schema.sql")
    assert t.notes == [] and t.unreadable == []
    server = json.loads((folder / "columns.json").read_text(encoding="utf-8"))
    assert len(server) == 2
    for key, cols in server.items():
        db, table = key.split(".")
        ours = t.columns(db, table)
        assert [c.name for c in ours] == [c["name"] for c in cols]
        for c, s in zip(ours, cols):
            want = s["character_set_name"] or ("binary" if s["data_type"] in ("varbinary", "binary", "blob") else None)
            assert charset_name(c.collation) == {"utf8mb3": "utf8mb3"}.get(want, want), (key, c, s)
            if s["data_type"] == "enum":
                assert "enum(" + ",".join(f"'{m.decode()}'" for m in c.members) + ")" == s["column_type"]
    notes = t.columns("other_db", "notes")
    assert [(c.name, c.unsigned, charset_name(c.collation)) for c in notes] == [
        ("id", False, None), ("body", False, "latin1"), ("tag", False, "latin1"), ("raw", False, "binary"),
        ("n", True, None)]
    assert notes[2].members == ("né".encode(), b"vu")
    assert t.columns("other_db", "note_tags") is None       # a view is no table
    assert t.database_charsets == {"coltypes": 45, "other_db": 8}


def test_a_create_table_that_cannot_be_parsed_forgets_the_older_table():
    t = SchemaTracker()
    t.observe_query("d", "CREATE TABLE x (a INT)")
    t.observe_query("d", "CREATE TABLE x (a LONG VARCHAR)")
    assert t.columns("d", "x") is None
    assert len(t.notes) == 1 and t.notes[0].startswith("cannot replay 'CREATE TABLE x (a LONG VARCHAR)' (")
    assert t.notes[0].endswith("forgetting `d`.`x`") and "\x1b" not in t.notes[0]


def _table_def(schema, table, n, primary_key=(), nullable=None):
    from binlog_spec.rows.tablemap import TableDef
    from binlog_spec.rows.column_types import Column
    return TableDef(table_id=1, schema=schema, table=table, columns=tuple(Column(type_code=3, meta={}) for _ in range(n)),
                    nullable=tuple(nullable if nullable is not None else [True] * n), primary_key=primary_key)


def test_primary_and_unique_keys_come_from_every_form_of_create_table():
    t = SchemaTracker("d")
    t.load_sql("""CREATE TABLE a (id INT NOT NULL PRIMARY KEY, u INT UNIQUE, v INT UNIQUE KEY, w INT, x INT,
                  y VARCHAR(20), n INT, UNIQUE KEY uk (x, y(10)), UNIQUE (w), CONSTRAINT c1 UNIQUE (v DESC),
                  KEY k (n), INDEX (w));
                  CREATE TABLE b (p INT, q INT, r INT, CONSTRAINT pk PRIMARY KEY (p, `q`) USING BTREE);""")
    assert t.keys[("d", "a")] == {"primary": ("id",), "u": ("u",), "v": ("v",), "uk": ("x", "y"), "w": ("w",),
                                  "c1": ("v",)}
    assert t.keys[("d", "b")] == {"primary": ("p", "q")}


def test_alter_table_and_index_statements_change_the_keys():
    t = SchemaTracker("d")
    t.load_sql("CREATE TABLE r (a INT, b INT, c INT, d INT, PRIMARY KEY (a, `b`), UNIQUE (c), UNIQUE KEY cd (c, d));")
    t.observe_query("d", "ALTER TABLE r DROP PRIMARY KEY, ADD CONSTRAINT pk PRIMARY KEY (c), ADD UNIQUE KEY ub (b)")
    assert t.keys[("d", "r")] == {"primary": ("c",), "c": ("c",), "cd": ("c", "d"), "ub": ("b",)}
    t.observe_query("d", "ALTER TABLE r DROP INDEX c, CHANGE c cc INT, RENAME INDEX ub TO ub2, DROP COLUMN d")
    assert t.keys[("d", "r")] == {"primary": ("cc",), "cd": ("cc",), "ub2": ("b",)}
    t.observe_query("d", "DROP INDEX `PRIMARY` ON r")
    t.observe_query("d", "CREATE UNIQUE INDEX two ON r (a, b(4))")
    t.observe_query("d", "ALTER TABLE r ADD COLUMN id INT PRIMARY KEY FIRST")
    t.observe_query("d", "RENAME TABLE r TO s")
    assert ("d", "r") not in t.keys
    assert t.keys[("d", "s")] == {"cd": ("cc",), "ub2": ("b",), "two": ("a", "b"), "primary": ("id",)}
    t.observe_query("d", "DROP TABLE s")
    assert ("d", "s") not in t.keys


def test_keys_complete_a_table_map_after_its_own_primary_key():
    """Precedence: the TABLE_MAP's metadata, then the DDL replayed over --schema."""
    t = SchemaTracker("d")
    t.load_sql("CREATE TABLE r (a INT, b INT NOT NULL, c INT, PRIMARY KEY (b), UNIQUE (c), UNIQUE KEY ab (a, b));")
    done = t.complete(_table_def("d", "r", 3))
    assert (done.primary_key, done.unique_keys, done.row_key) == ((1,), ((2,), (0, 1)), (1,))
    assert t.complete(_table_def("d", "r", 3, primary_key=(0,))).primary_key == (0,)      # metadata wins
    t.observe_query("d", "ALTER TABLE r DROP PRIMARY KEY")                                 # DDL over --schema
    done = t.complete(_table_def("d", "r", 3, nullable=[True, False, True]))
    assert done.primary_key == () and done.row_key == ()            # `c` and `a` may be NULL: no row key
    done = t.complete(_table_def("d", "r", 3, nullable=[False, False, True]))
    assert done.row_key == (0, 1)                                   # the first NOT NULL unique key
    assert t.complete(_table_def("d", "r", 4)).unique_keys == ()    # another shape: nothing applied


def test_a_table_map_column_of_an_unknown_type_code_is_a_named_contradiction_not_a_crash():
    """Found by the mutation run: a bit flip made a column type 79, which no ColumnType names."""
    t = SchemaTracker()
    t.observe_query("d", "CREATE TABLE x (a INT)")
    table = TableDef(table_id=1, schema="d", table="x", columns=(Column(type_code=79, meta={}),), nullable=(True,))
    done = t.complete(table)
    assert done.names == ["@1"]
    assert any(kind == "mismatch" and "type 79 in the TABLE_MAP" in message
               for kind, message in done.extra["notes"])


# ------------------------------------------------ partitions, reshaping ALTERs, LIKE, temporary tables

def _tracker(create="CREATE TABLE t (id INT NOT NULL, a INT, b INT, PRIMARY KEY (id))"):
    t = SchemaTracker("d")
    t.observe_query("d", create)
    return t


def _names(t, table="t"):
    cols = t.columns("d", table)
    return None if cols is None else [c.name for c in cols]


@pytest.mark.parametrize("partitioning", [
    "PARTITION BY HASH (`id`) PARTITIONS 4",
    "/*!50100 PARTITION BY HASH (`id`) PARTITIONS 4 */",
    "PARTITION BY KEY ALGORITHM=2 (id) PARTITIONS 3",
    "PARTITION BY LINEAR KEY (id)",
    "PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
    "PARTITION BY LIST (id) (PARTITION p0 VALUES IN (1, 2), PARTITION p1 VALUES IN (3))",
    "/*!50500 PARTITION BY RANGE  COLUMNS(d)\n(PARTITION p0 VALUES LESS THAN ('2020-01-01') ENGINE = InnoDB,\n"
    " PARTITION p1 VALUES LESS THAN (MAXVALUE) ENGINE = InnoDB) */",
    "PARTITION BY RANGE (YEAR(d)) SUBPARTITION BY HASH (id) SUBPARTITIONS 2 "
    "(PARTITION p0 VALUES LESS THAN (1990), PARTITION p1 VALUES LESS THAN MAXVALUE)",
])
def test_a_partitioned_create_table_is_learnt_with_its_keys_and_charset(partitioning):
    t = _tracker("CREATE TABLE `w` (`id` int NOT NULL, `name` varchar(20), `d` date, PRIMARY KEY (`id`)) "
                 f"ENGINE=InnoDB DEFAULT CHARSET=latin1\n{partitioning}")
    assert _names(t, "w") == ["id", "name", "d"]
    assert t.keys[("d", "w")] == {"primary": ("id",)} and t.columns("d", "w")[1].collation == 8
    assert t.notes == []


@pytest.mark.parametrize("alter", [
    "ALTER TABLE t ADD PARTITION (PARTITION p2 VALUES LESS THAN (30))",
    "ALTER TABLE t ADD PARTITION PARTITIONS 2",
    "ALTER TABLE t DROP PARTITION p0", "ALTER TABLE t TRUNCATE PARTITION p0, p1", "ALTER TABLE t TRUNCATE PARTITION ALL",
    "ALTER TABLE t REORGANIZE PARTITION p1 INTO (PARTITION p1 VALUES LESS THAN (20), "
    "PARTITION p2 VALUES LESS THAN MAXVALUE)",
    "ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE u WITHOUT VALIDATION",
    "ALTER TABLE t ANALYZE PARTITION p0", "ALTER TABLE t CHECK PARTITION ALL", "ALTER TABLE t OPTIMIZE PARTITION p0",
    "ALTER TABLE t REBUILD PARTITION p0, p1", "ALTER TABLE t REPAIR PARTITION p0", "ALTER TABLE t COALESCE PARTITION 2",
    "ALTER TABLE t DISCARD PARTITION p0 TABLESPACE", "ALTER TABLE t IMPORT PARTITION p0 TABLESPACE",
    "ALTER TABLE t REMOVE PARTITIONING", "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4",
    "ALTER TABLE t ENGINE=InnoDB /*!50100 PARTITION BY KEY (id) PARTITIONS 2 */",
    "ALTER TABLE t ROW_FORMAT=COMPRESSED", "ALTER TABLE t ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8",
    "ALTER TABLE t ENGINE=InnoDB", "ALTER TABLE t COMMENT 'x'", "ALTER TABLE t AUTO_INCREMENT=100",
    "ALTER TABLE t STATS_PERSISTENT=1, STATS_SAMPLE_PAGES=20",
    "ALTER TABLE t DISCARD TABLESPACE", "ALTER TABLE t IMPORT TABLESPACE", "ALTER TABLE t FORCE",
    "ALTER TABLE t FORCE, ALGORITHM=INPLACE, LOCK=NONE", "ALTER TABLE t ALGORITHM=COPY",
    "ALTER ONLINE TABLE t ENGINE=InnoDB", "ALTER IGNORE TABLE t ADD UNIQUE KEY (a)", "ALTER TABLE t ORDER BY a",
])
def test_an_alter_that_changes_no_column_keeps_the_table(alter):
    t = _tracker()
    t.observe_query("d", alter)
    assert _names(t) == ["id", "a", "b"] and t.notes == []


@pytest.mark.parametrize("alter, names", [
    ("ALTER TABLE t ADD COLUMN g POINT NOT NULL SRID 4326", ["id", "a", "b", "g"]),
    ("ALTER TABLE t ADD COLUMN (c INT, d VARCHAR(5))", ["id", "a", "b", "c", "d"]),
    ("ALTER TABLE t ADD (c INT, d DECIMAL(5, 2))", ["id", "a", "b", "c", "d"]),
    ("ALTER TABLE t ADD COLUMN v INT AS (b * 2) PERSISTENT", ["id", "a", "b", "v"]),
    ("ALTER ONLINE TABLE t ADD COLUMN c INT", ["id", "a", "b", "c"]),
    ("ALTER IGNORE TABLE t ADD COLUMN c INT", ["id", "a", "b", "c"]),
    ("ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INSTANT, LOCK=DEFAULT", ["id", "a", "b", "c"]),
    ("ALTER TABLE t ENGINE=InnoDB, DROP COLUMN a", ["id", "b"]),
    ("ALTER TABLE t ADD COLUMN c INT PARTITION BY HASH (id) PARTITIONS 2", ["id", "a", "b", "c"]),
    ("ALTER TABLE t DROP COLUMN b, REMOVE PARTITIONING", ["id", "a"]),
])
def test_an_alter_sqlglot_trips_on_still_changes_the_columns(alter, names):
    t = _tracker()
    t.observe_query("d", alter)
    assert _names(t) == names and t.notes == []


@pytest.mark.parametrize("alter, names", [
    ("ALTER TABLE t MODIFY b INT FIRST", ["b", "id", "a"]),
    ("ALTER TABLE t MODIFY COLUMN a BIGINT AFTER b", ["id", "b", "a"]),
    ("ALTER TABLE t CHANGE b bb INT AFTER id", ["id", "bb", "a"]),
    ("ALTER TABLE t CHANGE COLUMN id id2 INT NOT NULL FIRST", ["id2", "a", "b"]),
    ("ALTER TABLE t MODIFY a INT FIRST, CHANGE b b2 INT AFTER id", ["a", "id", "b2"]),
])
def test_modify_and_change_with_first_or_after_move_the_column(alter, names):
    t = _tracker()
    t.observe_query("d", alter)
    assert _names(t) == names


def test_a_move_after_a_column_the_table_lacks_forgets_it_and_says_so():
    t = _tracker()
    t.observe_query("d", "ALTER TABLE t MODIFY a INT AFTER nope")
    assert _names(t) is None
    assert t.notes == ["cannot replay 'ALTER TABLE t MODIFY a INT AFTER nope' (it has no column nope); "
                       "forgetting `d`.`t`"]


def test_generated_columns_are_marked_generated_in_every_spelling():
    t = _tracker("CREATE TABLE t (id INT, j JSON, n VARCHAR(100) AS (j->>'$.name'), a INT AS (id + 1) VIRTUAL, "
                 "s INT GENERATED ALWAYS AS (id * 2) STORED, p INT AS (id * 3) PERSISTENT, "
                 "persistent INT, m INT)")
    assert [(c.name, c.generated) for c in t.columns("d", "t")] == [
        ("id", False), ("j", False), ("n", True), ("a", True), ("s", True), ("p", True), ("persistent", False),
        ("m", False)]


def test_create_table_like_copies_the_known_shape_keys_and_charset():
    t = _tracker("CREATE TABLE t (id INT NOT NULL, a VARCHAR(5), UNIQUE KEY u (a), PRIMARY KEY (id)) "
                 "DEFAULT CHARSET=latin1")
    t.observe_query("d", "CREATE TABLE t2 LIKE t")
    t.observe_query("d", "ALTER TABLE t2 ADD COLUMN c VARCHAR(3)")
    assert _names(t, "t2") == ["id", "a", "c"] and _names(t) == ["id", "a"]
    assert t.keys[("d", "t2")] == {"primary": ("id",), "u": ("a",)}
    assert [c.collation for c in t.columns("d", "t2")] == [None, 8, 8]


def test_create_table_like_an_unknown_table_stays_unknown_and_says_why():
    t = _tracker()
    t.observe_query("d", "CREATE TABLE t2 LIKE other")
    assert _names(t, "t2") is None
    assert t.notes == ["cannot replay 'CREATE TABLE t2 LIKE other' (the shape of `d`.`other` is not known); "
                       "forgetting `d`.`t2`"]


@pytest.mark.parametrize("create", ["CREATE TABLE t2 SELECT * FROM t", "CREATE TABLE t2 AS SELECT id FROM t",
                                    "CREATE TABLE t2 (x INT) SELECT * FROM t"])
def test_create_table_select_stays_unknown_and_says_why(create):
    t = _tracker()
    t.observe_query("d", "CREATE TABLE t2 (old INT)")
    t.observe_query("d", create)
    assert _names(t, "t2") is None and _names(t) == ["id", "a", "b"]
    assert len(t.notes) == 1 and "CREATE TABLE ... SELECT cannot be known offline" in t.notes[0]


@pytest.mark.parametrize("statement", ["CREATE TEMPORARY TABLE t (x INT)", "DROP TEMPORARY TABLE IF EXISTS t",
                                       "DROP TEMPORARY TABLE t", "CREATE TEMPORARY TABLE t LIKE u",
                                       "CREATE TEMPORARY TABLE t SELECT 1 AS x",
                                       "CREATE TEMPORARY TABLE t (x LONG VARCHAR)"])
def test_temporary_tables_never_change_the_real_table(statement):
    t = _tracker()
    t.observe_query("d", statement)
    assert _names(t) == ["id", "a", "b"] and t.notes == []


def test_a_forgotten_table_quotes_its_name_and_the_unknown_names_note_says_why():
    t = SchemaTracker("d")
    t.observe_query("d", "CREATE TABLE `we``ird` (a INT)")
    t.observe_query("d", "ALTER TABLE `we``ird` ADD x INT FOO BAR (")
    assert t.notes[0].endswith("forgetting `d`.`we``ird`")
    table = t.complete(_table_def("d", "we`ird", 2))
    (kind, message), = table.extra["notes"]
    assert kind == "names" and "`d`.`we``ird`" in message
    assert "its columns were forgotten: 'ALTER TABLE `we``ird` ADD x INT FOO BAR (': unsupported ALTER syntax" \
        in message


def test_a_schema_file_whose_create_table_cannot_be_read_names_the_statement(tmp_path):
    from binlog_spec.errors import SchemaFileError
    path = tmp_path / "bad.sql"
    path.write_text("CREATE TABLE (((;\n")
    with pytest.raises(SchemaFileError, match=r"could not read 'CREATE TABLE \(\(\('"):
        SchemaTracker.from_file(path)


def test_a_schema_file_with_a_readable_and_an_unreadable_create_table_keeps_one_and_notes_the_other(tmp_path):
    path = tmp_path / "mixed.sql"
    path.write_text("CREATE TABLE ok (a INT);\nCREATE TABLE bad (a LONG VARCHAR);\n")
    t = SchemaTracker.from_file(path, "d")
    assert _names(t, "ok") == ["a"] and _names(t, "bad") is None
    assert len(t.notes) == 1 and "CREATE TABLE bad (a LONG VARCHAR)" in t.notes[0]
