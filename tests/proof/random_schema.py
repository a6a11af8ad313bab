"""Seeded random tables and workloads for the randomized replay on the server (issue 27, section 2).

`make_case(seed)` gives a `Case`: one to three tables of random columns (every MariaDB column type,
signed and UNSIGNED, text in several charsets, generated columns sometimes, every kind of key, odd
identifiers), the rows they start with, and a workload of multi-row INSERTs, UPDATEs that change keys,
REPLACE, INSERT ... ON DUPLICATE KEY UPDATE and DELETEs whose values sit at the edges. The same seed
gives the same case (a proof_case.Case: the form of the reproducers in tests/proof/proof_cases/).

Every literal is ASCII: text goes as `_utf8mb4 X'..'` (or `X'..'` for bytes), so no statement spans two
lines and no client charset can change a value.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from proof_case import Case, q

#: binlog_row_metadata x binlog_row_image of a round; under MINIMAL metadata names and keys come from
#: --schema or from the CREATE TABLEs of the files given (Case.names).
SETTINGS = [("FULL", "FULL"), ("MINIMAL", "FULL"), ("FULL", "NOBLOB"), ("FULL", "MINIMAL"),
            ("MINIMAL", "NOBLOB")]

#: What the generator leaves out, each with its reason (the server's limits, not binlog-spec's).
EXCLUDED = {
    "INVISIBLE columns under FULL metadata": "no DDL is in the files then, and the TABLE_MAP does not say a "
    "column is invisible: --sql2 writes `INSERT ... VALUES` without a column list, which the server refuses "
    "(error 1136; --complete-insert works); generated under MINIMAL metadata, where DDL or --schema tell",
    "4-byte ENUM/SET members under MINIMAL metadata": "MariaDB 10.11 keeps member names in utf8mb3: SHOW CREATE "
    "TABLE and mariadb-dump print an emoji member as '?', so the --schema dump cannot give it",
}


def text_lit(s: str) -> str:
    return "_utf8mb4 X'" + s.encode("utf-8").hex().upper() + "'" if s else "''"


def str_lit(s: str) -> str:
    """A plain quoted literal (ENUM and SET members take no introducer)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def bytes_lit(b: bytes) -> str:
    return "X'" + b.hex().upper() + "'"


# ---------------------------------------------------------------------------------------------- columns

INTS = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}
#: charset, collation, python codec that can encode the sample text, sample characters
CHARSETS = [("utf8mb4", "utf8mb4_general_ci", "utf-8", "aZé€中😀🎉 "),
            ("utf8mb4", "utf8mb4_bin", "utf-8", "aé😀'\\\""),
            ("utf8mb4", "utf8mb4_unicode_520_ci", "utf-8", "Straßeß"),
            ("latin1", "latin1_swedish_ci", "latin-1", "aBjörnÿ'"),
            ("gbk", "gbk_chinese_ci", "gbk", "a中文李"),
            ("ucs2", "ucs2_general_ci", "utf-16-be", "aΩé中"),
            ("binary", None, None, None)]
ODD_NAMES = ["we`ird", "a b", "prénom", "列名", "x`` y", "SELECT", "d.t", "Ω", "trailing_"]


@dataclass
class Column:
    name: str
    ddl: str                                 # type and attributes, without the name
    values: "callable"                       # rng -> SQL literal
    nullable: bool = True
    blob: bool = False
    generated: bool = False


def _int_col(rng, name):
    t = rng.choice(list(INTS))
    unsigned = rng.random() < 0.5
    bits = INTS[t]
    lo, hi = (0, 2 ** bits - 1) if unsigned else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)

    def value(r):
        return str(r.choice([lo, hi, 0, 1, -1 if not unsigned else 2, r.randint(lo, hi), r.randint(lo, hi)]))
    if rng.random() < 0.2:      # a default an INSERT that leaves the column out takes (MINIMAL images)
        return Column(name, t + (" UNSIGNED" if unsigned else "") + f" NOT NULL DEFAULT {value(rng)}", value,
                      nullable=False)
    return Column(name, t + (" UNSIGNED" if unsigned else ""), value)


