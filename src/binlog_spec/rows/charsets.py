"""Character sets: collation id -> Python codec (None = keep bytes), and the names of charsets and
collations. One table for every layer (values, schema replay, SQL output)."""
from __future__ import annotations


BINARY_COLLATION = 63

# --------------------------------------------------------------------------
# Character sets: collation id -> Python codec (None = keep bytes)

# Character set name -> Python codec. Names without a Python codec (armscii8,
# dec8, geostd8, hp8, keybcs2, swe7) are absent, so their values stay bytes.
_CHARSET_CODECS: dict[str, str | None] = {
    "big5": "big5", "latin2": "iso8859_2", "cp850": "cp850", "latin1": "cp1252", "koi8r": "koi8_r",
    "ascii": "ascii", "ujis": "euc_jp", "sjis": "shift_jis", "cp1251": "cp1251", "hebrew": "iso8859_8",
    "tis620": "tis_620", "euckr": "euc_kr", "latin7": "iso8859_13", "koi8u": "koi8_u", "gb2312": "gb2312",
    "greek": "iso8859_7", "cp1250": "cp1250", "gbk": "gbk", "cp1257": "cp1257", "latin5": "iso8859_9",
    "utf8mb3": "utf-8", "ucs2": "utf-16-be", "cp866": "cp866", "macce": "mac_latin2", "macroman": "mac_roman",
    "cp852": "cp852", "utf8mb4": "utf-8", "utf16": "utf-16-be", "utf16le": "utf-16-le", "cp1256": "cp1256",
    "utf32": "utf-32-be", "binary": None, "cp932": "cp932", "eucjpms": "euc_jp", "gb18030": "gb18030",
}

# Collation ids of each character set: MySQL 5.x-9.x and MariaDB 10.x-11.x
# (MariaDB's NO PAD collations are id + 1024; its UCA-14.0.0 collations sit in
# blocks of 256 from 2048; MySQL 8's utf8mb4_0900 family is 255-323).
COLLATION_IDS: dict[str, tuple[tuple[int, int], ...]] = {
    "big5": ((1, 1), (84, 84), (1025, 1025), (1108, 1108)),
    "latin2": ((2, 2), (9, 9), (21, 21), (27, 27), (77, 77), (1033, 1033), (1101, 1101)),
    "cp850": ((4, 4), (80, 80), (1028, 1028), (1104, 1104)),
    "latin1": ((5, 5), (8, 8), (15, 15), (31, 31), (47, 49), (94, 94), (1032, 1032), (1071, 1071)),
    "koi8r": ((7, 7), (74, 74), (1031, 1031), (1098, 1098)),
    "ascii": ((11, 11), (65, 65), (1035, 1035), (1089, 1089)),
    "ujis": ((12, 12), (91, 91), (1036, 1036), (1115, 1115)),
    "sjis": ((13, 13), (88, 88), (1037, 1037), (1112, 1112)),
    "cp1251": ((14, 14), (23, 23), (50, 52), (1074, 1075)),
    "hebrew": ((16, 16), (71, 71), (1040, 1040), (1095, 1095)),
    "tis620": ((18, 18), (89, 89), (1042, 1042), (1113, 1113)),
    "euckr": ((19, 19), (85, 85), (1043, 1043), (1109, 1109)),
    "latin7": ((20, 20), (41, 42), (79, 79), (1065, 1065), (1103, 1103)),
    "koi8u": ((22, 22), (75, 75), (1046, 1046), (1099, 1099)),
    "gb2312": ((24, 24), (86, 86), (1048, 1048), (1110, 1110)),
    "greek": ((25, 25), (70, 70), (1049, 1049), (1094, 1094)),
    "cp1250": ((26, 26), (34, 34), (44, 44), (66, 66), (99, 99), (1050, 1050), (1090, 1090)),
    "gbk": ((28, 28), (87, 87), (1052, 1052), (1111, 1111)),
    "cp1257": ((29, 29), (58, 59), (1082, 1083)),
    "latin5": ((30, 30), (78, 78), (1054, 1054), (1102, 1102)),
    "utf8mb3": ((33, 33), (76, 76), (83, 83), (192, 215), (223, 223), (576, 578), (1057, 1057), (1107, 1107),
                (1216, 1216), (1238, 1238), (2048, 2303)),
    "ucs2": ((35, 35), (90, 90), (128, 151), (159, 159), (640, 642), (1059, 1059), (1114, 1114), (1152, 1152),
             (1174, 1174), (2560, 2815)),
    "cp866": ((36, 36), (68, 68), (1060, 1060), (1092, 1092)),
    "macce": ((38, 38), (43, 43), (1062, 1062), (1067, 1067)),
    "macroman": ((39, 39), (53, 53), (1063, 1063), (1077, 1077)),
    "cp852": ((40, 40), (81, 81), (1064, 1064), (1105, 1105)),
    "utf8mb4": ((45, 46), (224, 247), (255, 323), (608, 610), (1069, 1070), (1248, 1248), (1270, 1270),
                (2304, 2559)),
    "utf16": ((54, 55), (101, 124), (672, 674), (1078, 1079), (1125, 1125), (1147, 1147), (2816, 3071)),
    "utf16le": ((56, 56), (62, 62), (1080, 1080), (1086, 1086)),
    "cp1256": ((57, 57), (67, 67), (1081, 1081), (1091, 1091)),
    "utf32": ((60, 61), (160, 183), (736, 738), (1084, 1085), (1184, 1184), (1206, 1206), (3072, 3327)),
    "binary": ((63, 63),),
    "cp932": ((95, 96), (1119, 1120)),
    "eucjpms": ((97, 98), (1121, 1122)),
    "gb18030": ((248, 250),),
}


