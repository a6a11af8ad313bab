"""Seed inputs for the fuzzers: the corpus and fixture binlogs up to MAX_SEED_BYTES (small files
mutate fast and reach every layer), skipping gzip files and the text beside them.

    python tests/fuzz/seeds.py DIR     copies them into DIR (a fuzzer's working corpus, outside the repo)
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import CORPUS, FIXTURES  # noqa: E402

MAX_SEED_BYTES = 128 * 1024     # the fixtures of every column type are 73-109 KiB
_MAGIC = b"\xfebin"


def seed_files(max_bytes: int = MAX_SEED_BYTES) -> list[Path]:
    """Binlogs (by their magic) under the corpus and the fixtures, smallest first, sorted by path
    within a size for a stable order."""
    found = []
    for root in (CORPUS, FIXTURES):
        for p in root.rglob("*"):
            if p.is_file() and 4 < p.stat().st_size <= max_bytes:
                with p.open("rb") as f:
                    if f.read(4) == _MAGIC:
                        found.append(p)
    return sorted(found, key=lambda p: (p.stat().st_size, str(p)))


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    files = seed_files()
    for k, p in enumerate(files):
        dest = out / f"seed-{k:03d}-{p.parent.name}-{p.name}"
        if not dest.exists():
            shutil.copyfile(p, dest)
    print(f"{len(files)} seeds in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