def _decimal_col(rng, name):
    p = rng.choice([1, 5, 10, 18, 19, 30, 38, 65, rng.randint(1, 65)])
    s = rng.randint(0, min(p, 30))
    if rng.random() < 0.3:
        s = min(p, 30)
    unsigned = rng.random() < 0.2

    def value(r):
        ip, fp = p - s, s
        def digits(n, full=False):
            return "".join("9" if full else r.choice("0123456789") for _ in range(n))
        kind = r.random()
        full = kind < 0.3
        i_part = digits(ip, full) or "0"
        f_part = digits(fp, full)
        sign = "-" if (not unsigned and r.random() < 0.5) else ""
        if kind > 0.9:
            return "0" if r.random() < 0.5 else "-0.0"
        return sign + i_part + ("." + f_part if f_part else "")
    return Column(name, f"DECIMAL({p},{s})" + (" UNSIGNED" if unsigned else ""), value)


def _float_col(rng, name):
    if rng.random() < 0.5:
        def value(r):
            return r.choice(["0", "-0.0", "1.1", "-1.5e-10", "3.4028234e38", "-3.4028234e38", "1.175494e-38",
                             "16777217", repr(r.uniform(-1e6, 1e6)), repr(r.uniform(-1, 1))])
        return Column(name, "FLOAT", value)

    def value(r):
        return r.choice(["0", "-0.0", "0.1", "1.7976931348623157e308", "-2.2250738585072014e-308",
                         "3.141592653589793", "1e-300", repr(r.uniform(-1e12, 1e12)), repr(r.random())])
    return Column(name, "DOUBLE", value)


def _bit_col(rng, name):
    n = rng.choice([1, 7, 8, 17, 63, 64, rng.randint(1, 64)])

    def value(r):
        v = r.choice([0, 2 ** n - 1, 1, r.getrandbits(n)])
        return "b'" + format(v, "b") + "'"
    return Column(name, f"BIT({n})", value)


def _year_col(rng, name):
    return Column(name, "YEAR", lambda r: r.choice(["0", "1901", "2155", "2000", "1970", str(r.randint(1901, 2155))]))


def _fsp(rng):
    return rng.choice([0, 0, 1, 3, 6, rng.randint(0, 6)])


def _frac(r, fsp):
    return "." + "".join(r.choice("0123456789") for _ in range(fsp)) if fsp else ""


