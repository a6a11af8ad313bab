"""Which core runs: the compiled extension modules (Cython, built by `pip install .` where a C compiler
exists) or the pure-Python reference. One home for the choice.

Every compiled module has a pure-Python twin that is the reference: the package imports the twin's
names and, through `load`, replaces them with the compiled ones when they are there. Setting the
environment variable BINLOG_SPEC_PURE=1 (before the package is imported) keeps the pure-Python code
everywhere; the differential tests run both and require identical values and errors.

    from binlog_spec import compiled
    _fast = compiled.load("binlog_spec.binlog._cstream")   # the module, or None
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType

#: Environment variable that forces the pure-Python core.
PURE_ENV = "BINLOG_SPEC_PURE"

#: Every compiled module of the package (setup.py builds each `src/binlog_spec/**/_c*.pyx`; a new one is
#: added here too): `describe` and `status(every=True)` report on all of them, and the tests require each
#: to be built and to give what its pure-Python twin gives.
MODULES: tuple[str, ...] = (
    # each is named after its pure-Python twin, in the same folder: `_cX.pyx` accelerates `X.py`
    # (tests/test_architecture.py holds the rule and its one exception, _cstream)
    "binlog_spec.binlog._cstream",          # kaitaistruct's KaitaiStream read API (spec.py rebinds the generated parsers' name)
    "binlog_spec.rows._cdecoder",           # row images to Python values (rows/decoder.py's rows generator; image_plan.py plans)
    "binlog_spec.binlog._cframing",         # the framing loop with its CRC32 check (binlog/framing.py walk_events, skip_events)
    "binlog_spec.analysis._ccollector",     # analyze's loop over the window (analysis/collector.py: Analyzer.feed of every event)
    "binlog_spec.output.base64._ctext",     # the base64 script's event text and its lane's loop (output/base64/text.py, lane.py)
    "binlog_spec.output._cevent_json",      # events --format jsonl's lane over the window (output/event_json.py render)
    "binlog_spec.output.sql._cstatements",  # SQL statements of row changes (output/sql/statements.py formatter)
    "binlog_spec.output.rollback._ccheck",  # a checked rollback's loop past its window (output/rollback/check.py ConflictCheck)
    "binlog_spec.output.sql._cwritable",    # the SQL script's exact pre-pass over the window (output/sql/writable.py problems)
    "binlog_spec.stream._cskipping",        # the loop that skips what the filters drop (stream/skipping.py's gate)
    "binlog_spec.output._crow_text",        # the rows command's JSON lines straight from the window (output/row_text.py row_json)
    "binlog_spec.spark._cvariant",          # row images to Spark VARIANT bytes and Arrow columns (spark/variant.py)
    "binlog_spec.spark._crecords",          # the Spark rows mode's loop over the window (spark/records.py _row_changes)
)

#: Compiled module name -> the module (loaded) or the reason it is not running.
_STATE: dict[str, ModuleType | str] = {}


def pure_requested() -> bool:
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def load(name: str) -> ModuleType | None:
    """The compiled module `name`, or None when it is not built, or the pure core is requested."""
    got = _STATE.get(name)
    if got is None:
        if pure_requested():
            got = f"{PURE_ENV} is set"
        else:
            try:
                got = importlib.import_module(name)
            except ImportError as exc:
                got = f"not built ({exc})"
        _STATE[name] = got
    return got if isinstance(got, ModuleType) else None


def status(every: bool = False) -> dict[str, str]:
    """Compiled module name -> "compiled" or why not, for every module `load` was asked for (and, with
    every=True, for every module of MODULES)."""
    if every:
        for name in MODULES:
            load(name)
    return {name: "compiled" if isinstance(got, ModuleType) else got for name, got in sorted(_STATE.items())}


def describe() -> str:
    """One line for `binlog-spec --version`: which core is running (every module of MODULES), and the
    compiled CRC32 (ISA-L or zlib: binlog/_crc32.h)."""
    st = status(every=True)
    if st and all(v == "compiled" for v in st.values()):
        crc = getattr(_STATE.get("binlog_spec.binlog._cframing"), "CRC32", "?")     # binlog/_crc32.h's choice
        return "compiled core (" + ", ".join(n.rpartition(".")[2] for n in st) + f"), CRC32 by {crc}"
    if not st:
        return "pure-Python core"
    missing = [f"{n.rpartition('.')[2]}: {v}" for n, v in st.items() if v != "compiled"]
    return "pure-Python core" + (f" ({'; '.join(missing)})" if missing else "")
