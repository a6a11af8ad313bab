"""Shared test helpers: where the corpus and the fixtures are."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (ROOT.parent / "shared" / "corpus").resolve()
SEEDS = (ROOT.parent / "shared" / "seeds").resolve()
FIXTURES = ROOT / "fixtures"


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


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.fail(f"the shared corpus is missing at {CORPUS}")
    return CORPUS