def _date(r):
    return f"{r.randint(1000, 9999):04d}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def _temporal_col(rng, name):
    kind = rng.choice(["DATE", "DATETIME", "TIMESTAMP", "TIME"])
    if kind == "DATE":
        return Column(name, "DATE", lambda r: "'" + r.choice(["0000-00-00", "1000-01-01", "9999-12-31", "2024-02-29",
                                                                _date(r)]) + "'")
    fsp = _fsp(rng)
    sfx = f"({fsp})" if fsp else ""
    if kind == "DATETIME":
        def value(r):
            day = _date(r)
            day += f" {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
            return "'" + r.choice(["1000-01-01 00:00:00", "9999-12-31 23:59:59", "0000-00-00 00:00:00",
                                   day]) + _frac(r, fsp) + "'"
        return Column(name, "DATETIME" + sfx, value)
    if kind == "TIMESTAMP":
        def value(r):
            return "'" + r.choice(["1970-01-02 00:00:00", "2038-01-18 03:14:07", "2000-02-29 12:00:00",
                                   f"{r.randint(1971, 2037)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} "
                                   f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"]) \
                + _frac(r, fsp) + "'"
        return Column(name, f"TIMESTAMP{sfx} NULL DEFAULT NULL", value)

    def value(r):
        base = r.choice(["-838:59:59", "838:59:59", "00:00:00", "-00:00:01",
                         f"{r.choice(['', '-'])}{r.randint(0, 837)}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"])
        return "'" + base + ("" if base.startswith(("838", "-838")) else _frac(r, fsp)) + "'"
    return Column(name, "TIME" + sfx, value)


def _text_value(r, sample: str, maxlen: int, binary: bool) -> str:
    if maxlen >= 300 and r.random() < 0.05:       # TEXT, BLOB: past the 8 KiB of a rows event
        n = r.choice([256, 9000, 70000])
        return bytes_lit(bytes(r.getrandbits(8) for _ in range(n))) if binary else text_lit(
            "".join(r.choice(sample + "ab") for _ in range(n)))
    if binary:
        n = r.choice([0, 1, min(maxlen, 4), r.randint(0, maxlen)])
        b = bytes(r.choice([0, 32, 255, 0x41, r.randint(0, 255)]) for _ in range(n))
        if b and r.random() < 0.3:
            b = b[:-1] + r.choice([b"\x00", b" "])
        return bytes_lit(b)
    kind = r.random()
    if kind < 0.15:
        return "''"
    n = r.randint(1, max(1, min(maxlen, 12 if r.random() < 0.9 else maxlen)))
    s = "".join(r.choice(sample + "ab\x00 ") for _ in range(n))
    if kind < 0.3:
        s = (s[:max(0, n - 2)] + "  ")[:n]          # trailing spaces
    return text_lit(s)


def _text_col(rng, name):
    cs, coll, codec, sample = rng.choice(CHARSETS)
    binary = cs == "binary"
    kind = rng.choice(["CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT"])
    n = {"CHAR": rng.choice([1, 5, 30, 255]), "VARCHAR": rng.choice([1, 10, 60, 250])}.get(kind, 300)
    if kind == "TINYTEXT":
        n = 60
    ddl = kind + (f"({n})" if kind in ("CHAR", "VARCHAR") else "")
    ddl += " CHARACTER SET " + cs + (f" COLLATE {coll}" if coll else "")
    if kind in ("CHAR", "VARCHAR") and rng.random() < 0.2:
        ddl += " DEFAULT " + (bytes_lit(b"d\x00 "[:n]) if binary else str_lit("dflt é"[:n]))
    return Column(name, ddl, lambda r: _text_value(r, sample, n, binary), blob="TEXT" in kind)


def _bytes_col(rng, name):
    kind = rng.choice(["BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"])
    n = rng.choice([1, 4, 16, 64]) if "BINARY" in kind else 300
    ddl = kind + (f"({n})" if "BINARY" in kind else "")
    return Column(name, ddl, lambda r: _text_value(r, "", n, True), blob="BLOB" in kind)


def _member(r, i):
    pool = ["a", "B", "é", "中", "x y", "q'uote", "back\\slash", "tail "] + (["😀"] if _EMOJI_MEMBERS else [])
    return r.choice(pool).rstrip() + str(i)


_EMOJI_MEMBERS = True        # make_case: False under MINIMAL metadata (EXCLUDED)
_INVISIBLE: random.Random | None = None     # make_case: under MINIMAL metadata only (EXCLUDED)


def _encodable(s: str, codec: str) -> bool:
    try:
        s.encode(codec)
        return True
    except UnicodeEncodeError:
        return False


def _enum_col(rng, name):
    members = [_member(rng, i) for i in range(rng.choice([1, 2, 5, 20]))]
    latin1 = all(_encodable(m, "latin-1") for m in members)
    cs = rng.choice(["", " CHARACTER SET utf8mb4"] + ([" CHARACTER SET latin1"] if latin1 else []))
    ddl = "ENUM(" + ",".join(str_lit(m) for m in members) + ")" + cs

    def value(r):
        return r.choice([text_lit(r.choice(members)), text_lit(members[-1]), str(r.randint(1, len(members)))])
    return Column(name, ddl, value)


def _set_col(rng, name):
    members = [_member(rng, i).replace(",", "") for i in range(rng.choice([1, 3, 8, 64, rng.randint(1, 64)]))]
    ddl = "SET(" + ",".join(str_lit(m) for m in members) + ")"

    def value(r):
        chosen = [m for m in members if r.random() < 0.3]
        if r.random() < 0.1:
            chosen = list(members)
        return text_lit(",".join(chosen))
    return Column(name, ddl, value)


JSON_DOCS = ['{"a": [1, 2.5, "x\\"y"], "b": null}', "[]", "{}", '"str"', "1e300", "-0", "true",
             '{"é": "😀", "nested": {"k": [null, false, {"z": 12345678901234567890}]}}', "[1, [2, [3, []]]]"]


def _json_col(rng, name):
    return Column(name, "JSON", lambda r: text_lit(r.choice(JSON_DOCS)), blob=True)


def _geometry_col(rng, name):
    def value(r):
        srid_v = r.choice([0, 4326])
        wkt = r.choice(["POINT(1 2)", f"POINT({r.uniform(-180, 180)!r} {r.uniform(-90, 90)!r})",
                        "LINESTRING(0 0,1 1,2 -0.5)", "POLYGON((0 0,1 0,1 1,0 0))",
                        "MULTIPOINT(1 1,2 2)", "GEOMETRYCOLLECTION(POINT(1 1))"])
        return f"ST_GeomFromText('{wkt}', {srid_v})"
    return Column(name, "GEOMETRY", value, blob=True)


def _inet6_col(rng, name):
    return Column(name, "INET6", lambda r: "'" + r.choice(
        ["::", "::1", "::ffff:1.2.3.4", "2001:db8::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
         ":".join(f"{r.getrandbits(16):x}" for _ in range(8))]) + "'")


def _uuid_col(rng, name):
    def value(r):
        b = bytearray(r.getrandbits(8) for _ in range(16))
        if r.random() < 0.5:                 # version 1, RFC 4122 variant (a time-based UUID)
            b[6] = (b[6] & 0x0F) | 0x10
            b[8] = (b[8] & 0x3F) | 0x80
        h = b.hex()
        u = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return "'" + r.choice([u, u, "00000000-0000-0000-0000-000000000000"]) + "'"
    return Column(name, "UUID", value)


MAKERS = [_int_col, _int_col, _int_col, _decimal_col, _float_col, _float_col, _bit_col, _year_col, _temporal_col,
          _temporal_col, _temporal_col, _text_col, _text_col, _text_col, _bytes_col, _enum_col, _set_col, _json_col,
          _geometry_col, _inet6_col, _uuid_col]


# ---------------------------------------------------------------------------------------------- tables

@dataclass
class Table:
    name: str
    columns: list[Column]
    key: list[str]                           # the columns a workload addresses rows by ([] : none)
    key_kind: str
    ddl: str = ""
    key_pool: dict[str, list[str]] = field(default_factory=dict)


def _name(rng, i: int, prefix: str) -> str:
    if rng.random() < 0.25:
        return rng.choice(ODD_NAMES) + str(i)
    return f"{prefix}{i}"


def make_table(rng: random.Random, ti: int) -> Table:
    key_kind = rng.choice(["int", "composite", "varchar", "unique", "none"])
    cols: list[Column] = []
    key: list[str] = []
    pool: dict[str, list[str]] = {}
    if key_kind in ("int", "composite", "unique"):
        t = rng.choice(["INT", "BIGINT UNSIGNED", "SMALLINT"])
        kname = _name(rng, 0, "id")
        cols.append(Column(kname, t + " NOT NULL", lambda r: "0", nullable=False))
        key.append(kname)
        pool[kname] = [str(v) for v in (*range(16), 32767)]
    if key_kind in ("composite", "varchar"):
        cs = rng.choice(["utf8mb4", "latin1", "utf8mb4 COLLATE utf8mb4_bin"])
        kname = _name(rng, 1, "k")
        cols.append(Column(kname, f"VARCHAR(20) CHARACTER SET {cs} NOT NULL", lambda r: "''", nullable=False))
        key.append(kname)
        pool[kname] = [text_lit(s) for s in ("a", "A", "b", "é", "x ", "中", "", "z\\'", "c", "d", "ß", "e\x00")]
    for i in range(rng.randint(2, 9)):
        cols.append(rng.choice(MAKERS)(rng, _name(rng, i + 2, "c")))
    if rng.random() < 0.05:             # past 8 and 250 columns: bitmaps of several bytes, 3-byte counts
        for i in range(rng.choice([20, 70, 260])):
            cols.append(rng.choice([_int_col, _bit_col, _year_col, _float_col])(rng, f"w{i}"))
    if _INVISIBLE is not None:          # its own random numbers: the other choices stay those of the seed
        for c in cols[1:]:
            if c.name not in key and _INVISIBLE.random() < 0.15:
                c.ddl += " INVISIBLE"
    bases = [c for c in cols if "CHAR(" not in c.ddl]       # MariaDB refuses CHAR there
    if bases and rng.random() < 0.3:
        base = rng.choice(bases)
        store = rng.choice(["VIRTUAL", "PERSISTENT", "STORED"])
        cols.append(Column(_name(rng, 99, "g"), f"INT AS ({q(base.name)} IS NULL) {store}", lambda r: "DEFAULT",
                           generated=True))
    name = _name(rng, ti, "t")
    parts = [f"{q(c.name)} {c.ddl}" for c in cols]
    if key_kind in ("int", "composite", "varchar"):
        parts.append("PRIMARY KEY (" + ", ".join(q(k) for k in key) + ")")
    elif key_kind == "unique":
        parts.append("UNIQUE KEY (" + q(key[0]) + ")")
    ddl = f"CREATE TABLE {q(name)} ({', '.join(parts)}) ENGINE=InnoDB"
    if rng.random() < 0.2:
        ddl += " DEFAULT CHARSET=" + rng.choice(["latin1", "gbk", "utf8mb4"])
    return Table(name, cols, key, key_kind, ddl, pool)


# ---------------------------------------------------------------------------------------------- workload

def _row(r: random.Random, t: Table, cols: list[Column]) -> str:
    vals = []
    for c in cols:
        if c.name in t.key_pool:
            vals.append(r.choice(t.key_pool[c.name]))
        elif c.nullable and r.random() < 0.12:
            vals.append("NULL")
        else:
            vals.append(c.values(r))
    return "(" + ", ".join(vals) + ")"


def _insert_cols(r: random.Random, t: Table) -> list[Column]:
    plain = [c for c in t.columns if not c.generated]
    if r.random() < 0.4:            # a subset: the others take their defaults
        return [c for c in plain if not c.nullable or r.random() < 0.6]
    return plain


def _where(r: random.Random, t: Table) -> str:
    if t.key and r.random() < 0.2:      # several rows in one event
        k = t.key[0]
        return f" WHERE {q(k)} IN ({', '.join(r.sample(t.key_pool[k], 3))})"
    if t.key:
        conds = [f"{q(k)} = {r.choice(t.key_pool[k])}" for k in t.key if r.random() < 0.8 or k == t.key[0]]
        return " WHERE " + " AND ".join(conds)
    c = r.choice([c for c in t.columns if not c.generated])
    return f" WHERE {q(c.name)} IS {r.choice(['', 'NOT '])}NULL LIMIT {r.randint(1, 3)}"


def _set_clause(r: random.Random, t: Table, change_key: bool) -> str:
    plain = [c for c in t.columns if not c.generated and c.name not in t.key]
    chosen = r.sample(plain, k=min(len(plain), r.randint(1, 3))) if plain else []
    parts = [f"{q(c.name)} = {'NULL' if c.nullable and r.random() < 0.1 else c.values(r)}" for c in chosen]
    if change_key and t.key:
        k = r.choice(t.key)
        parts.append(f"{q(k)} = {r.choice(t.key_pool[k])}")
    return ", ".join(parts) or (f"{q(t.key[0])} = {q(t.key[0])}" if t.key else "")


def workload_statement(r: random.Random, t: Table) -> str:
    tn = q(t.name)
    op = r.choice(["insert", "insert", "update", "update", "replace", "upsert", "delete"])
    if op in ("insert", "replace", "upsert"):
        cols = _insert_cols(r, t)
        rows = ", ".join(_row(r, t, cols) for _ in range(r.randint(1, 4)))
        names = ", ".join(q(c.name) for c in cols)
        verb = "REPLACE" if op == "replace" else "INSERT"
        sql = f"{verb} INTO {tn} ({names}) VALUES {rows}"
        if op == "upsert":
            sets = _set_clause(r, t, change_key=r.random() < 0.2)
            if sets:
                sql += " ON DUPLICATE KEY UPDATE " + sets
        return sql
    if op == "update":
        sets = _set_clause(r, t, change_key=r.random() < 0.4)
        if not sets:
            return f"DELETE FROM {tn}{_where(r, t)}"
        return f"UPDATE {tn} SET {sets}{_where(r, t)}"
    return f"DELETE FROM {tn}{_where(r, t)}"


def make_case(seed: int, setting: tuple[str, str] | None = None) -> Case:
    rng = random.Random(seed)
    metadata, image = setting or SETTINGS[seed % len(SETTINGS)]
    global _EMOJI_MEMBERS, _INVISIBLE
    _EMOJI_MEMBERS = metadata == "FULL"
    _INVISIBLE = None if metadata == "FULL" else random.Random(f"invisible {seed}")
    tables = [make_table(rng, i) for i in range(rng.choice([1, 2, 2, 3]))]
    start = []
    for t in tables:
        cols = [c for c in t.columns if not c.generated]
        names = ", ".join(q(c.name) for c in cols)
        rows = ", ".join(_row(rng, t, cols) for _ in range(rng.randint(2, 6)))
        start.append(f"INSERT IGNORE INTO {q(t.name)} ({names}) VALUES {rows}")
    workload = []
    for _ in range(rng.randint(8, 24)):
        if rng.random() < 0.15:
            workload.append("BEGIN")
            workload += [workload_statement(rng, rng.choice(tables)) for _ in range(rng.randint(2, 4))]
            workload.append(rng.choice(["COMMIT", "COMMIT", "ROLLBACK"]))
        else:
            workload.append(workload_statement(rng, rng.choice(tables)))
    db_charset = rng.choice(["utf8mb4", "utf8mb4", "latin1"])
    zone = f"SET time_zone = '{rng.choice(['+00:00', '+05:30', '-08:00', '+14:00', 'SYSTEM'])}'"
    start.insert(0, zone)
    workload.insert(0, zone)
    compress = "ON" if rng.random() < 0.25 else "OFF"
    names = rng.choice(["schema", "ddl"])
    return Case(seed, metadata, image, [t.ddl for t in tables], start, workload, db_charset=db_charset,
                compress=compress, names=names)
