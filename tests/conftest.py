"""Shared test helpers: where the corpus and the fixtures are."""
from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BINLOG_SPEC_SHARED", ROOT.parent / "shared")).resolve()
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
if not (CORPUS / "MANIFEST.tsv").is_file() or not any(SEEDS.glob("001_*.txt")):
    raise SystemExit(f"tests need the shared corpus and seeds beside the project, at {SHARED} "
                     "(or set BINLOG_SPEC_SHARED)")
FIXTURES = ROOT / "fixtures"


def collect(path, **options):
    """(events, error) for a file: every event delivered before the error, if any."""
    import binlog_spec
    events, error = [], None
    try:
        for ev in binlog_spec.open(path, binlog_spec.ReadOptions(**options)):
            events.append(ev)
    except binlog_spec.BinlogError as exc:
        error = exc
    return events, error


def manifest_rows() -> list[dict[str, str]]:
    lines = (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    names = lines[0].split("\t")
    return [dict(zip(names, line.split("\t"))) for line in lines[1:] if line.strip()]


def expected_counts(row: dict[str, str]) -> dict[int, int]:
    """`NAME(code)xN,...` -> {code: N}."""
    return {int(code): int(n) for code, n in re.findall(r"\((\d+)\)x(\d+)", row["event_type_counts"])}


def trailing_fault(row: dict[str, str]) -> int | None:
    m = re.search(r"WALK:trailing \d+ bytes at (\d+)", row["notes"])
    return int(m.group(1)) if m else None


def split_sequence(src, folder, cut: int) -> list[str]:
    """A binlog sequence of two files made of `src` cut at `cut` (a transaction boundary): its bytes up to
    there, then, as a binlog of its own (positions renumbered), the rest (`sql --output-format binlog
    --start-position`). Named `<src name>.000001` and `.000002` in `folder`: the CREATE TABLEs of the
    first file name the rows of the second."""
    from binlog_spec import cli
    import io
    base = Path(src).name.rsplit(".", 1)[0]
    first, second = Path(folder) / f"{base}.000001", Path(folder) / f"{base}.000002"
    first.write_bytes(Path(src).read_bytes()[:cut])
    err = io.StringIO()
    code = cli.main(["sql", "--output-format", "binlog", "--start-position", str(cut), "-o", str(second), str(src)],
                    out=io.StringIO(), err=err)
    assert code == 0, err.getvalue()
    return [str(first), str(second)]