def _build_charsets() -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    for name, ranges in COLLATION_IDS.items():
        codec = _CHARSET_CODECS[name]
        for first, last in ranges:
            for cid in range(first, last + 1):
                table[cid] = codec
    return table


#: Collation id -> Python codec name; None means binary (bytes). MySQL's latin1
#: is Windows-1252 ('cp1252'); its five undefined bytes decode to U+0081,
#: U+008D, U+008F, U+0090 and U+009D, as MySQL converts them.
CHARSETS: dict[int, str | None] = _build_charsets()


def codec_for(collation_id: int | None) -> str | None:
    """The Python codec of a collation id, or None for binary, unknown ids and charsets Python lacks."""
    if collation_id is None:
        return None
    return CHARSETS.get(collation_id)


#: The default collation of each character set (SHOW CHARACTER SET; utf8mb4's is MariaDB's and
#: MySQL 5.7's, MySQL 8 uses 255: the same text).
_DEFAULT_COLLATION = {
    "big5": 1, "latin2": 9, "cp850": 4, "latin1": 8, "koi8r": 7, "ascii": 11, "ujis": 12, "sjis": 13,
    "cp1251": 51, "hebrew": 16, "tis620": 18, "euckr": 19, "latin7": 41, "koi8u": 22, "gb2312": 24,
    "greek": 25, "cp1250": 26, "gbk": 28, "cp1257": 59, "latin5": 30, "utf8mb3": 33, "ucs2": 35,
    "cp866": 36, "macce": 38, "macroman": 39, "cp852": 40, "utf8mb4": 45, "utf16": 54, "utf16le": 56,
    "cp1256": 57, "utf32": 60, "binary": 63, "cp932": 95, "eucjpms": 97, "gb18030": 248,
}
#: Other names of character sets (MySQL's and MariaDB's `utf8` is utf8mb3).
_CHARSET_ALIASES = {"utf8": "utf8mb3"}


def charset_collation(name: str) -> int | None:
    """The collation id that stands for a character set or collation name in DDL ('utf8mb4',
    'utf8', 'latin1_swedish_ci', 'utf8mb4_0900_ai_ci', 'binary'): the default collation of its
    character set (what a value's decoding needs); None when the name names no known charset
    (MariaDB 11's charset-less 'uca1400_ai_ci': the CHARACTER SET beside it says)."""
    name = name.strip("`'\"").lower()
    charset = _CHARSET_ALIASES.get(name, name)
    if charset not in _DEFAULT_COLLATION:
        prefix = name.split("_", 1)[0]
        charset = _CHARSET_ALIASES.get(prefix, prefix)
    return _DEFAULT_COLLATION.get(charset)


def charset_name(collation_id: int | None) -> str | None:
    """The character set of a collation id ('utf8mb4'), None when unknown."""
    for name, ranges in COLLATION_IDS.items():
        if any(first <= (collation_id or -1) <= last for first, last in ranges):
            return name
    return None


# MySQL's latin1 table: cp1252 with the five undefined bytes mapped to C1 controls.
_MYSQL_LATIN1 = {b: (bytes([b]).decode("cp1252", errors="ignore") or chr(b)) for b in range(256)}
_MYSQL_LATIN1_TABLE = str.maketrans({chr(b): ch for b, ch in _MYSQL_LATIN1.items() if chr(b) != ch})


def _mysql_latin1(data: bytes) -> str:
    """MySQL's latin1 text (ASCII, the commonest case, needs no translation)."""
    if data.isascii():
        return data.decode("ascii")
    return data.decode("latin-1").translate(_MYSQL_LATIN1_TABLE)


def no_pad(collation_id: int | None) -> bool:
    """A NO PAD collation, whose comparisons keep trailing spaces: MariaDB's (id + 1024) and MySQL 8's
    utf8mb4_0900 family (255-323); the others are PAD SPACE."""
    return collation_id is not None and (1024 <= collation_id < 2048 or 255 <= collation_id <= 323)


#: The binary and case-sensitive collations (each character set's _bin, the _cs ones; MariaDB's NO PAD
#: variants are these + 1024): their text compares case and all.
_CASE_SENSITIVE = frozenset({84, 77, 80, 47, 74, 65, 91, 88, 50, 71, 89, 85, 79, 75, 86, 70, 66, 87, 58, 78, 83, 90,
                             68, 43, 53, 81, 46, 55, 62, 67, 61, 96, 98, 249, 63,
                             2, 20, 34, 42, 49, 52, 278, 309})


def case_sensitive(collation_id: int | None) -> bool:
    """A binary or case-sensitive collation (_bin, _cs): no case folding in its comparisons."""
    return collation_id is not None and (collation_id in _CASE_SENSITIVE or collation_id - 1024 in _CASE_SENSITIVE)


def compared_text(value: str, keep_spaces: bool = False, keep_case: bool = False) -> str:
    """Text as a PAD SPACE, case-insensitive collation compares it: without trailing spaces (kept with
    `keep_spaces`: NO PAD), case folded (not with `keep_case`: _bin, _cs). What the row keys of a
    rollback's conflict check and the row filters (--key, --where) compare."""
    if not keep_spaces:
        value = value.rstrip(" ")
    return value if keep_case else value.casefold()
